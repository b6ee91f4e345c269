"""QL101 and QL102 in passes run only on graphs their caller has already stripped with its own
loop (SHARK's importer: make_fx, its nested strip loop, then the f16 and GPTQ passes, which
match and insert packets). Loud look-alikes: a pass also run before the strip, on another
graph, on the graph bound anew, after a strip under a condition or a loop that strips only
some nodes, by a caller that does not strip, and a public pass named in another module."""

from __future__ import annotations

import textwrap
from pathlib import Path

PASS = """
    import torch


    def upcast(gm):
        for node in gm.graph.nodes:
            if node.target == torch.ops.aten.mul:
                with gm.graph.inserting_after(node):
                    new = gm.graph.call_function(torch.ops.aten._to_copy, (node,), {"dtype": torch.float16})
                node.replace_all_uses_with(new)
                new.args = (node,)
"""

# The matcher's and the insertion's rows (1-based) in PASS.
MATCH, INSERT = 7, 9

LOWER = """

    def lower(model, x):
        gm = make_fx(model)(x)

        def strip_overloads(g):
            for node in g.graph.nodes:
                if isinstance(node.target, torch._ops.OpOverload):
                    node.target = node.target.overloadpacket
            g.recompile()

{body}
        return torch.jit.script(gm)
"""


def _rows(
    tmp_path: Path, body: str, extra: dict[str, str] | None = None, text: str = PASS, lower: str = LOWER
) -> list[tuple[int, str]]:
    from tests.conftest import check_file, package_repository

    modules = {name.removesuffix(".py"): textwrap.dedent(other) for name, other in (extra or {}).items()}
    module = textwrap.dedent(text + lower.replace("{body}", textwrap.indent(textwrap.dedent(body), " " * 8)))
    root = package_repository(tmp_path, importer=module, **modules)
    result = check_file(root / "pkg" / "importer.py", ("QL101", "QL102"))
    return sorted((d.range.start.row, d.code) for d in result.diagnostics)


LOUD = [(MATCH, "QL101"), (INSERT, "QL102")]


# -- quiet: the pass sees only the stripped graph ------------------------------------------------


def test_pass_after_the_callers_strip_is_quiet(tmp_path):
    assert _rows(tmp_path, "strip_overloads(gm)\nupcast(gm)\n") == []


def test_pass_after_the_strip_and_a_half_is_quiet(tmp_path):
    body = "strip_overloads(gm)\nif HALF:\n    gm = gm.half()\n    upcast(gm)\n    gm.recompile()\n"
    assert _rows(tmp_path, body) == []


# -- loud: the pass may see overloads ------------------------------------------------------------


def test_no_strip_is_loud(tmp_path):
    assert _rows(tmp_path, "upcast(gm)\n") == LOUD


def test_pass_also_run_before_the_strip_is_loud(tmp_path):
    # The insertion of the call before the strip is stripped next (`stripped_later`): only the
    # matcher, which that call runs on overloads, is reported.
    assert _rows(tmp_path, "upcast(gm)\nstrip_overloads(gm)\nupcast(gm)\n") == [(MATCH, "QL101")]
    # Something reading the graph between that call and the strip leaves the insertion reported.
    (tmp_path / "read").mkdir()
    assert _rows(tmp_path / "read", "upcast(gm)\nsave(gm)\nstrip_overloads(gm)\nupcast(gm)\n") == LOUD


def test_pass_on_another_graph_is_loud(tmp_path):
    assert _rows(tmp_path, "strip_overloads(gm)\nupcast(make_fx(model)(x))\n") == LOUD
    (tmp_path / "named").mkdir()
    assert _rows(tmp_path / "named", "strip_overloads(gm)\nother = make_fx(model)(x)\nupcast(other)\n") == LOUD


def test_graph_bound_anew_after_the_strip_is_loud(tmp_path):
    assert _rows(tmp_path, "strip_overloads(gm)\ngm = make_fx(model)(x)\nupcast(gm)\n") == LOUD


def test_graph_bound_anew_later_in_a_loop_is_loud(tmp_path):
    body = "strip_overloads(gm)\nwhile MODELS:\n    upcast(gm)\n    gm = make_fx(MODELS.pop())(x)\n"
    assert _rows(tmp_path, body) == LOUD


def test_strip_under_a_condition_is_loud(tmp_path):
    assert _rows(tmp_path, "if FLAG:\n    strip_overloads(gm)\nupcast(gm)\n") == LOUD


def test_strip_of_some_nodes_only_is_loud(tmp_path):
    partial = LOWER.replace("isinstance(node.target, torch._ops.OpOverload)", "node.target in KEEP")
    assert _rows(tmp_path, "strip_overloads(gm)\nupcast(gm)\n", lower=partial) == LOUD


def test_pass_also_run_by_a_caller_that_does_not_strip_is_loud(tmp_path):
    # QL101 takes what a normaliser calls as normalised wherever else it is called (the
    # project-wide policy of `project_normalisers`, as for torch's `strip_overloads`); the
    # insertion, read in its own module, stays reported.
    text = PASS + "\n\n    def quick(gm):\n        upcast(gm)\n"
    assert (INSERT, "QL102") in _rows(tmp_path, "strip_overloads(gm)\nupcast(gm)\n", text=text)


def test_public_pass_named_in_another_module_is_loud(tmp_path):
    other = "from pkg.importer import upcast\n\n\ndef run(gm):\n    upcast(gm)\n"
    rows = _rows(tmp_path, "strip_overloads(gm)\nupcast(gm)\n", {"other.py": other})
    assert (INSERT, "QL102") in rows


# -- torch's own strip, and a pass whose result rebinds the graph (ByteIR's torch-frontend) -------

TORCH_LOWER = """

    from {origin} import strip_overloads


    def lower(model, x):
        gm = make_fx(model)(x)
{body}
        return torch.jit.script(gm)
"""

# The project's own function of that name, which strips nothing.
OWN_LOWER = """

    def strip_overloads(g):
        g.recompile()


    def lower(model, x):
        gm = make_fx(model)(x)
{body}
        return torch.jit.script(gm)
"""


def test_pass_after_torchs_strip_is_quiet(tmp_path):
    for origin in ("torch._functorch.compile_utils", "functorch.compile"):
        root = tmp_path / origin
        root.mkdir()
        lower = TORCH_LOWER.replace("{origin}", origin)
        assert _rows(root, "strip_overloads(gm)\nupcast(gm)\n", lower=lower) == [], origin


def test_pass_whose_result_rebinds_the_stripped_graph_is_quiet(tmp_path):
    assert _rows(tmp_path, "strip_overloads(gm)\ngm = upcast(gm)\n") == []
    (tmp_path / "torch").mkdir()
    lower = TORCH_LOWER.replace("{origin}", "torch._functorch.compile_utils")
    assert _rows(tmp_path / "torch", "strip_overloads(gm)\ngm = upcast(gm)\n", lower=lower) == []


def test_pass_run_again_on_what_it_returned_is_loud(tmp_path):
    assert (INSERT, "QL102") in _rows(tmp_path, "strip_overloads(gm)\ngm = upcast(gm)\nupcast(gm)\n")


def test_projects_own_function_named_strip_overloads_is_loud(tmp_path):
    assert (INSERT, "QL102") in _rows(tmp_path, "strip_overloads(gm)\nupcast(gm)\n", lower=OWN_LOWER)


def test_torchs_strip_under_a_condition_is_loud(tmp_path):
    lower = TORCH_LOWER.replace("{origin}", "torch._functorch.compile_utils")
    assert (INSERT, "QL102") in _rows(tmp_path, "if FLAG:\n    strip_overloads(gm)\nupcast(gm)\n", lower=lower)


def test_pass_before_torchs_strip_is_loud(tmp_path):
    lower = TORCH_LOWER.replace("{origin}", "torch._functorch.compile_utils")
    assert (INSERT, "QL102") in _rows(tmp_path, "gm = upcast(gm)\nstrip_overloads(gm)\n", lower=lower)

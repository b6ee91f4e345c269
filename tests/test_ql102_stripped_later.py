"""QL102 and a pass whose every caller strips the graph's overloads next (the Gaudi bridge's
`wrap_random_ops`, run on a copy that its JIT lowering then hands to `strip_overloads`):
every target becomes a packet, so an inserted packet is what the graph carries anyway. Loud
look-alikes: the strip on another graph, under a condition, after the graph is handed on or
after a pass keyed on the op's overload, and a public pass another module may call."""

from __future__ import annotations

import textwrap
from pathlib import Path

PASS = """
    import torch

    def add_seed(gm):
        with gm.graph.inserting_before():
            seed = gm.graph.placeholder("seed")
        gm.graph.call_function(torch.ops.hpu.seed_generator, (seed,), {})
"""

BLIND = """

    def drop_outputs(gm):
        for node in gm.graph.nodes:
            if node.op == "output":
                gm.graph.erase_node(node)
"""

# The insertion's row (0-based) in PASS.
ROW = 7

KEYED = """

    def undo_seed(gm):
        for node in gm.graph.nodes:
            if node.target == torch.ops.hpu.seed_generator.default:
                gm.graph.erase_node(node)
"""


def _lower(body: str) -> str:
    return (
        "\n\n    def lower(module):\n"
        "        import copy\n\n"
        "        from torch._functorch.compile_utils import strip_overloads\n\n"
        "        gm = copy.deepcopy(module)\n" + textwrap.indent(textwrap.dedent(body), " " * 8)
    )


def _rows(tmp_path: Path, text: str, extra: dict[str, str] | None = None) -> list[int]:
    """QL102's rows in `pkg/passes.py` of a one-package repository, `extra` its other files."""
    from tests.conftest import check_file, package_repository

    modules = {name.removesuffix(".py"): textwrap.dedent(other) for name, other in (extra or {}).items()}
    root = package_repository(tmp_path, passes=textwrap.dedent(text), **modules)
    return [d.range.start.row for d in check_file(root / "pkg" / "passes.py", ("QL102",)).diagnostics]


# -- quiet: the graph is stripped next ----------------------------------------------------------


def test_pass_stripped_right_after_is_quiet(tmp_path):
    assert _rows(tmp_path, PASS + _lower("add_seed(gm)\nstrip_overloads(gm)\nreturn gm\n")) == []


def test_strip_in_a_with_after_a_blind_pass_is_quiet(tmp_path):
    body = "add_seed(gm)\ndrop_outputs(gm)\nwith torch.no_grad():\n    strip_overloads(gm)\nreturn gm\n"
    assert _rows(tmp_path, PASS + BLIND + _lower(body)) == []


def test_private_pass_called_only_before_the_strip_is_quiet(tmp_path):
    text = PASS.replace("add_seed", "_add_seed") + _lower("_add_seed(gm)\nstrip_overloads(gm)\n")
    other = "from pkg.passes import _add_seed\n"  # a private name: not another caller's
    assert _rows(tmp_path, text, {"other.py": other}) == []


def test_module_named_like_the_pass_in_a_longer_word_is_quiet(tmp_path):
    other = "def get_add_seed_enabled():\n    return True\n"
    assert _rows(tmp_path, PASS + _lower("add_seed(gm)\nstrip_overloads(gm)\n"), {"other.py": other}) == []


def test_insertion_through_a_local_bound_to_the_graph_is_quiet(tmp_path):
    aliased = PASS.replace("    gm.graph.call_function(", "    graph = gm.graph\n        graph.call_function(")
    assert _rows(tmp_path, aliased + _lower("add_seed(gm)\nstrip_overloads(gm)\n")) == []
    # The same local bound twice may hold another graph when the insertion runs.
    rebound = aliased.replace("graph = gm.graph\n", "graph = gm.graph\n        graph = make()\n")
    (tmp_path / "again").mkdir()
    assert _rows(tmp_path / "again", rebound + _lower("add_seed(gm)\nstrip_overloads(gm)\n")) == [ROW + 2]


# -- loud: the graph may carry overloads when the packet is read --------------------------------


def test_pass_with_no_strip_is_loud(tmp_path):
    assert _rows(tmp_path, PASS + _lower("add_seed(gm)\nreturn gm\n")) == [ROW]


def test_strip_of_another_graph_is_loud(tmp_path):
    body = "add_seed(gm)\nother = copy.deepcopy(gm)\nstrip_overloads(other)\nreturn gm\n"
    assert _rows(tmp_path, PASS + _lower(body)) == [ROW]


def test_strip_under_a_condition_is_loud(tmp_path):
    body = "add_seed(gm)\nif module.training:\n    strip_overloads(gm)\nreturn gm\n"
    assert _rows(tmp_path, PASS + _lower(body)) == [ROW]


# A blind pass whose docstring shows the op (Gaudi's `remove_duplicated_outputs` prints a graph
# of `add_.Tensor` nodes in its own), and the look-alike that keys on the op's printed name.
DOCUMENTED = BLIND.replace(
    "    def drop_outputs(gm):\n",
    '    def drop_outputs(gm):\n        """Drops outputs: `seed_generator.default(seed)` stays."""\n\n'
    '        class Kept:\n            """Nodes such as `seed_generator.default` are kept."""\n\n',
)


def test_blind_pass_naming_the_op_only_in_docstrings_is_quiet(tmp_path):
    body = "add_seed(gm)\ndrop_outputs(gm)\nstrip_overloads(gm)\n"
    assert _rows(tmp_path, PASS + DOCUMENTED + _lower(body)) == []


def test_pass_keyed_on_the_op_name_string_is_loud(tmp_path):
    keyed = DOCUMENTED.replace('node.op == "output"', '"seed_generator.default" in str(node.target)')
    body = "add_seed(gm)\ndrop_outputs(gm)\nstrip_overloads(gm)\n"
    assert _rows(tmp_path, PASS + keyed + _lower(body)) == [ROW]
    (tmp_path / "kept").mkdir()  # a string first in a body, but a statement of a loop's
    looped = BLIND.replace('if node.op == "output":', '"seed_generator.default"\n            if node.op == "output":')
    assert _rows(tmp_path / "kept", PASS + looped + _lower(body)) == [ROW]


def test_graph_handed_on_before_the_strip_is_loud(tmp_path):
    body = "add_seed(gm)\nmodule.lowered = gm\nstrip_overloads(gm)\n"
    assert _rows(tmp_path, PASS + _lower(body)) == [ROW]


def test_pass_keyed_on_the_overload_before_the_strip_is_loud(tmp_path):
    body = "add_seed(gm)\nundo_seed(gm)\nstrip_overloads(gm)\n"
    assert _rows(tmp_path, PASS + KEYED + _lower(body)) == [ROW]


def test_pass_also_called_without_a_strip_is_loud(tmp_path):
    text = PASS + _lower("add_seed(gm)\nstrip_overloads(gm)\n") + "\n\n    def other(gm):\n        add_seed(gm)\n"
    assert _rows(tmp_path, text) == [ROW]


def test_public_pass_named_in_another_module_is_loud(tmp_path):
    other = "from pkg import passes\n\ndef run(gm):\n    passes.add_seed(gm)\n"
    assert _rows(tmp_path, PASS + _lower("add_seed(gm)\nstrip_overloads(gm)\n"), {"other.py": other}) == [ROW]


def test_insertion_into_another_graph_is_loud(tmp_path):
    text = PASS.replace("gm.graph.call_function", "SHARED.graph.call_function") + _lower(
        "add_seed(gm)\nstrip_overloads(gm)\n"
    )
    assert _rows(tmp_path, text) == [ROW]


def test_strip_of_the_project_own_is_loud(tmp_path):
    text = PASS + _lower("add_seed(gm)\nstrip_overloads(gm)\n").replace(
        "from torch._functorch.compile_utils import strip_overloads", "from pkg.util import strip_overloads"
    )
    assert _rows(tmp_path, text, {"util.py": "def strip_overloads(gm):\n    return gm\n"}) == [ROW]


def test_strip_imported_by_the_module_is_quiet(tmp_path):
    text = "from functorch.compile import strip_overloads\n" + textwrap.dedent(
        PASS + _lower("add_seed(gm)\nstrip_overloads(gm)\n")
    ).replace("    from torch._functorch.compile_utils import strip_overloads\n", "")
    assert _rows(tmp_path, text) == []

"""QL101 and a packet a subgraph rewrite puts into graphs when its pattern and replacement are
functions of a class body read through the class (SGLang's NPU torch.compile backend:
`replace_pattern(gm, Fuse.pattern, Fuse.replacement)`, and a later pass on the same graph
matches the fused packet). Quiet: the class in the rewriting module, a `staticmethod`, the class
imported from another module of the project, the matcher in another module, the rewrite in a
module importing the matcher's class. Loud look-alikes:
a replacement calling the overload, methods taking `self` (read through an instance, torch's
tracer refuses a bound method; read through the class, `self` is a placeholder nothing
matches), a class attribute bound anew, a name the rewriting function binds itself, and a
matcher of a graph it exports (the rewrite's packet is in other graphs). QL102
reads a class's replacement the same way."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.conftest import check_file, lint, package_repository

FUSE = """
    import torch


    class Fuse:
        def pattern(x, r, w, s, o):
            out = torch.ops.npu.npu_add_rms_norm(x, r, w, 1e-6)
            return torch.ops.npu.npu_quantize(out[0], s, o)

        def replacement(x, r, w, s, o):
            return torch.ops.npu.npu_add_rms_norm_quant(x, r, w, 1.0 / s, o)[0]
"""

PASSES = """

    def erase(gm):
        for node in list(gm.graph.nodes):
            if node.target == torch.ops.npu.npu_add_rms_norm_quant:
                gm.graph.erase_node(node)


    def backend(gm, example_inputs):
        torch.fx.replace_pattern(gm, Fuse.pattern, Fuse.replacement)
        erase(gm)
        return gm
"""

ONE_MODULE = FUSE + PASSES


def _rows(tmp_path: Path, checked: str = "passes", **modules: str) -> list[int]:
    root = package_repository(tmp_path, **{name: textwrap.dedent(text) for name, text in modules.items()})
    result = check_file(root / "pkg" / f"{checked}.py", ("QL101",))
    return [d.range.start.row for d in result.diagnostics]


def _row(text: str) -> int:
    """The matcher's row (1-based) in `text`."""
    lines = textwrap.dedent(text).splitlines()
    return next(i for i, line in enumerate(lines, 1) if "node.target ==" in line)


def _contrast(tmp_path: Path, wrong: str, right: str = ONE_MODULE) -> None:
    """`right` is quiet, its look-alike `wrong` loud."""
    assert _rows(tmp_path / "right", passes=right) == []
    assert _rows(tmp_path / "wrong", passes=wrong) == [_row(wrong)]


# -- quiet: the rewrite put the packet there -----------------------------------------------------


def test_class_functions_in_the_rewriting_module_are_quiet(tmp_path):
    assert _rows(tmp_path, passes=ONE_MODULE) == []


def test_static_methods_are_quiet(tmp_path):
    text = ONE_MODULE.replace("    def pattern(", "    @staticmethod\n        def pattern(").replace(
        "    def replacement(", "    @staticmethod\n        def replacement("
    )
    assert _rows(tmp_path, passes=text) == []


def test_class_imported_from_another_module_is_quiet(tmp_path):
    passes = "\n    import torch\n\n    from pkg.fusions import Fuse\n" + PASSES
    root = package_repository(tmp_path, fusions=textwrap.dedent(FUSE), passes=textwrap.dedent(passes))
    result = check_file(root / "pkg" / "passes.py", ("QL101",))
    assert result.diagnostics == []
    # The verdict depends on the module holding the class.
    assert any(p.endswith("fusions.py") for p in result.dependencies)


def test_class_imported_relatively_is_quiet(tmp_path):
    passes = "\n    import torch\n\n    from .fusions import Fuse\n" + PASSES
    assert _rows(tmp_path, fusions=FUSE, passes=passes) == []


def test_matcher_in_another_module_is_quiet(tmp_path):
    matcher = "\n    import torch\n" + PASSES.split("def backend")[0]
    rewrite = FUSE + "\n\n    def backend(gm):\n        torch.fx.replace_pattern(gm, Fuse.pattern, Fuse.replacement)\n"
    assert _rows(tmp_path, "erase", fusions=rewrite, erase=matcher) == []


BACKEND = """
    import torch

    from pkg.passes import Fuse, erase


    def backend(gm, example_inputs):
        torch.fx.replace_pattern(gm, Fuse.pattern, Fuse.replacement)
        erase(gm)
        return gm
"""


def test_rewrite_in_a_module_importing_the_matchers_class_is_quiet(tmp_path):
    # SGLang's layout: the fusion's class beside the pass matching its packet, the rewrite in
    # the backend that imports both (it spells no packet).
    matcher = ONE_MODULE.split("def backend")[0]
    root = package_repository(tmp_path, passes=textwrap.dedent(matcher), backend=textwrap.dedent(BACKEND))
    result = check_file(root / "pkg" / "passes.py", ("QL101",))
    assert result.diagnostics == []
    assert any(p.endswith("backend.py") for p in result.dependencies)


def test_rewrite_in_an_importing_module_through_an_instance_is_loud(tmp_path):
    matcher = ONE_MODULE.split("def backend")[0]
    backend = BACKEND.replace("(gm, Fuse.pattern, Fuse.replacement)", "(gm, Fuse().pattern, Fuse().replacement)")
    assert _rows(tmp_path, passes=matcher, backend=backend) == [_row(matcher)]
    (tmp_path / "none").mkdir()
    assert _rows(tmp_path / "none", passes=matcher, backend=BACKEND.replace("replace_pattern", "rewrite")) == [
        _row(matcher)
    ]


# -- loud: what the rewrite puts there is not the packet -----------------------------------------


def test_replacement_calling_the_overload_is_loud(tmp_path):
    _contrast(tmp_path, ONE_MODULE.replace("npu_add_rms_norm_quant(x, r", "npu_add_rms_norm_quant.default(x, r"))


def test_methods_taking_self_read_through_an_instance_are_loud(tmp_path):
    # torch.fx's tracer asserts a FunctionType: a bound method is refused, nothing is inserted.
    text = ONE_MODULE.replace("(x, r, w, s, o):", "(self, x, r, w, s, o):")
    _contrast(
        tmp_path,
        text.replace("(gm, Fuse.pattern, Fuse.replacement)", "(gm, f.pattern, f.replacement)").replace(
            "    torch.fx.replace_pattern(", "    f = Fuse()\n        torch.fx.replace_pattern("
        ),
    )
    (tmp_path / "built").mkdir()
    built = text.replace("(gm, Fuse.pattern, Fuse.replacement)", "(gm, Fuse().pattern, Fuse().replacement)")
    assert _rows(tmp_path / "built", passes=built) == [_row(built)]


def test_methods_taking_self_read_through_the_class_are_loud(tmp_path):
    # Traced with `self` as a placeholder the graph's nodes never match (torch raises KeyError).
    _contrast(tmp_path, ONE_MODULE.replace("(x, r, w, s, o):", "(self, x, r, w, s, o):"))


def test_class_methods_are_loud(tmp_path):
    text = ONE_MODULE.replace("    def pattern(x,", "    @classmethod\n        def pattern(cls, x,").replace(
        "    def replacement(x,", "    @classmethod\n        def replacement(cls, x,"
    )
    _contrast(tmp_path, text)


def test_replacement_bound_anew_in_the_class_is_loud(tmp_path):
    text = ONE_MODULE.replace("1.0 / s, o)[0]\n", "1.0 / s, o)[0]\n\n        replacement = staticmethod(torch.relu)\n")
    _contrast(tmp_path, text)


def test_class_name_bound_by_the_rewriting_function_is_loud(tmp_path):
    _contrast(tmp_path, ONE_MODULE.replace("def backend(gm, example_inputs):", "def backend(gm, Fuse):"))


def test_class_of_no_module_of_the_project_is_loud(tmp_path):
    passes = "\n    import torch\n\n    from vendor.fusions import Fuse\n" + PASSES
    (tmp_path / "right").mkdir()
    assert _rows(tmp_path / "right", fusions=FUSE, passes=passes.replace("vendor.", "pkg.")) == []
    (tmp_path / "wrong").mkdir()
    assert _rows(tmp_path / "wrong", fusions=FUSE, passes=passes) == [_row(passes)]


EXPORTED = """

    def count(model, args):
        graph = torch.export.export(model, args).graph
        return sum(1 for node in graph.nodes if node.target == torch.ops.npu.npu_add_rms_norm_quant)
"""


MODULE_FUNCTIONS = """
    import torch


    def pattern(x, r, w, s, o):
        out = torch.ops.npu.npu_add_rms_norm(x, r, w, 1e-6)
        return torch.ops.npu.npu_quantize(out[0], s, o)


    def replacement(x, r, w, s, o):
        return torch.ops.npu.npu_add_rms_norm_quant(x, r, w, 1.0 / s, o)[0]
"""


def test_matcher_of_an_exported_graph_is_loud(tmp_path):
    # The rewrite put the packet into the backend's graphs; an exported graph holds overloads.
    text = ONE_MODULE + EXPORTED
    lines = textwrap.dedent(text).splitlines()
    row = next(i for i, line in enumerate(lines, 1) if "graph.nodes if node.target ==" in line)
    for name in ("cls", "module", "handed"):
        (tmp_path / name).mkdir()
    assert _rows(tmp_path / "cls", passes=text) == [row]
    # The same with the rewrite's functions at module level (ByteIR's spelling).
    module = MODULE_FUNCTIONS + PASSES.replace("Fuse.pattern, Fuse.replacement", "pattern, replacement") + EXPORTED
    lines = textwrap.dedent(module).splitlines()
    row = next(i for i, line in enumerate(lines, 1) if "graph.nodes if node.target ==" in line)
    assert _rows(tmp_path / "module", passes=module) == [row]
    # Handed a graph: quiet, the packet may be the rewrite's.
    assert (
        _rows(tmp_path / "handed", passes=text.replace("torch.export.export(model, args).graph", "model.graph")) == []
    )


# -- QL102: a class's replacement spliced into a graph of overloads ------------------------------

OVERLOAD_REWRITE = """
    import torch


    class Relu6:
        def pattern(x):
            return torch.ops.aten.relu.default(torch.ops.aten.hardtanh.default(x, 0.0, 6.0))

        def replacement(x):
            return torch.ops.aten.hardtanh(x, 0.0, 6.0)


    def drop_redundant_relu(gm):
        torch.fx.replace_pattern(gm, Relu6.pattern, Relu6.replacement)
        return gm
"""


def test_ql102_reports_a_class_replacements_packet_among_overloads():
    found = lint(OVERLOAD_REWRITE, select=("QL102",))
    assert [d.range.start.row for d in found] == [10]
    # Through an instance, torch inserts nothing: not reported.
    quiet = OVERLOAD_REWRITE.replace(
        "(gm, Relu6.pattern, Relu6.replacement)", "(gm, Relu6().pattern, Relu6().replacement)"
    )
    assert lint(quiet, select=("QL102",)) == []

"""Names a function binds by importing inside its body resolve as module-level imports do.

Libraries that keep torch optional import it in the function that needs it (optimum-intel's
`export_pytorch` calls `torch.export.export_for_training` after `import torch` in its body):
those uses were unresolved, so QL101/QL102/QL401/QL402 said nothing there.
"""

from __future__ import annotations

import textwrap

from tests.conftest import check_file, lint, rows_of, write_package


def codes(src: str, select: tuple[str, ...]) -> list[tuple[str, int]]:
    return sorted((d.code, d.range.start.row) for d in lint(textwrap.dedent(src), select=select))


def test_removed_capture_api_after_a_local_import_is_reported():
    src = """
        def export(model, args):
            import torch
            with torch.no_grad():
                return torch.export.export_for_training(model, args)
        """
    assert codes(src, ("QL402",)) == [("QL402", 5)]


def test_removed_capture_api_through_a_local_alias_is_reported():
    src = """
        def export(model, args):
            import torch.export as te
            return te.export_for_training(model, args)
        """
    assert codes(src, ("QL402",)) == [("QL402", 4)]


def test_moved_pt2e_helper_after_a_local_import_is_reported():
    src = """
        def to_eval(model):
            import torch
            torch.ao.quantization.move_exported_model_to_eval(model)
        """
    assert codes(src, ("QL401",)) == [("QL401", 4)]


def test_packet_matcher_after_a_local_from_import_is_reported():
    src = """
        def fold(gm):
            from torch.ops import aten
            for n in gm.graph.nodes:
                if n.target == aten.relu:
                    n.replace_all_uses_with(n.args[0])
        """
    assert codes(src, ("QL101",)) == [("QL101", 5)]


def test_packet_insertion_after_a_local_import_is_reported():
    src = """
        def add_relu(gm, node):
            import torch
            with gm.graph.inserting_after(node):
                gm.graph.call_function(torch.ops.aten.relu, (node,))
        """
    assert codes(src, ("QL102",)) == [("QL102", 5)]


def test_working_apis_after_a_local_import_stay_quiet():
    src = """
        def export(model, args, gm):
            import torch
            ep = torch.export.export(model, args)
            y = torch.ops.aten.relu(args[0])
            for n in gm.graph.nodes:
                if n.target == torch.ops.aten.relu.default:
                    gm.graph.call_function(torch.ops.aten.relu.default, (n,))
            return ep, y
        """
    assert codes(src, ("QL101", "QL102", "QL401", "QL402")) == []


def test_a_local_import_of_another_module_under_torchs_name_stays_quiet():
    src = """
        def export(model, args):
            import mylib as torch
            return torch.export.export_for_training(model, args)
        """
    assert codes(src, ("QL402",)) == []


def test_a_probe_around_the_use_stays_quiet():
    src = """
        def export(model, args):
            import torch
            if hasattr(torch.export, "export_for_training"):
                return torch.export.export_for_training(model, args)
            return torch.export.export(model, args)
        """
    assert codes(src, ("QL402",)) == []


def test_a_local_import_does_not_leak_into_another_function():
    src = """
        def a():
            import torch
            return torch

        def b(model, args):
            return torch.export.export_for_training(model, args)
        """
    assert codes(src, ("QL402",)) == []


def test_moved_pt2e_module_through_a_local_alias_is_reported():
    src = """
        def to_eval(model):
            import torch.ao.quantization as tq
            tq.move_exported_model_to_eval(model)
        """
    assert codes(src, ("QL401",)) == [("QL401", 4)]


_LAZY_HELPER = """
def prepare(model, quantizer, args):
    from torch.export import export
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    return prepare_pt2e(export(model, args).module(), quantizer)
"""

_CALLER = """
import torch


def main(quantizer, args):
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5)){mode}
    from pkg.tools import prepare

    return prepare(model, quantizer, args)
"""


def _helper_findings(tmp_path, mode: str) -> list[int]:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write_package(root, "pkg", tools=_LAZY_HELPER, run=_CALLER.format(mode=mode))
    return rows_of(check_file(root / "pkg" / "tools.py", ("QL201",)).diagnostics)


def test_a_lazy_capture_is_vouched_for_by_callers_that_import_it_lazily(tmp_path):
    # optimum-habana: the helper imports the capture in its body, its callers import the
    # helper in theirs after `eval()`; a local import read as a variable lost those callers.
    assert _helper_findings(tmp_path, ".eval()") == []


def test_a_lazy_capture_of_a_train_mode_model_is_reported(tmp_path):
    assert _helper_findings(tmp_path, "") == [6]


# A function with no parameter and no local assignment binds nothing but its imports: its
# locals are an empty dictionary, which the resolver took for none given (`local or {}`), so
# the body's imports were lost and every name read through them was unknown.
_EMPTY_LOCALS_LOUD = {
    "QL101": (
        """
        def is_relu():
            from torch.ops import aten
            return NODE.target == aten.relu
        """,
        4,
    ),
    "QL102": (
        """
        def add_relu():
            import torch
            with GM.graph.inserting_after(NODE):
                GM.graph.call_function(torch.ops.aten.relu, (NODE,))
        """,
        5,
    ),
    "QL401": (
        """
        def to_eval():
            import torch
            torch.ao.quantization.move_exported_model_to_eval(MODEL)
        """,
        4,
    ),
    "QL402": (
        """
        def export():
            import torch
            with torch.no_grad():
                return torch.export.export_for_training(MODEL, ARGS)
        """,
        5,
    ),
}


def test_imports_of_a_function_binding_nothing_else_are_read():
    for code, (src, row) in _EMPTY_LOCALS_LOUD.items():
        assert codes(src, (code,)) == [(code, row)], code


def test_working_apis_in_a_function_binding_nothing_else_stay_quiet():
    src = """
        def export():
            import torch
            from torch.ops import aten
            ep = torch.export.export(MODEL, ARGS)
            with GM.graph.inserting_after(NODE):
                GM.graph.call_function(aten.relu.default, (NODE,))
            return ep, NODE.target == torch.ops.aten.relu.default
        """
    assert codes(src, ("QL101", "QL102", "QL402")) == []


def test_another_functions_import_stays_out_of_a_function_binding_nothing():
    src = """
        def a():
            import torch
            from torch.ops import aten
            return torch, aten

        def b():
            with GM.graph.inserting_after(NODE):
                GM.graph.call_function(torch.ops.aten.relu, (NODE,))
            return NODE.target == aten.relu, torch.export.export_for_training(MODEL, ARGS)
        """
    assert codes(src, ("QL101", "QL102", "QL402")) == []

"""QL101: flag packets where they meet node targets, and nowhere else."""

from __future__ import annotations

import pytest

from qlint.analysis.project_files import LISTING_PREFIX, parse_listing_dependency
from qlint.diagnostic import Applicability
from qlint.engine import check_source
from tests.conftest import codes, fix, lint, settings_for, write_package


def ql101(src, **kw):
    return [d for d in lint(src, select=("QL101",), **kw)]


def spots(diagnostics) -> list[tuple[int, int]]:
    """Where the findings start (row, column): a count alone would not say which lines."""
    return [(d.range.start.row, d.range.start.col) for d in diagnostics]


@pytest.mark.parametrize(
    "expr",
    [
        "node.target == torch.ops.aten.relu",
        "torch.ops.aten.relu == node.target",
        "node.target != torch.ops.aten.relu",
        "node.target is torch.ops.aten.relu",
        "node.target is not torch.ops.aten.relu",
        "node.target in (torch.ops.aten.relu, torch.ops.aten.linear.default)",
        "node.target not in [torch.ops.aten.relu]",
        "node.target in {torch.ops.aten.relu}",
        "getattr(node, 'target') == torch.ops.aten.relu",
    ],
)
def test_comparisons_are_flagged(expr):
    diags = ql101(
        f"""
        import torch

        def f(node):
            return {expr}
        """
    )
    assert len(diags) == 1
    assert diags[0].message.startswith("`torch.ops.aten.relu` is an OpOverloadPacket")


def test_range_is_the_packet_element():
    (d,) = ql101(
        """
        import torch
        OPS = {
            torch.ops.aten.linear.default,
            torch.ops.aten.relu,
        }
        def f(n):
            return n.target in OPS
        """
    )
    assert (d.range.start.row, d.range.start.col, d.range.end.col) == (5, 4, 4 + len("torch.ops.aten.relu"))


def test_aliases_resolve():
    src = """
        import torch as t
        from torch.ops import quantized_decomposed as qd
        aten = t.ops.aten
        from executorch.exir.dialects._ops import ops as exir_ops

        def f(node, ep):
            tgt = node.target
            if tgt == aten.relu: pass
            if tgt == qd.quantize_per_channel: pass
            if tgt == exir_ops.edge.aten.relu: pass
            if tgt == t.ops.torchao.dequantize_affine: ep.graph_module  # an exported program's graph
        """
    assert spots(ql101(src)) == [(9, 14), (10, 14), (11, 14), (12, 14)]


def test_dict_lookups_and_match():
    src = """
        import torch
        aten = torch.ops.aten
        HANDLERS = {aten.relu: 1, aten.linear.default: 2}

        def f(node):
            a = HANDLERS[node.target]
            b = HANDLERS.get(node.target)
            c = node.target in HANDLERS
            match node.target:
                case aten.relu | aten.hardtanh:
                    pass
        """
    diags = ql101(src)
    # one finding on the dict key (deduplicated across three lookups) and two in the case
    assert sorted((d.range.start.row, d.range.start.col) for d in diags) == [(4, 12), (11, 13), (11, 25)]


def test_sinks():
    src = """
        import torch
        from torch._inductor.constant_folding import add_dont_constant_fold
        from torch.testing._internal.common_quantization import NodeSpec as ns

        add_dont_constant_fold(torch.ops.torchao.dequantize_affine)  # Inductor's graphs carry overloads

        def test(self, m):
            occurrence = {ns.call_function(torch.ops.quantized_decomposed.quantize_per_channel): 2}
            self.checkGraphModuleNodes(m, expected_node_occurrence=occurrence)
        """
    assert spots(ql101(src)) == [(6, 23), (9, 18)]


@pytest.mark.parametrize(
    "body",
    [
        "return torch.ops.aten.relu(x)",
        "f = lambda x: aten.relu(x)\n    return f",
        'return "relu" in str(node.target)',
        "return node.target.overloadpacket == aten.relu",
        'return getattr(node.target, "overloadpacket", None) == aten.relu',
        "p = node.target.overloadpacket\n    return p == aten.relu",
        "return node.target in {aten.relu, aten.relu.default}",
        "return node.target.__name__ == aten.relu.__name__",
        "return torch._decomp.get_decompositions([aten.relu])",
        "return self.op == aten.relu",
        "return func.overloadpacket in {aten.relu}",
        "return node.target == torch.ops.higher_order.cond",
        "return node.target == aten.relu.default",
    ],
)
def test_fine_idioms_stay_quiet(body):
    src = f"import torch\naten = torch.ops.aten\n\ndef f(self, node, x, func):\n    {body}\n"
    assert ql101(src) == []


def test_existence_probe_is_quiet():
    src = """
        import torch
        try:
            torch.ops.quantized_decomposed.quantize_per_tensor
            HAS_QD = True
        except AttributeError:
            HAS_QD = False
        """
    assert ql101(src) == []


def test_legacy_fx_module_is_quiet():
    src = """
        import torch
        from torch.fx import symbolic_trace

        def count(model):
            gm = symbolic_trace(model)
            return sum(n.target == torch.ops.aten.relu for n in gm.graph.nodes)
        """
    assert ql101(src) == []


def test_module_inserting_the_same_packet_reports_the_insertion_only():
    src = """
        import torch

        def rewrite(gm, node):
            new = gm.graph.call_function(torch.ops.torchao.quantize_affine, node.args)
            for n in gm.graph.nodes:
                if n.target == torch.ops.torchao.quantize_affine:
                    pass
        """
    assert codes(lint(src, select=("QL1",))) == ["QL102"]


def test_constant_from_another_module(tmp_path):
    pkg = write_package(
        tmp_path,
        "pkg",
        qdq_utils="import torch\nDQ_OPS = [torch.ops.quantized_decomposed.dequantize_per_channel]\n",
        passes="from .qdq_utils import DQ_OPS\n\ndef f(n):\n    return n.target in DQ_OPS\n",
    )
    user = pkg / "passes.py"
    result = check_source(user.read_bytes(), str(user), settings_for(("QL101",)))
    (d,) = result.diagnostics
    assert d.range.start.row == 4 and "defined in qdq_utils.py:2" in d.message
    assert d.related[0].path.endswith("qdq_utils.py") and d.related[0].range.start.row == 2
    # The fix belongs to the defining module: its edit names that file.
    (edit,) = d.fix.edits
    assert d.fix.applicability is Applicability.SAFE and edit.path == str(pkg / "qdq_utils.py")
    assert (edit.range.start.row, edit.range.start.col, edit.content) == (2, 63, ".default")
    # The constant's module, and (asked whether the project inserts the packet) every module,
    # and that no module created later inserts it (the listing).
    files = {p for p in result.dependencies if not p.startswith(LISTING_PREFIX)}
    assert files == {str(pkg / "qdq_utils.py"), str(pkg / "__init__.py")}
    assert {parse_listing_dependency(p)[:2] for p in set(result.dependencies) - files} == {(str(pkg), True)}


def test_fixes_by_overload_count():
    src = """
        import torch
        aten = torch.ops.aten
        qd = torch.ops.quantized_decomposed

        def f(n):
            a = n.target == aten.relu
            b = n.target == aten.add
            c = n.target == qd.dequantize_per_tensor
            d = n.target in (qd.dequantize_per_tensor, aten.linear.default)
        """
    diags = {d.range.start.row: d for d in ql101(src)}
    assert diags[7].fix.applicability is Applicability.SAFE
    assert diags[8].fix.applicability is Applicability.UNSAFE
    assert diags[9].fix.applicability is Applicability.DISPLAY_ONLY
    assert diags[10].fix.applicability is Applicability.UNSAFE
    safe = fix(src, select=("QL101",))
    assert "aten.relu.default" in safe and "n.target == aten.add\n" in safe
    unsafe = fix(src, select=("QL101",), unsafe=True)
    assert "n.target == aten.add.Tensor" in unsafe
    assert "n.target == qd.dequantize_per_tensor\n" in unsafe
    assert "(qd.dequantize_per_tensor.default, qd.dequantize_per_tensor.tensor" in unsafe


def test_fix_style_both_keeps_the_packet():
    src = "import torch\nOPS = {torch.ops.aten.relu}\ndef f(n):\n    return n.target in OPS\n"
    out = fix(src, select=("QL101",), QL101={"fix-style": "both"})
    assert "OPS = {torch.ops.aten.relu, torch.ops.aten.relu.default}" in out
    assert ql101(out, QL101={"fix-style": "both"}) == []


def test_fix_is_idempotent_and_keeps_comments():
    src = (
        "import torch\nOPS = [  # ops we fold\n    torch.ops.aten.relu,  # keep\n]\n"
        "def f(n):\n    return n.target in OPS\n"
    )
    once = fix(src, select=("QL101",))
    assert once == src.replace("aten.relu,", "aten.relu.default,")
    assert fix(once, select=("QL101",)) == once


def test_body_that_accepts_both_forms_is_quiet():
    src = """
        import torch

        def is_sym_size(node):
            return (
                node.target == torch.ops.aten.sym_size.int
                or node.target == torch.ops.aten.sym_size
            )
        """
    assert ql101(src) == []


def test_edge_overload_does_not_excuse_an_aten_packet():
    src = """
        import torch
        from executorch.exir.dialects._ops import ops as exir_ops

        def count(node):
            return node.target == torch.ops.aten.copy_ or node.target == exir_ops.edge.aten.copy_.default
        """
    assert spots(ql101(src)) == [(6, 26)]


def test_normalizer_table_is_quiet():
    src = """
        import torch
        replacements = {
            torch.ops.aten.sym_size: torch.ops.aten.sym_size.int,
            torch.ops.aten.sym_numel: torch.ops.aten.sym_numel.default,
        }

        def run(gm):
            for node in gm.graph.nodes:
                if node.target in replacements:
                    node.target = replacements[node.target]
        """
    assert lint(src, select=("QL1",)) == []


@pytest.mark.parametrize(
    "header",
    [
        "from torch._inductor.pattern_matcher import CallFunction",
        "import torch._inductor.lowering",
        "def convert(node: torch._C.Node): pass",
    ],
)
def test_graphs_that_carry_packets_are_quiet(header):
    src = f"""
import torch
{header}

def rewrite(gm, node):
    if node.target == torch.ops.aten.select:
        gm.graph.call_function(torch.ops.aten.unsqueeze, (node, 0))
"""
    assert lint(src, select=("QL1",)) == []


def test_class_level_constants():
    src = """
        import torch
        aten = torch.ops.aten

        class FoldPass:
            _OPS = (aten.relu, aten.linear.default)

            def call(self, gm):
                return [n for n in gm.graph.nodes if n.target in self._OPS or n.target in FoldPass._OPS]
        """
    (d,) = ql101(src)
    assert d.range.start.row == 6 and d.range.start.col == 12


def test_alias_imported_from_a_sibling_module(tmp_path):
    pkg = write_package(
        tmp_path,
        "pkg",
        ops="import torch\naten = torch.ops.aten\n",
        passes="from pkg.ops import aten\n\ndef f(n):\n    return n.target == aten.hardtanh\n",
    )
    user = pkg / "passes.py"
    (d,) = check_source(user.read_bytes(), str(user), settings_for(("QL101",))).diagnostics
    assert d.message.startswith("`aten.hardtanh` is an OpOverloadPacket")


def test_fix_style_both_rewrites_comparisons_and_cases():
    src = """
        import torch
        aten = torch.ops.aten

        def f(n):
            if n.target != aten.relu:
                return
            match n.target:
                case aten.hardtanh:
                    pass
        """
    out = fix(src, select=("QL101",), QL101={"fix-style": "both"})
    assert "if n.target not in (aten.relu, aten.relu.default):" in out
    assert "case aten.hardtanh | aten.hardtanh.default:" in out
    assert ql101(out, QL101={"fix-style": "both"}) == []


def test_ops_the_installed_torchao_inserts_as_packets_keep_the_packet():
    """torchao 0.18's convert_pt2e inserts its affine ops as packets (the op table records the
    flows), so only matching both forms is right, whatever the configured style."""
    src = "import torch\n\ndef f(n, ep):\n    return n.target == torch.ops.torchao.quantize_affine or ep.graph_module\n"
    (d,) = ql101(src)
    assert "misses exported graphs" in d.message and "installed torchao builds with packets" in d.help
    assert fix(src, select=("QL101",)).endswith(
        "return n.target in (torch.ops.torchao.quantize_affine, torch.ops.torchao.quantize_affine.default)"
        " or ep.graph_module\n"
    )

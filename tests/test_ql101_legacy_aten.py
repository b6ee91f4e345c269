"""QL101 in modules that trace symbolically and also compare node targets with ATen overloads.

Importing `symbolic_trace` makes a module legacy FX graph mode, whose graphs carry packets. A
module that also compares node targets with an ATen overload matches dispatcher-level graphs
(a symbolic trace of a model records none): it traces symbolically only to build pattern graphs
(AITemplate's fx2ait), and its ATen packets never match the graphs it rewrites.
"""

from tests.conftest import lint

# Every snippet opens with this (six lines): a module that builds pattern graphs symbolically.
PATTERN = """
    import torch
    from torch.fx import symbolic_trace

    def replacement_graph(fn):
        return symbolic_trace(fn)
"""


def rows(body: str) -> list[int]:
    return [d.range.start.row for d in lint(PATTERN + body, select=("QL101",))]


def test_aten_packet_beside_an_overload_match_is_reported():
    src = """
    def channel_last(gm):
        for n in gm.graph.nodes:
            if n.target == torch.ops.aten.cat.default:
                for u in n.users:
                    if u.target == torch.ops.aten.sym_size:
                        u.args = (u.args[0], 3)
    """
    assert rows(src) == [12]


def test_overload_match_in_another_function_counts():
    src = """
    def fold_skip(node):
        return node.target == torch.ops.aten.sym_size

    def compose(gm):
        return [n for n in gm.graph.nodes if n.target == torch.ops.aten.slice.Tensor]
    """
    assert rows(src) == [9]


def test_aten_packet_in_a_collection_is_reported():
    src = """
    SIZES = (torch.ops.aten.sym_size,)

    def rewrite(gm):
        for n in gm.graph.nodes:
            if n.target == torch.ops.aten.mean.dim and any(u.target in SIZES for u in n.users):
                pass
    """
    assert rows(src) == [8]


def test_packets_alone_stay_legacy():
    src = """
    def count(gm):
        return sum(n.target == torch.ops.aten.sym_size for n in gm.graph.nodes)
    """
    assert rows(src) == []


def test_overload_in_an_eager_pattern_call_is_no_evidence():
    # The pattern function calls an overload eagerly: its symbolic trace records it, but the
    # module compares no node target with one.
    src = """
    def compose_mm(a, b):
        size = torch.ops.aten.sym_size(a, 0)
        return torch.ops.aten.view.default(torch.ops.aten.mm.default(a, b), [size, -1])

    def is_size(node):
        return node.target == torch.ops.aten.sym_size
    """
    assert rows(src) == []


def test_other_namespaces_keep_the_legacy_excuse():
    # FX-mode lowering inserts and matches `quantized` packets; an ATen overload compared
    # elsewhere in the module says nothing about those.
    src = """
    def lower(gm):
        for n in gm.graph.nodes:
            if n.target == torch.ops.aten.relu.default:
                pass
            if n.target == torch.ops.quantized.conv2d:
                pass
    """
    assert rows(src) == []


def test_non_aten_overload_is_no_evidence():
    # FX-mode convert's decomposed representation puts `quantized_decomposed` overloads into
    # symbolic-trace graphs: the module's graphs may still be legacy ones.
    src = """
    def find(gm):
        for n in gm.graph.nodes:
            if n.target == torch.ops.quantized_decomposed.quantize_per_tensor.default:
                pass
            if n.target == torch.ops.aten.sym_size:
                pass
    """
    assert rows(src) == []


def test_both_forms_matched_stay_quiet():
    src = """
    def is_size(node):
        return node.target in (torch.ops.aten.sym_size, torch.ops.aten.sym_size.int)
    """
    assert rows(src) == []

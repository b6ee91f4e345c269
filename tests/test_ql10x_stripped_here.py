"""QL101/QL102 on a graph module the same function has just stripped of its overloads
(BladeDISC's Dynamo backend: `strip_overloads(fx_g)`, then a loop that rewrites `prims.div`
nodes to `aten.div` by comparing and setting packets, then TorchScript). Every target there
is a packet. Loud look-alikes: the strip after the loop, under a condition, on another
graph, the graph named or handed on in between or inside the loop, rebound, an overload
spelled in the function, an insertion into another graph."""

from __future__ import annotations

from tests.conftest import lint


def _rows(src: str) -> list[tuple[int, str]]:
    return sorted((d.range.start.row, d.code) for d in lint(src, select=("QL101", "QL102")))


LOWER = """
import torch
from torch._functorch import compilers

def lower(fx_g, inps):
    with compilers._disable_jit_autocast():
{strip}
        for node in fx_g.graph.nodes:
            if node.target == torch.ops.prims.div:
                node.target = torch.ops.aten.div
{between}
    fx_g.recompile()
    return torch.jit.script(fx_g)
"""

STRIP = "        compilers.strip_overloads(fx_g)"


def _lower(strip: str = STRIP, between: str = "") -> str:
    return LOWER.format(strip=strip, between=between)


def test_match_and_set_after_strip_are_quiet():
    assert _rows(_lower()) == []


def test_without_the_strip_both_are_reported():
    assert _rows(_lower(strip="        pass")) == [(9, "QL101"), (10, "QL102")]


def test_strip_imported_from_functorch_compile_is_quiet():
    src = """
    import torch
    from functorch.compile import strip_overloads

    def lower(gm):
        strip_overloads(gm)
        for n in list(gm.graph.nodes):
            if n.target == torch.ops.aten.view:
                n.target = torch.ops.aten.reshape
        return torch.jit.script(gm)
    """
    assert _rows(src) == []


def test_insertion_into_the_stripped_graph_is_quiet():
    src = """
    import torch
    from torch._functorch.compile_utils import strip_overloads

    def lower(gm):
        strip_overloads(gm)
        out = next(iter(reversed(gm.graph.nodes)))
        with gm.graph.inserting_before(out):
            gm.graph.call_function(torch.ops.aten.clone, (out.args[0],))
        return torch.jit.script(gm)
    """
    assert _rows(src) == []


def test_strip_after_the_loop_is_reported():
    src = """
    import torch
    from functorch.compile import strip_overloads

    def lower(gm):
        for n in gm.graph.nodes:
            if n.target == torch.ops.aten.view:
                n.target = torch.ops.aten.reshape
        strip_overloads(gm)
        return torch.jit.script(gm)
    """
    assert _rows(src) == [(7, "QL101"), (8, "QL102")]


def test_strip_under_a_condition_is_reported():
    strip = "        if inps:\n            compilers.strip_overloads(fx_g)"
    assert _rows(_lower(strip=strip)) == [(10, "QL101"), (11, "QL102")]


def test_strip_of_another_graph_is_reported():
    strip = "        compilers.strip_overloads(inps)"
    assert _rows(_lower(strip=strip)) == [(9, "QL101"), (10, "QL102")]


def test_graph_handed_on_between_strip_and_loop_is_reported():
    strip = STRIP + "\n        fx_g = decompose(fx_g)"
    assert _rows(_lower(strip=strip)) == [(10, "QL101"), (11, "QL102")]


def test_graph_handed_to_a_pass_between_is_reported():
    strip = STRIP + "\n        run_passes(fx_g)"
    assert _rows(_lower(strip=strip)) == [(10, "QL101"), (11, "QL102")]


def test_graph_of_the_module_handed_on_between_is_reported():
    strip = STRIP + "\n        run_graph_passes(fx_g.graph)"
    assert _rows(_lower(strip=strip)) == [(10, "QL101"), (11, "QL102")]


def test_graph_handed_on_inside_the_loop_is_reported():
    between = "                run_passes(fx_g)"
    assert _rows(_lower(between=between)) == [(9, "QL101"), (10, "QL102")]


def test_overload_spelled_in_the_function_is_reported():
    between = "            if node.target == torch.ops.aten.add.Tensor:\n                node.args = node.args[:2]"
    assert _rows(_lower(between=between)) == [(9, "QL101"), (10, "QL102")]


def test_insertion_into_another_graph_is_reported():
    src = """
    import torch
    from functorch.compile import strip_overloads

    def lower(gm, other):
        strip_overloads(gm)
        other.graph.call_function(torch.ops.aten.clone, ())
        return torch.jit.script(gm)
    """
    assert _rows(src) == [(7, "QL102")]


def test_target_set_on_a_node_not_from_the_loop_is_reported():
    src = """
    import torch
    from functorch.compile import strip_overloads

    def lower(gm, extra):
        strip_overloads(gm)
        for n in gm.graph.nodes:
            extra.target = torch.ops.aten.clone
        return torch.jit.script(gm)
    """
    assert _rows(src) == [(8, "QL102")]


OWN_LOOP = """        for n in fx_g.graph.nodes:
            if isinstance(n.target, torch._ops.OpOverload):
                n.target = n.target.overloadpacket"""


def test_the_projects_own_strip_loop_strips_too():
    assert _rows(_lower(strip=OWN_LOOP)) == []


def test_a_strip_helper_of_the_module_strips_too():
    helper = "\ndef _strip(gm):\n    for n in gm.graph.nodes:\n        n.target = n.target.overloadpacket\n"
    src = _lower(strip="        _strip(fx_g)") + helper
    assert _rows(src) == []


def test_a_loop_stripping_one_op_only_leaves_the_rest_overloads():
    partial = OWN_LOOP.replace("isinstance(n.target, torch._ops.OpOverload)", "n.target == torch.ops.aten.add.Tensor")
    assert [code for _, code in _rows(_lower(strip=partial))] == ["QL101", "QL102"]


def test_a_helper_doing_more_than_strip_is_not_a_strip():
    helper = (
        "\ndef _strip(gm):\n    for n in gm.graph.nodes:\n        n.target = n.target.overloadpacket\n"
        "    gm.graph.call_function(torch.ops.aten.relu.default, ())\n"
    )
    src = _lower(strip="        _strip(fx_g)") + helper
    assert [code for _, code in _rows(src)] == ["QL101", "QL102"]

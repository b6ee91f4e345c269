"""QL101 at `Graph.find_nodes(op=..., target=op)`: torch.fx keeps a table keyed by each node's
target and `find_nodes` looks the op up there, so a packet finds no node of an exported graph
(ExecuTorch's cadence pass looked up `transposed_convolution` so until 9116df7ea715)."""

from __future__ import annotations

import pytest

from tests.conftest import lint


def ql101(src):
    return [d for d in lint(src, select=("QL101",))]


def rows(src) -> list[int]:
    return [d.range.start.row for d in ql101(src)]


def test_packet_looked_up_by_target_is_flagged():
    src = """
        import torch

        def fold(gm):
            for node in gm.graph.find_nodes(op="call_function", target=torch.ops.aten.relu):
                node.replace_all_uses_with(node.args[0])
        """
    assert rows(src) == [5]


def test_packet_bound_to_a_module_constant_is_flagged():
    src = """
        import torch

        RELU = torch.ops.aten.relu

        def fold(gm):
            return list(gm.graph.find_nodes(op="call_function", target=RELU))
        """
    assert rows(src) == [7]


@pytest.mark.parametrize(
    "target",
    [
        "torch.ops.aten.relu.default",  # an overload: the key a node carries
        "operator.getitem",  # a Python callable, as traced
        "torch.relu",  # a torch function, the target of a symbolically traced graph
        "target",  # a parameter: whatever the caller hands in
    ],
)
def test_lookups_by_what_nodes_carry_stay_quiet(target):
    src = f"""
        import operator
        import torch

        def fold(gm, target):
            return list(gm.graph.find_nodes(op="call_function", target={target}))
        """
    assert ql101(src) == []


def test_string_targets_of_other_ops_stay_quiet():
    src = """
        def sizes(gm):
            return list(gm.graph.find_nodes(op="call_method", target="size"))
        """
    assert ql101(src) == []


def test_a_packet_called_in_the_lookup_stays_quiet():
    src = """
        import torch

        def fold(gm, x):
            nodes = gm.graph.find_nodes(op="placeholder")
            return torch.ops.aten.relu(x), nodes
        """
    assert ql101(src) == []

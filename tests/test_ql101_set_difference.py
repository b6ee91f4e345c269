"""QL101 reads a set difference of op sets (`{...} - {None}`): the left set's elements but those
the right one takes away. transformer-surgeon's observer walk keys on
`{getattr(torch.ops.aten.linear, 'default', None), ...} - {None}`; with a packet spelled in that
set the matcher never matches, and QL101 said nothing because `-` was not read."""

from __future__ import annotations

import pytest

from tests.conftest import lint


def ql101(src):
    return [(d.range.start.row, d.message.split("`")[1]) for d in lint(src, select=("QL101",))]


def _matcher(targets: str, *, module_level: bool = False) -> str:
    if module_level:
        return f"""
        import torch

        LINEAR_TARGETS = {targets}

        def linears(gm):
            return [n for n in gm.graph.nodes if n.op == "call_function" and n.target in LINEAR_TARGETS]
        """
    return f"""
    import torch

    def linears(gm):
        targets = {targets}
        return [n for n in gm.graph.nodes if n.op == "call_function" and n.target in targets]
    """


@pytest.mark.parametrize("module_level", [False, True])
@pytest.mark.parametrize(
    "targets",
    [
        "{torch.ops.aten.linear, getattr(torch.ops.aten.mm, 'default', None)} - {None}",
        "set([torch.ops.aten.linear, torch.ops.aten.mm.default]) - {None}",
        "{torch.ops.aten.linear, torch.ops.aten.mm.default} - {torch.ops.aten.mm.default}",
        "({torch.ops.aten.linear} | {torch.ops.aten.mm.default}) - {None}",
    ],
)
def test_a_packet_left_in_the_difference_is_reported(targets, module_level):
    assert [op for _, op in ql101(_matcher(targets, module_level=module_level))] == ["torch.ops.aten.linear"]


@pytest.mark.parametrize("module_level", [False, True])
@pytest.mark.parametrize(
    "targets",
    [
        # transformer-surgeon's own set: every element an overload.
        "{getattr(torch.ops.aten.linear, 'default', None), getattr(torch.ops.aten.mm, 'default', None)} - {None}",
        # The packet is taken away, from a set literal or a frozenset of one.
        "{torch.ops.aten.linear, torch.ops.aten.mm.default} - {torch.ops.aten.linear}",
        "frozenset({torch.ops.aten.linear, torch.ops.aten.mm.default}) - frozenset({torch.ops.aten.linear})",
    ],
)
def test_no_packet_left_is_quiet(targets, module_level):
    assert ql101(_matcher(targets, module_level=module_level)) == []


def test_the_packet_taken_away_through_an_alias_of_the_namespace():
    assert (
        ql101(
            """
            import torch
            aten = torch.ops.aten

            def linears(gm):
                targets = {torch.ops.aten.linear, aten.mm.default} - {aten.linear}
                return [n for n in gm.graph.nodes if n.target in targets]
            """
        )
        == []
    )


def test_a_right_side_it_cannot_read_may_take_the_packet_away():
    """`removed` is a parameter: it may hold the packet, so the difference is unknown."""
    assert (
        ql101(
            """
            import torch

            def linears(gm, removed):
                targets = {torch.ops.aten.linear, torch.ops.aten.mm.default} - removed
                return [n for n in gm.graph.nodes if n.target in targets]
            """
        )
        == []
    )


def test_the_reported_row_is_the_packet_element():
    src = """
    import torch

    def linears(gm):
        targets = {
            torch.ops.aten.mm.default,
            torch.ops.aten.linear,
        } - {None}
        return [n for n in gm.graph.nodes if n.target in targets]
    """
    assert ql101(src) == [(7, "torch.ops.aten.linear")]

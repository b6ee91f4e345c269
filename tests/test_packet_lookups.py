"""QL101 and an op table a body looks up by the overload, then by the node target's packet.

FlatFlow (9rum/flatflow, issue 14) serializes exported graphs through a table keyed on
overloads and packets: `if node.target in TABLE` first, `elif node.target.overloadpacket in
TABLE` after, `TABLE[node.target.overloadpacket]` there. Its packet keys match every overload
of their op through the second lookup, so the first is no dead matcher of them
(`packet_lookups`). Loud still: a body that looks the table up exactly and nothing else,
whatever another body does, and a packet lookup of another table.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

TABLE = """
    import torch

    aten = torch.ops.aten

    TABLE = {
        aten._softmax: 1,
        aten.add.Tensor: 2,
    }
    OTHER = {aten.relu: 3}

"""


def rows(body: str) -> list[int]:
    return [d.range.start.row for d in lint(TABLE + body, select=("QL101",))]


@pytest.mark.parametrize(
    "body",
    [
        # FlatFlow's serializer.
        """
    def serialize(graph):
        out = []
        for node in graph.nodes:
            if node.target in TABLE:
                out.append(TABLE[node.target])
            elif node.target.overloadpacket in TABLE:
                out.append(TABLE[node.target.overloadpacket])
        return out
    """,
        # `.get` with the packet as the fallback, and `getattr(t, "overloadpacket", None)`.
        """
    def code(node):
        return TABLE.get(node.target) or TABLE.get(node.target.overloadpacket)
    """,
        """
    def code(node):
        t = node.target
        if t in TABLE:
            return TABLE[t]
        return TABLE.get(getattr(t, "overloadpacket", None))
    """,
    ],
)
def test_table_also_looked_up_by_the_targets_packet_is_quiet(body):
    assert rows(body) == []


def test_exact_lookup_alone_is_reported():
    body = """
    def serialize(graph):
        return [TABLE[n.target] for n in graph.nodes if n.target in TABLE]
    """
    assert rows(body) == [7]


def test_packet_lookup_in_another_function_does_not_excuse():
    body = """
    def exact(node):
        return TABLE.get(node.target)


    def by_packet(node):
        return TABLE.get(node.target.overloadpacket)
    """
    assert rows(body) == [7]


def test_packet_lookup_of_another_table_does_not_excuse():
    body = """
    def code(node):
        if node.target in TABLE:
            return TABLE[node.target]
        return OTHER.get(node.target.overloadpacket)
    """
    assert rows(body) == [7]


def test_packet_of_something_else_does_not_excuse():
    body = """
    def code(node, op):
        if node.target in TABLE:
            return TABLE[node.target]
        return TABLE.get(op.overloadpacket)
    """
    assert rows(body) == [7]

"""`torch._ops.ops` is `torch.ops` (issue 14, FlatFlow's graph serializer).

torch binds `torch.ops` by importing `ops` from `torch._ops`, so `aten = torch._ops.ops.aten`
names the same namespace and `aten._softmax` the same packet. FlatFlow (9rum/flatflow at
3d716be) keyed its op table on packets spelled so and looked node targets of an exported
graph up in it exactly: every packet key was dead. Two readings hid it: `Resolver.parse_op` (now `op_refs.parse_op`)
knew only the `torch.ops.` spelling, and the text gate (`packet_text._uses_of`), after
turning away the `ops` that ends `_ops`, went on searching past that use's links, where the
real root `ops` stood. Loud: each spelling reports as its `torch.ops` twin does. Quiet: the
look-alikes reading the same root (an overload, an eager call, a normalised target, a class
of `torch._ops`) and a `_ops` that is not torch's.
"""

from __future__ import annotations

import pytest

from qlint.analysis.graphs.packet_text import spells_packet
from tests.conftest import lint

TABLE = """
    import torch

    aten = {root}.aten

    TABLE = {{
        aten._softmax: 1,
        aten.add.Tensor: 2,
    }}


    def serialize(graph):
        return [TABLE[n.target] for n in graph.nodes if n.target in TABLE]
"""

COMPARED = """
    {imports}

    def is_relu(node):
        return node.target == {packet}
"""

INSERTED = """
    import torch

    def rewrite(gm):
        for n in list(gm.graph.nodes):
            with gm.graph.inserting_after(n):
                gm.graph.call_function({packet}, (n, n))
        gm.recompile()
        return torch.export.export(gm, ())
"""


def rows(src: str, select=("QL101", "QL102")) -> list[tuple[str, int]]:
    return sorted((d.code, d.range.start.row) for d in lint(src, select=select))


def test_table_keyed_on_a_packet_through_the_private_root_is_reported():
    private = rows(TABLE.format(root="torch._ops.ops"))
    assert private == [("QL101", 7)]
    assert private == rows(TABLE.format(root="torch.ops"))


@pytest.mark.parametrize(
    "imports, packet",
    [
        ("import torch", "torch._ops.ops.aten.relu"),
        ("import torch._ops", "torch._ops.ops.aten.relu"),
        ("from torch._ops import ops", "ops.aten.relu"),
        ("from torch._ops import ops as O", "O.aten.relu"),
        ("from torch import _ops", "_ops.ops.aten.relu"),
        ("import torch._ops as T", "T.ops.aten.relu"),
    ],
)
def test_packet_compared_through_the_private_root_is_reported(imports, packet):
    assert rows(COMPARED.format(imports=imports, packet=packet)) == [("QL101", 5)]


def test_packet_inserted_through_the_private_root_is_reported():
    private = rows(INSERTED.format(packet="torch._ops.ops.aten.add"))
    assert private == [("QL102", 7)]
    assert private == rows(INSERTED.format(packet="torch.ops.aten.add"))


def test_the_gate_lets_a_namespace_bound_through_the_private_root_through():
    text = "import torch\naten = torch._ops.ops.aten\n\ndef f(n):\n    return n.target == aten.relu\n"
    assert spells_packet(text)


@pytest.mark.parametrize(
    "imports, compared",
    [
        # An overload, also in a table beside the packet's twin spelled the public way.
        ("import torch", "torch._ops.ops.aten.relu.default"),
        ("from torch._ops import ops", "ops.aten.relu.default"),
        # A class of `torch._ops`, not an op.
        ("import torch", "torch._ops.OpOverloadPacket"),
        # Another package's `_ops`.
        ("from mylib import _ops", "_ops.ops.aten.relu"),
    ],
)
def test_look_alikes_through_the_private_root_are_quiet(imports, compared):
    assert rows(COMPARED.format(imports=imports, packet=compared)) == []


def test_eager_call_and_normalised_target_are_quiet():
    src = """
    import torch

    aten = torch._ops.ops.aten


    def relu(x):
        return aten.relu(x)


    def is_relu(node):
        return node.target.overloadpacket in {aten.relu, aten.gelu}
    """
    assert rows(src) == []


@pytest.mark.parametrize(
    "text",
    [
        # The tail of a name that is not torch's root, with no root behind it.
        "import mylib\nx = mylib.my_ops.aten\n\ndef f(n):\n    return n.target == x\n",
        "import torch\nfrom mylib import foo_ops\n\ndef f(n):\n    return n.target == foo_ops.relu.default\n",
    ],
)
def test_the_gate_still_turns_away_word_tails(text):
    assert not spells_packet(text)

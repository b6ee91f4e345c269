"""QL201: a model that runs the items of its own `nn.ModuleList` through a loop name
(issue 14, item 8; `listed_parts`).

ExecuTorch's llama models (`examples/models/llama/llama_transformer.py`, the Qualcomm static
llama) write `for layer in self.layers: h = layer(h, ...)` over a `ModuleList` their
`__init__` builds. The call of a name held in a variable may run anything, so such a model
was never known in full and a caller passing it kept the helper's finding. A ModuleList holds
modules only: its items are parts built where the class builds them, read there. A list, the
list of another object, an attribute also stored another way, or a loop name bound another
way too, is still anything.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.test_ql201_loop_items import CAPTURE_ROW, ql201

STACK = """
class Stack(nn.Module):
    def __init__(self, n, blocks=None):
        super().__init__()
{init}

    def forward(self, x):
{forward}
{extra}
"""


def _caller(init: str, forward: str, extra: str = "") -> str:
    body = STACK.format(
        init=textwrap.indent(textwrap.dedent(init), " " * 8),
        forward=textwrap.indent(textwrap.dedent(forward), " " * 8),
        extra=textwrap.indent(textwrap.dedent(extra), " " * 4),
    )
    return (
        "from blocks import make_layers, Block\n"
        + body
        + textwrap.dedent(
            """
        def main(x, q):
            quantize(Stack(4), (x,), q)
        """
        )
    )


LOOP = """
for layer in self.layers:
    x = layer(x)
return x
"""
QUIET = {
    "a ModuleList built in __init__": ("self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(n)])", LOOP),
    "filled by append (llama_transformer)": (
        """
        self.layers = torch.nn.ModuleList()
        for _ in range(n):
            self.layers.append(Shuffle())
        """,
        LOOP,
    ),
    "enumerate in a comprehension (static llama)": (
        "self.layers = nn.ModuleList([Shuffle(), nn.ReLU()])",
        "return sum(layer(x) * i for i, layer in enumerate(self.layers))",
    ),
    "a Sequential": ("self.layers = nn.Sequential(nn.Linear(4, 4), nn.ReLU())", LOOP),
}


@pytest.mark.parametrize(("init", "forward"), QUIET.values(), ids=QUIET.keys())
def test_items_of_its_own_module_list_called_leave_the_model_known(init, forward):
    assert ql201(_caller(init, forward)) == []


LOUD = {
    "the list holds a dropout": ("self.layers = nn.ModuleList([nn.Linear(4, 4), nn.Dropout(0.5)])", LOOP),
    "a plain list (may hold classes)": ("self.layers = [Block, Block]", LOOP),
    "stored from a parameter": ("self.layers = blocks", LOOP),
    "stored a second way": (
        """
        self.layers = nn.ModuleList([Shuffle()])
        if n > 2:
            self.layers = make_layers(n)
        """,
        LOOP,
    ),
    "the list of another object": (
        """
        self.layers = nn.ModuleList([Shuffle()])
        self.inner = blocks
        """,
        """
        for layer in self.inner.layers:
            x = layer(x)
        return x
        """,
    ),
    "the loop name bound again": (
        "self.layers = nn.ModuleList([Shuffle()])",
        """
        for layer in self.layers:
            x = layer(x)
        layer = make_layers(x)
        return layer(x)
        """,
    ),
}


@pytest.mark.parametrize(("init", "forward"), LOUD.values(), ids=LOUD.keys())
def test_a_loop_name_that_may_hold_anything_keeps_the_finding(init, forward):
    (d,) = ql201(_caller(init, forward))
    assert d.range.start.row == CAPTURE_ROW


def test_an_attribute_stored_again_in_a_decorated_method_keeps_the_finding():
    reset = """
    @torch.no_grad()
    def reset(self):
        self.layers = [Block]
    """
    (d,) = ql201(_caller("self.layers = nn.ModuleList([Shuffle()])", LOOP, reset))
    assert d.range.start.row == CAPTURE_ROW


def test_an_attribute_the_class_body_binds_too_keeps_the_finding():
    # Until `setup` runs, `self.layers` reads the class's list of classes: `layer(x)` builds one.
    extra = """
    layers = [Block]

    def setup(self):
        self.layers = nn.ModuleList([Shuffle()])
    """
    (d,) = ql201(_caller("self.n = n", LOOP, extra))
    assert d.range.start.row == CAPTURE_ROW


def test_the_message_names_the_dropout_of_the_list():
    (d,) = ql201(_caller("self.layers = nn.ModuleList([nn.Dropout(0.5)])", LOOP))
    assert "Dropout" in d.message

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

from tests.conftest import lint
from tests.test_ql201_loop_items import CAPTURE_ROW, HEAD, ql201

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


# The container stored by a base class of the project (stop 46's note, item 5): `super().__init__()`
# of a class storing `self.layers = nn.ModuleList(...)`, the subclass's `forward` walking it.
BASE = """
class Base(nn.Module):
    def __init__(self, n):
        super().__init__()
{init}
{extra}
"""
SUB = """
class Stack({base}):
    def __init__(self, n):
        super().__init__(n)
{sub_init}

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x
{sub_extra}

def main(x, q):
    quantize(Stack(4), (x,), q)
"""
MID = "\nclass Mid(Base):\n    def __init__(self, n):\n        super().__init__(n)\n        self.n = n\n"


def _subclassed(init: str, extra: str = "", sub_init: str = "        self.n = n", sub_extra: str = "", mid=False):
    base = BASE.format(
        init=textwrap.indent(textwrap.dedent(init), " " * 8), extra=textwrap.indent(textwrap.dedent(extra), " " * 4)
    )
    sub = SUB.format(base="Mid" if mid else "Base", sub_init=sub_init, sub_extra=sub_extra)
    return "from blocks import make_layers, Block\n" + base + (MID if mid else "") + sub


BASE_QUIET = {
    "a ModuleList of the base's __init__": ("self.layers = nn.ModuleList([Shuffle() for _ in range(n)])", "", False),
    "two bases up": ("self.layers = nn.ModuleList([Shuffle() for _ in range(n)])", "", True),
    "a Sequential filled by append": (
        "self.layers = nn.Sequential()\nfor _ in range(n):\n    self.layers.append(nn.ReLU())",
        "",
        False,
    ),
}


@pytest.mark.parametrize(("init", "extra", "mid"), BASE_QUIET.values(), ids=BASE_QUIET.keys())
def test_items_of_a_module_list_a_base_class_stores_leave_the_model_known(init, extra, mid):
    assert ql201(_subclassed(init, extra, mid=mid)) == []


def test_the_subclass_storing_the_list_again_as_a_container_is_quiet():
    sub_init = "        self.layers = nn.ModuleList([nn.ReLU()])"
    assert ql201(_subclassed("self.layers = nn.ModuleList([Shuffle()])", sub_init=sub_init)) == []


def test_a_base_class_of_another_module_is_read():
    # Still reported (a construction handed to the helper, of a class of another module, is not
    # judged harmless by its content), but what the model holds is known: the message says so.
    base = BASE.format(init="        self.layers = nn.ModuleList([nn.ReLU() for _ in range(n)])", extra="")
    models = "import torch\nfrom torch import nn\n" + base
    sub = "from models import Base\n" + SUB.format(base="Base", sub_init="        self.n = n", sub_extra="")
    (d,) = lint(HEAD + "\n\n" + sub, select=("QL201",), overlay={"models.py": models})
    assert "no batch norm, dropout or `self.training` was found in `Stack`" in d.message
    loud = models.replace("nn.ReLU()", "nn.Dropout(0.5)")
    (d,) = lint(HEAD + "\n\n" + sub, select=("QL201",), overlay={"models.py": loud})
    assert "Dropout" in d.message


BASE_LOUD = {
    "the base's list holds a dropout": ("self.layers = nn.ModuleList([nn.Dropout(0.5)])", "", "", ""),
    "a plain list in the base (may hold classes)": ("self.layers = [Block, Block]", "", "", ""),
    "stored from an argument in the base": ("self.layers = make_layers(n)", "", "", ""),
    "the base's body binds the name (a list of classes until setup runs)": (
        "self.n = n",
        "layers = [Block]\n\ndef setup(self):\n    self.layers = nn.ModuleList([Shuffle()])",
        "",
        "",
    ),
    "the subclass stores a plain list over the base's ModuleList": (
        "self.layers = nn.ModuleList([Shuffle()])",
        "",
        "        self.layers = [Block]",
        "",
    ),
    "a subclass method stores another list": (
        "self.layers = nn.ModuleList([Shuffle()])",
        "",
        "        self.n = n",
        "\n    def reset(self):\n        self.layers = make_layers(self.n)\n",
    ),
    "the subclass's body binds the name": (
        "self.layers = nn.ModuleList([Shuffle()])",
        "",
        "        self.n = n",
        "\n    layers = [Block]\n",
    ),
    "the subclass's ModuleList, a list of classes in the base's body until setup runs": (
        "self.n = n",
        "layers = [Block]",
        "        self.n = n",
        "\n    def setup(self):\n        self.layers = nn.ModuleList([Shuffle()])\n",
    ),
    "no class of the hierarchy stores it": ("self.n = n", "", "        self.n = n", ""),
}


@pytest.mark.parametrize(("init", "extra", "sub_init", "sub_extra"), BASE_LOUD.values(), ids=BASE_LOUD.keys())
def test_a_base_class_list_that_may_hold_anything_keeps_the_finding(init, extra, sub_init, sub_extra):
    (d,) = ql201(_subclassed(init, extra, sub_init=sub_init, sub_extra=sub_extra))
    assert d.range.start.row == CAPTURE_ROW


def test_a_base_that_does_not_resolve_keeps_the_finding():
    # `Mixin` is another package's: its `__init__` may store anything under `self.layers`.
    src = _subclassed("self.layers = nn.ModuleList([Shuffle()])").replace(
        "class Stack(Base):", "class Stack(Base, Mixin):"
    )
    (d,) = ql201("from other_package import Mixin\n" + src)
    assert d.range.start.row == CAPTURE_ROW


def test_a_torch_nn_base_other_than_module_keeps_the_reading_of_the_class_alone():
    # `nn.Sequential` is read for content, but is no class of the project whose stores are read:
    # `self.layers`, stored by no class written here, may be anything.
    src = _subclassed("self.layers = nn.ModuleList([Shuffle()])").replace(
        "class Stack(Base):", "class Stack(nn.Sequential):"
    )
    (d,) = ql201(src.replace("super().__init__(n)", "super().__init__()"))
    assert d.range.start.row == CAPTURE_ROW


def test_a_hierarchy_that_is_a_cycle_ends():
    src = _subclassed("self.layers = nn.ModuleList([nn.Dropout(0.5)])").replace(
        "class Base(nn.Module):", "class Base(Stack):"
    )
    (d,) = ql201(src)
    assert d.range.start.row == CAPTURE_ROW

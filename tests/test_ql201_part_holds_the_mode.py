"""QL201/QL202: a switch of one part of a model that holds all of the model's mode-dependent
content (issue 14, stop 71's leftover): `for m in model.body.children(): m.training = False`,
`for m in model.body.modules(): m.eval()`, and `model.body.eval()` with `self.body =
nn.Sequential(...)` built in place, left the capture of `model` reported as a train-mode one
(a part in eval mode, the rest in train mode) where `model.body.eval()` of a `Body()` did not.

`evaled_fields.evaled_whole` now reads a field built in place as holding every module its
statement builds, and the loops over a part as that part's `.eval()`. Read on torch 2.13 from
the `training` arguments of the exported graph's `batch_norm` and `dropout` (a `Net` and a
`SeqNet` below, each form of switch): all in eval mode. Loud, as on torch: another field of
the model holding a dropout (`DropHead`), a class reading `self.training` (`ReadsFlag`: its
own flag stays True), a batch norm one level further down than the children whose flags the
loop sets (`Nested`), a part given to the model or rebound after the switch, a field also
built through a method of `self` or a name bound in its expression."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.bn = nn.BatchNorm2d(3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.bn(self.conv(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Body()
        self.head = nn.Linear(3, 3)

    def forward(self, x):
        return self.head(self.body(x).mean((2, 3)))


class SeqNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3), nn.Dropout(0.5))
        self.head = nn.Linear(3, 3)

    def forward(self, x):
        return self.head(self.body(x).mean((2, 3)))


class DropHead(Net):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))


class ReadsFlag(Net):
    def forward(self, x):
        y = super().forward(x)
        return y * 2 if self.training else y


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(Body())
        self.head = nn.Linear(3, 3)

    def forward(self, x):
        return self.head(self.body(x).mean((2, 3)))


class SeqInner(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 3, 1), nn.Sequential(nn.BatchNorm2d(3)))
        self.head = nn.Linear(3, 3)

    def forward(self, x):
        return self.head(self.body(x).mean((2, 3)))


class Starred(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3)]
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(3, 3)

    def forward(self, x):
        return self.head(self.body(x).mean((2, 3)))


class Registers(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(self.kept(nn.Dropout(0.5)))
        self.head = nn.Linear(3, 3)

    def kept(self, m):
        self.extra = m
        return m

    def forward(self, x):
        return self.head(self.body(x).mean((2, 3)))


class Walrus(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 3, 1), (d := nn.Dropout(0.5)))
        self.tail = d

    def forward(self, x):
        return self.tail(self.body(x))

"""

SWITCHES = {
    "eval": "model.body.eval()",
    "train-false": "model.body.train(False)",
    "children-flags": "for m in model.body.children():\n        m.training = False",
    "children-setattr": 'for _, m in model.body.named_children():\n        setattr(m, "training", False)',
    "modules-eval": "for m in model.body.modules():\n        m.eval()",
    "children-eval": "for m in model.body.children():\n        m.eval()",
}

PTQ = """
def run(x, q):
    model = {cls}()
    {switch}{after}
    return prepare_pt2e(torch.export.export(model, (x,)).module(), q)
"""


def ptq(cls: str, switch: str, after: str = "") -> list[tuple[str, int]]:
    src = HEAD + textwrap.dedent(PTQ).format(cls=cls, switch=switch, after=after)
    return [(d.code, d.range.start.row) for d in lint(src, select=("QL201", "QL202"))]


def capture_row(switch: str, after: str = "") -> int:
    return HEAD.count("\n") + 5 + switch.count("\n") + after.count("\n")


@pytest.mark.parametrize("cls", ["Net", "SeqNet"])
@pytest.mark.parametrize("switch", SWITCHES.values(), ids=SWITCHES.keys())
def test_a_part_holding_all_the_mode_switched_is_the_models_switch(cls, switch):
    assert ptq(cls, switch) == []


@pytest.mark.parametrize("cls", ["DropHead", "ReadsFlag"])
@pytest.mark.parametrize("switch", SWITCHES.values(), ids=SWITCHES.keys())
def test_mode_outside_the_part_stays_reported(cls, switch):
    assert ptq(cls, switch) == [("QL201", capture_row(switch))]


@pytest.mark.parametrize(
    ("cls", "switch"),
    [
        ("Nested", SWITCHES["children-flags"]),  # the batch norm is Body's, inside the child
        ("SeqInner", SWITCHES["children-flags"]),  # inside a container among the children
        ("Starred", SWITCHES["children-flags"]),  # built outside the field's statement
        ("Starred", SWITCHES["eval"]),
        ("Registers", SWITCHES["eval"]),  # `self.kept` may store the dropout elsewhere too
        ("Walrus", SWITCHES["eval"]),  # the dropout is `self.tail` too
        ("Walrus", SWITCHES["modules-eval"]),
    ],
)
def test_parts_the_switch_may_not_reach_stay_reported(cls, switch):
    assert ptq(cls, switch) == [("QL201", capture_row(switch))]


@pytest.mark.parametrize("cls", ["Nested", "SeqInner"])
@pytest.mark.parametrize("switch", ["eval", "modules-eval", "children-eval"])
def test_nested_content_switched_whole_is_quiet(cls, switch):
    assert ptq(cls, SWITCHES[switch]) == []  # `.eval()` reaches Body's modules (torch 2.13)


@pytest.mark.parametrize(
    "after",
    [
        "\n    model.head = nn.Dropout(0.5)",  # a part given after the switch, in train mode
        "\n    model.body = Body()",  # the part rebound: the new one in train mode
        "\n    model.train()",
    ],
)
@pytest.mark.parametrize("switch", ["eval", "children-flags", "modules-eval"])
def test_a_part_given_or_rebound_after_the_switch_stays_reported(switch, after):
    assert ptq("Net", SWITCHES[switch], after) == [("QL201", capture_row(SWITCHES[switch], after))]


@pytest.mark.parametrize("switch", ["eval", "children-flags", "modules-eval", "children-eval"])
def test_a_part_given_before_the_switch_stays_reported(switch):
    given = "model.head = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))\n    "
    assert ptq("Net", given + SWITCHES[switch]) == [("QL201", capture_row(given + SWITCHES[switch]))]


QAT = """
def run(x, q):
    model = {cls}()
    {switch}
    return prepare_qat_pt2e(torch.export.export(model, (x,)).module(), q)
"""


@pytest.mark.parametrize("switch", ["children-flags", "modules-eval"])
def test_a_qat_capture_after_the_switch_is_reported(switch):
    src = HEAD + textwrap.dedent(QAT).format(cls="Net", switch=SWITCHES[switch])
    assert [d.code for d in lint(src, select=("QL201", "QL202"))] == ["QL202"]

"""QL201/QL202: a capture of a part a project class's `__init__` builds, read from an instance
the function builds (`holder = Holder()`, `self.model = Net()` in `Holder.__init__`, then
`export(holder.model, ...)`; issue 14, items 1 and 2; `init_parts`).

The read was of no known value: neither a train-mode PTQ capture nor a QAT capture after
`holder.eval()` or `holder.model.eval()` was reported, while a capture of `holder` was. The part
is in the mode its holder's switches give it (an `nn.Module` holder's `.eval()` reaches it; a
plain holder's `.eval()` is a method of its own) and its own switches.

Quiet where the part is evaled for PTQ (by the holder or itself), where a plain holder's method
touches the part, where the attribute is rebound in another method, set in a branch, replaced
after the build, or the holder is handed to code that may switch it, and where the part holds
nothing mode-dependent. `Stores(net)`, a holder of the module it was given, switches it along.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e
from elsewhere import Other, fit


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.bn(self.fc(x)))


class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Net()
        self.head = nn.Linear(4, 4)

    def forward(self, x):
        return self.head(self.model(x))


class Plain:
    def __init__(self):
        self.model = Net()
        self.mode = "train"

    def eval(self):
        self.mode = "eval"


class PlainEvals:
    def __init__(self):
        self.model = Net()

    def eval(self):
        self.model.eval()


class Rebound(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Net()

    def swap(self):
        self.model = Net().eval()


class Branch(nn.Module):
    def __init__(self, big):
        super().__init__()
        if big:
            self.model = Net()
        else:
            self.model = nn.Linear(4, 4)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())


class Stores(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model


def main(x, q):
    BODY
    return PREPARE(torch.export.export(CAPTURED, (x,)).module(), q)
"""

ROW = HEAD.splitlines().index("    BODY") + 1  # the (1-based) row of the body's first line


def found(body: str, prepare: str, captured: str = "holder.model"):
    lines = body.strip().splitlines()
    src = HEAD.replace("    BODY", "\n".join("    " + line for line in lines))
    src = src.replace("PREPARE", prepare).replace("CAPTURED", captured)
    capture_row = ROW + len(lines)  # the `return` after the body
    return [(d.code, d.range.start.row) for d in lint(src, select=("QL201", "QL202"))], capture_row


@pytest.mark.parametrize(
    ("body", "prepare", "code", "words"),
    [
        ("holder = Holder()", "prepare_pt2e", "QL201", "built at line"),
        ("holder = Holder()\nholder.eval()", "prepare_qat_pt2e", "QL202", "after `holder.eval()`"),
        ("holder = Holder()\nholder.model.eval()", "prepare_qat_pt2e", "QL202", "after `holder.model.eval()`"),
        # A switch of the part after the holder's, and the holder's after the part's.
        ("holder = Holder()\nholder.eval()\nholder.model.train()", "prepare_pt2e", "QL201", "holder.model.train()"),
        ("holder = Holder()\nholder.model.eval()\nholder.train()", "prepare_pt2e", "QL201", "holder.train()"),
        # A plain holder hands its `.eval()` down to nothing: the part was built in train mode.
        ("holder = Plain()\nholder.eval()", "prepare_pt2e", "QL201", "built at line"),
        ("holder = Plain()\nholder.model.eval()", "prepare_qat_pt2e", "QL202", "holder.model.eval()"),
    ],
)
def test_a_part_built_by_init_is_judged_in_its_holders_mode(body, prepare, code, words):
    lines = body.splitlines()
    src = HEAD.replace("    BODY", "\n".join("    " + line for line in lines))
    src = src.replace("PREPARE", prepare).replace("CAPTURED", "holder.model")
    (d,) = lint(src, select=("QL201", "QL202"))
    assert (d.code, d.range.start.row) == (code, ROW + len(lines))
    assert words in d.message and "in `Net`" in d.message, d.message


def test_a_name_bound_to_the_part_follows_the_holders_later_switch():
    body = "holder = Holder()\nnet = holder.model\nholder.eval()"
    assert found(body, "prepare_pt2e", "net")[0] == []
    codes, row = found(body, "prepare_qat_pt2e", "net")
    assert codes == [("QL202", row)]


@pytest.mark.parametrize(
    ("body", "prepare"),
    [
        ("holder = Holder()\nholder.eval()", "prepare_pt2e"),
        ("holder = Holder()\nholder.model.eval()", "prepare_pt2e"),
        ("holder = Holder()", "prepare_qat_pt2e"),
        ("holder = Holder()\nholder.eval()\nholder.model.train()", "prepare_qat_pt2e"),
        # A plain holder's `.eval()` does not reach the part: a QAT capture of it is right.
        ("holder = Plain()\nholder.eval()", "prepare_qat_pt2e"),
        # The plain holder's own method evals the part: not read, so not judged.
        ("holder = PlainEvals()\nholder.eval()", "prepare_pt2e"),
        # Rebound in another method, built in a branch, replaced, handed on, or a part mode-free.
        ("holder = Rebound()", "prepare_pt2e"),
        ("holder = Branch(True)", "prepare_pt2e"),
        ("holder = Holder()\nholder.model = Other()", "prepare_pt2e"),
        ("holder = Holder()\nholder.add_module('model', Other())", "prepare_pt2e"),
        ("holder = Holder()\nfit(holder)", "prepare_pt2e"),
        ("holder = Mlp()", "prepare_pt2e"),
        # A module given to the holder is switched with it (`Module.eval()` reaches submodules).
        ("net = Net()\nholder = Stores(net)\nholder.eval()", "prepare_pt2e"),
        ("net = Net()\nholder = Stores(net)\nnet.eval()\nholder.train()", "prepare_qat_pt2e"),
    ],
)
def test_quiet_where_the_part_is_in_the_right_mode_or_not_followed(body, prepare):
    assert found(body, prepare)[0] == []


def test_a_held_module_switched_after_its_holder_keeps_its_own_mode():
    body = "net = Net()\nholder = Stores(net)\nholder.eval()\nnet.train()"
    codes, row = found(body, "prepare_pt2e")
    assert codes == [("QL201", row)]
    codes, row = found("net = Net()\nholder = Stores(net)\nholder.eval()", "prepare_qat_pt2e")
    assert codes == [("QL202", row)]

"""QL201/QL202: a wrapper holding nothing but the module it was given, that module evaled
after the wrapper was built (`evaled_holders`): `net = Net(); w = Wrapper(net); net.eval()`.
The wrapper stores that very object, and its own flag changes nothing, so the capture of `w`
is in eval mode: quiet for PTQ, and a QAT capture of it is reported as one in eval mode.

Still reported for PTQ when the wrapper holds something else (another module, its own
dropout, code reading `self.training`), when its class may change what it holds, when the
evaled module is not the one it holds (a part, a rebound name, a copy, a store on the
wrapper since), and when the switch may not run (a branch, a loop, a `try`) or is done by a
helper.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import copy
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
        self.decoder = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.1))

    def forward(self, x):
        return self.decoder(self.encoder(x))


class Wrapper(nn.Module):
    def __init__(self, model, scale=1.0):
        super().__init__()
        self.model = model
        self.scale = scale

    def forward(self, x):
        return self.model(x) * self.scale


class Pair(nn.Module):
    def __init__(self, first, second):
        super().__init__()
        self.first = first
        self.second = second

    def forward(self, x):
        return self.second(self.first(x))


class WithDropout(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.model(x))


class ReadsFlag(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x) if self.training else x


class Retrains(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)

    def fit(self):
        self.model.train()


class Copying(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = copy.deepcopy(model)

    def forward(self, x):
        return self.model(x)


def set_eval(m):
    m.eval()


def main(x, q, flag):
    BODY
    return prepare_pt2e(torch.export.export(w, (x,)).module(), q)
"""


def messages(body: str, rule: str = "QL201", head: str = HEAD) -> list[str]:
    src = head.replace("BODY", body.replace("\n", "\n    "))
    return [d.message for d in lint(src, select=(rule,))]


# Reported before `evaled_holders` (all but the one `held_parts` restores, `net.train()` then
# `net.eval()` of a module evaled before the construction): judged by the construction's mode.
@pytest.mark.parametrize(
    "body",
    [
        "net = Net()\nw = Wrapper(net)\nnet.eval()",
        "net = Net()\nw = Wrapper(model=net, scale=2.0)\nnet.train(False)",
        "net = Net()\nw = nn.Sequential(net)\nnet.eval()",
        "a = Net()\nb = Net()\nw = Pair(a, b)\nb.eval()\na.eval()",
        # A wrapper of the wrapper.
        "net = Net()\ninner = Wrapper(net)\nw = Wrapper(inner)\nnet.eval()",
        # Switched back to train after the construction, then evaled.
        "net = Net().eval()\nw = Wrapper(net)\nnet.train()\nnet.eval()",
        "net = Net()\nw = Wrapper(net)\nw.train()\nnet.eval()",
        # The same object through another name.
        "net = Net()\nw = Wrapper(net)\nsame = net\nsame.eval()",
    ],
)
def test_the_held_module_evaled_after_the_construction_is_quiet(body):
    assert messages(body) == []


def test_a_qat_capture_of_such_a_wrapper_is_reported_in_eval_mode():
    qat = HEAD.replace("prepare_pt2e(torch", "prepare_qat_pt2e(torch")
    (message,) = messages("net = Net()\nw = Wrapper(net)\nnet.eval()", rule="QL202", head=qat)
    assert "captured for QAT in eval mode" in message and "`net.eval()` at line" in message
    assert messages("net = Net()\nw = Wrapper(net)\nnet.eval()\nnet.train()", rule="QL202", head=qat) == []


@pytest.mark.parametrize(
    "body",
    [
        # The wrapper holds something else in train mode.
        "a = Net()\nb = Net()\nw = Pair(a, b)\na.eval()",
        "net = Net()\nw = Pair(net, Net())\nnet.eval()",
        "net = Net()\nw = nn.Sequential(net, nn.Dropout(0.1))\nnet.eval()",
        "net = Net()\nw = WithDropout(net)\nnet.eval()",
        "net = Net()\nw = ReadsFlag(net)\nnet.eval()",
        # Its class may switch what it holds back.
        "net = Net()\nw = Retrains(net)\nnet.eval()",
        # Not the module it holds: a part of it, a rebound name, a copy, a store since.
        "net = Net()\nw = Wrapper(net)\nnet.encoder.eval()",
        "net = Net()\nw = Wrapper(net)\nnet = Net()\nnet.eval()",
        "net = Net()\nw = Copying(net)\nnet.eval()",
        "net = Net()\nw = Wrapper(net)\nw.model = Net()\nnet.eval()",
        "net = Net()\nw = Wrapper(net)\nsetattr(w, 'model', Net())\nnet.eval()",
        "m = Net()\nw = Wrapper(m.encoder)\nm.encoder.eval()",
        # The switch may not run, or is not an eval.
        "net = Net()\nw = Wrapper(net)\nif flag:\n    net.eval()",
        "net = Net()\nw = Wrapper(net)\nfor _ in range(2):\n    net.eval()",
        "net = Net()\nw = Wrapper(net)\ntry:\n    net.eval()\nexcept RuntimeError:\n    pass",
        "net = Net()\nw = Wrapper(net)\nnet.train(flag)",
        # A helper evaling it: not followed.
        "net = Net()\nw = Wrapper(net)\nset_eval(net)",
        # Evaled, then switched back.
        "net = Net()\nw = Wrapper(net)\nnet.eval()\nnet.train()",
    ],
)
def test_a_wrapper_holding_something_else_or_another_module_is_reported(body):
    assert len(messages(body)) == 1

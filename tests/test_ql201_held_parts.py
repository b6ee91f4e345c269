"""QL201: a part a wrapper stores, switched back to train through another name after the
wrapper is built (`held_parts`): `w = EvalWrapper(m.encoder); m.train()`, `enc = m.encoder;
w = EvalWrapper(enc); enc.train()`, `net = Net().eval(); w = Wrapper(net); net.train()`.
The wrapper holds that very object, so what it holds is in train mode at the capture.

Quiet when the switched module is not the stored part (another attribute, a rebound name, a
replaced attribute, a copy the wrapper made), when the switch is conditional or an `.eval()`,
and when the wrapper is evaled again after it.
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


class EvalWrapper(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder.eval()

    def forward(self, x):
        return self.encoder(x)


class Wrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)


class Copying(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = copy.deepcopy(model)

    def forward(self, x):
        return self.model(x)


def main(x, q, flag):
    BODY
    return prepare_pt2e(torch.export.export(w, (x,)).module(), q)
"""


def messages(body: str, rule: str = "QL201", head: str = HEAD) -> list[str]:
    src = head.replace("BODY", body.replace("\n", "\n    "))
    return [d.message for d in lint(src, select=(rule,))]


@pytest.mark.parametrize(
    ("body", "switch", "named"),
    [
        ("m = Net()\nw = EvalWrapper(m.encoder)\nm.train()", "m.train()", "BatchNorm1d"),
        ("m = Net()\nenc = m.encoder\nw = EvalWrapper(enc)\nenc.train()", "enc.train()", "BatchNorm1d"),
        ("m = Net()\nw = EvalWrapper(m.encoder)\nm.encoder.train()", "m.encoder.train()", "BatchNorm1d"),
        ("m = Net()\nw = EvalWrapper(m.encoder)\nm.train(True)", "m.train(True)", "BatchNorm1d"),
        ("net = Net().eval()\nw = Wrapper(net)\nnet.train()", "net.train()", "BatchNorm1d and Dropout"),
        ("net = Net().eval()\nw = Wrapper(model=net)\nnet.train().to('cpu')", "net.train()", "BatchNorm1d"),
        ("net = Net()\nw = EvalWrapper(net)\nnet.train()", "net.train()", "BatchNorm1d and Dropout"),
        # A wrapper of a wrapper holds the part too.
        ("net = Net()\ninner = EvalWrapper(net)\nw = Wrapper(inner)\nnet.train()", "net.train()", ""),
    ],
)
def test_the_stored_part_switched_back_by_another_name_is_reported(body, switch, named):
    (message,) = messages(body)
    assert f"(after `{switch}" in message
    assert named in message


@pytest.mark.parametrize(
    "body",
    [
        # Another part of the same model.
        "m = Net()\nw = EvalWrapper(m.encoder)\nm.decoder.train()",
        # The name now holds another model.
        "net = Net()\nw = EvalWrapper(net)\nnet = Net()\nnet.train()",
        "m = Net()\nenc = m.encoder\nw = EvalWrapper(enc)\nenc = m.decoder\nenc.train()",
        # The model now holds another part; the wrapper keeps the old one.
        "m = Net()\nw = EvalWrapper(m.encoder)\nm.encoder = nn.Linear(4, 4)\nm.train()",
        "m = Net()\nw = EvalWrapper(m.encoder)\nsetattr(m, 'encoder', nn.Linear(4, 4))\nm.train()",
        # Switched on some paths only, or evaled, or evaled again.
        "net = Net()\nw = EvalWrapper(net)\nif flag:\n    net.train()",
        "net = Net()\nw = EvalWrapper(net)\nfor _ in range(3):\n    net.train()",
        "net = Net()\nw = EvalWrapper(net)\ntry:\n    net.train()\nexcept RuntimeError:\n    pass",
        "net = Net()\nw = EvalWrapper(net)\nflag and net.train()",
        "net = Net()\nw = EvalWrapper(net)\nnet.eval()",
        "net = Net()\nw = EvalWrapper(net)\nnet.train(False)",
        "net = Net()\nw = EvalWrapper(net)\nnet.train(flag)",
        "net = Net().eval()\nw = Wrapper(net)\nnet.train()\nw.eval()",
        # Switched back, then evaled again (a training step between).
        "net = Net()\nw = EvalWrapper(net)\nnet.train()\nnet(x)\nnet.eval()",
        "net = Net().eval()\nw = Wrapper(net)\nnet.train()\nnet.train(False)",
        "m = Net()\nw = EvalWrapper(m.encoder)\nm.train()\nm.encoder.eval()",
        "m = Net()\nw = EvalWrapper(m.encoder)\nm.encoder.train()\nm.eval()",
        "net = Net()\ninner = EvalWrapper(net)\nw = Wrapper(inner)\nnet.train()\nnet.eval()",
        # Switched before the wrapper evals it.
        "net = Net()\nnet.train()\nw = EvalWrapper(net)",
        # The wrapper holds a copy.
        "net = Net().eval()\nw = Copying(net)\nnet.train()",
        # A module taken some other way may be any part.
        "m = Net()\nw = EvalWrapper(m.encoder)\nlist(m.children())[1].train()",
    ],
)
def test_a_switch_of_something_else_than_the_stored_part_is_quiet(body):
    assert messages(body) == []


def test_a_class_that_changes_its_attribute_in_a_method_is_not_followed():
    head = HEAD.replace(
        "        return self.model(x)\n\n\nclass Copying",
        "        return self.model(x)\n\n    def swap(self, other):\n        self.model = other\n\n\nclass Copying",
    )
    assert messages("net = Net().eval()\nw = Wrapper(net)\nnet.train()", head=head) == []


def test_qat_capture_of_a_wrapper_whose_part_is_back_in_train_mode_is_quiet():
    qat = HEAD.replace("prepare_pt2e(torch", "prepare_qat_pt2e(torch")
    assert len(messages("net = Net()\nw = EvalWrapper(net)", rule="QL202", head=qat)) == 1
    assert messages("net = Net()\nw = EvalWrapper(net)\nnet.train()", rule="QL202", head=qat) == []


def test_a_wrapper_class_of_another_module():
    models = HEAD.split("\n\ndef main")[0]
    main = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
from models import EvalWrapper, Net


def main(x, q):
    m = Net()
    w = EvalWrapper(m.encoder)
    TAIL
    return prepare_pt2e(torch.export.export(w, (x,)).module(), q)
"""
    assert lint(main.replace("TAIL", "m.decoder.train()"), select=("QL201",), overlay={"models.py": models}) == []
    (d,) = lint(main.replace("TAIL", "m.train()"), select=("QL201",), overlay={"models.py": models})
    assert "(after `m.train()` at line 9)" in d.message and "BatchNorm1d" in d.message


def test_an_eval_of_one_part_leaves_the_other_part_in_train_mode():
    head = HEAD.replace(
        "\n\nclass Wrapper(",
        """

class Pair(nn.Module):
    def __init__(self, first, second):
        super().__init__()
        self.first = first.eval()
        self.second = second.eval()

    def forward(self, x):
        return self.second(self.first(x))


class Wrapper(""",
    )
    body = "a = Net()\nb = Net()\nw = Pair(a, b)\na.train()\nb.train()\nSWITCH"
    (message,) = messages(body.replace("SWITCH", "a.eval()"), head=head)
    assert "(after `b.train()`" in message
    (message,) = messages(body.replace("SWITCH", "b.eval()"), head=head)
    assert "(after `a.train()`" in message
    assert messages(body.replace("SWITCH", "b.eval()\na.eval()"), head=head) == []
    assert messages("m = Net()\nw = Pair(m.encoder, m.decoder)\nm.train()\nm.encoder.eval()", head=head) != []
    assert messages("m = Net()\nw = Pair(m.encoder, m.decoder)\nm.train()\nm.eval()", head=head) == []


# A wrapper given a part of a module built here is in the mode of that module: `Module.eval()`
# and `.train()` reach every submodule (`constructed_values._taken_parts`).
@pytest.mark.parametrize(
    "body",
    [
        "m = Net().eval()\nw = Wrapper(m.encoder)",
        "m = Net().eval()\nenc = m.encoder\nw = Wrapper(enc)",
        "m = Net()\nm.eval()\nw = Wrapper(model=m.encoder)",
        "m = Net().eval()\nw = Wrapper(m.decoder)",
        # A part evaled on its own; another part switched back.
        "m = Net().eval()\nm.encoder.eval()\nw = Wrapper(m.encoder)",
        "m = Net().eval()\nm.decoder.train()\nw = Wrapper(m.encoder)",
    ],
)
def test_a_part_taken_from_an_evaled_model_is_quiet(body):
    assert messages(body) == []


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("m = Net()\nw = Wrapper(m.encoder)", "built at line"),
        ("m = Net().eval()\nm.train()\nw = Wrapper(m.encoder)", "(after `m.train()`"),
        # A part switched back on its own (or a part of it) before the wrapper takes it: the
        # part `Net.__init__` built, in the mode that switch left it (`init_parts`).
        ("m = Net().eval()\nm.encoder.train()\nw = Wrapper(m.encoder)", "(after `m.encoder.train()`"),
        ("m = Net().eval()\nm.encoder[1].train()\nw = Wrapper(m.encoder)", "with `m.encoder[1]` in train mode"),
        ("m = Net().eval()\nw = Wrapper(m.encoder.eval())\nm.encoder.train()", "(after `m.encoder.train()`"),
        ("m = Net().eval()\nenc = m.encoder\nenc.train()\nw = Wrapper(enc)", "(after `enc.train()`"),
        # Another part built here in train mode beside the evaled one.
        ("m = Net().eval()\nw = Wrapper(nn.Sequential(m.encoder, nn.Dropout(0.1)))", "built at line"),
    ],
)
def test_a_part_taken_from_a_train_mode_model_is_reported(body, why):
    (message,) = messages(body)
    assert why in message


# `nn.Sequential(net)` holds the very module it is given, as a class storing it does.
@pytest.mark.parametrize(
    ("body", "switch"),
    [
        ("net = Net().eval()\nw = nn.Sequential(net)\nnet.train()", "net.train()"),
        ("m = Net().eval()\nw = nn.Sequential(m.encoder)\nm.train()", "m.train()"),
        ("net = Net().eval()\nw = nn.Sequential(net, nn.Linear(4, 4))\nnet.train()", "net.train()"),
    ],
)
def test_a_module_switched_back_after_an_nn_sequential_is_built_around_it_is_reported(body, switch):
    (message,) = messages(body)
    assert f"(after `{switch}" in message and "BatchNorm1d" in message


@pytest.mark.parametrize(
    "body",
    [
        "net = Net().eval()\nw = nn.Sequential(net)\nother = Net()\nother.train()",
        "net = Net().eval()\nw = nn.Sequential(net)\nnet.train()\nnet.eval()",
        "net = Net().eval()\nw = nn.Sequential(net)\nif flag:\n    net.train()\nw.eval()",
        "net = Net()\nnet.train()\nnet.eval()\nw = nn.Sequential(net)",
        "m = Net().eval()\nw = nn.Sequential(m.encoder)\nm.decoder.train()",
    ],
)
def test_an_nn_sequential_whose_module_stays_evaled_is_quiet(body):
    assert messages(body) == []

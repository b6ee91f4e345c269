"""QL201/QL202: a part of the model switched after the whole model (`part_modes`):
`m.eval(); m.encoder.train()` before a PTQ capture, `m.train(); m.encoder.eval()` before a QAT
capture. `Module.train(mode)` sets every submodule, so the part keeps its own mode until the
whole model is switched again, and the graph bakes in that part's dropout and batch norm.

Quiet when the part is switched back (itself, or the whole model) before the capture, when
the switch is of another model, of a part holding nothing mode-dependent, on a path that does
not reach the capture's prepare, after the capture, or in a function not called before it.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e
from models import build


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.bn = nn.BatchNorm2d(3)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.bn(self.conv(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.layers = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.1))
        self.head = nn.Linear(3, 3)

    def forward(self, x):
        return self.head(self.layers(self.encoder(x)))


class Wrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)


def main(x, q, flag):
    BODY
    return PREPARE(torch.export.export(CAPTURED, (x,)).module(), q)
"""

FIRST = HEAD.splitlines().index("    BODY") + 1  # the row of the body's first line


def messages(body: str, rule: str = "QL201", captured: str = "m") -> list[str]:
    prepare = "prepare_pt2e" if rule == "QL201" else "prepare_qat_pt2e"
    src = HEAD.replace("BODY", body.replace("\n", "\n    ")).replace("PREPARE", prepare)
    return [d.message for d in lint(src.replace("CAPTURED", captured), select=(rule,))]


@pytest.mark.parametrize(
    ("body", "part", "switch", "held"),
    [
        ("m = Net().eval()\nm.encoder.train()", "m.encoder", "m.encoder.train()", "BatchNorm2d and Dropout"),
        ("m = Net()\nm.eval()\nm.encoder.train(True)", "m.encoder", "m.encoder.train(True)", "BatchNorm2d"),
        ("m = Net().eval()\nenc = m.encoder\nenc.train()", "enc", "enc.train()", "BatchNorm2d and Dropout"),
        (
            'm = Net().eval()\ngetattr(m, "encoder").train()',
            'getattr(m, "encoder")',
            'encoder").train()',
            "BatchNorm2d and Dropout",
        ),
        ("m = Net().eval()\nm.layers[1].train()", "m.layers[1]", "m.layers[1].train()", "Dropout"),
        # Switched back, then again: the last switch counts.
        (
            "m = Net().eval()\nm.encoder.train()\nm.encoder.eval()\nm.encoder.train()",
            "m.encoder",
            f"line {FIRST + 3}",
            "BatchNorm2d and Dropout",
        ),
        # Another part switched back leaves this one as it is.
        (
            "m = Net().eval()\nm.encoder.train()\nm.layers.train()\nm.layers.eval()",
            "m.encoder",
            f"line {FIRST + 1}",
            "BatchNorm2d and Dropout",
        ),
    ],
)
def test_ptq_capture_with_a_part_in_train_mode(body, part, switch, held):
    (message,) = messages(body)
    assert "in train mode" in message
    assert f"with `{part}` in train mode after" in message
    assert switch in message
    assert f"which holds {held}" in message


@pytest.mark.parametrize(
    "body",
    [
        "m = Net().eval()\nm.encoder.train()\nm.encoder.eval()",  # switched back
        "m = Net().eval()\nm.encoder.conv.train()\nm.encoder.train()\nm.encoder.eval()",  # with what is inside it
        "m = Net().eval()\nm.encoder.train()\nm.eval()",  # the whole model after it
        "m = Net().eval()\nm.encoder.train()\nm.train(False)",
        "m = Net().eval()\nother = Net().eval()\nother.encoder.train()",  # another model
        "m = Net().eval()\nm.head.train()",  # a Linear: no mode-dependent part
        "m = Net().eval()\nm.encoder.conv.train()",  # a Conv2d inside the encoder
        "m = Net().eval()\nm.encoder.train(flag)",  # a mode not known, as for the whole model
        "m = Net().eval()\nm.encoder.train()\nm.encoder = nn.Linear(3, 3)",  # the switched part replaced
        "m = Net().eval()\ndef unfreeze():\n    m.encoder.train()",  # never called before the capture
        "m = Net().eval()\nm.encoder.requires_grad_(True)",  # not a mode switch
        "m = Net().eval()\nm.encoder.eval()",  # the part in the mode the model is in
    ],
)
def test_ptq_quiet_look_alikes(body):
    assert messages(body) == []


def test_switch_after_the_capture_is_quiet():
    src = HEAD.replace(
        "    BODY\n    return PREPARE(torch.export.export(CAPTURED, (x,)).module(), q)",
        "    m = Net().eval()\n    gm = torch.export.export(m, (x,)).module()\n    m.encoder.train()\n"
        "    return prepare_pt2e(gm, q)",
    )
    assert [d.message for d in lint(src, select=("QL201",))] == []


def test_switch_on_a_branch_the_prepare_is_not_on_is_quiet():
    src = HEAD.replace(
        "    BODY\n    return PREPARE(torch.export.export(CAPTURED, (x,)).module(), q)",
        "    m = Net().eval()\n    if flag:\n        m.encoder.train()\n"
        "    gm = torch.export.export(m, (x,)).module()\n"
        "    if not flag:\n        return prepare_pt2e(gm, q)\n    return gm",
    )
    assert [d.message for d in lint(src, select=("QL201",))] == []


def test_switch_on_a_branch_that_reaches_the_prepare_is_reported():
    (message,) = messages("m = Net().eval()\nif flag:\n    m.encoder.train()")
    assert "with `m.encoder` in train mode" in message


def test_part_of_a_model_whose_class_is_not_known_is_reported():
    # As a whole model of a class that does not resolve: its content may depend on the mode.
    (message,) = messages("m = build().eval()\nm.encoder.train()")
    assert f"with `m.encoder` in train mode after `m.encoder.train()` at line {FIRST + 1}" in message
    assert "holds" not in message


def test_wrapper_of_another_part_is_quiet():
    # `m.encoder` is wrapped; the switched `m.layers` is not in it.
    assert messages("m = Net().eval()\nm.layers.train()\nw = Wrapper(m.encoder)", captured="w") == []


def test_wrapper_of_the_switched_part_in_qat_is_reported():
    # The wrapper holds the part `Net.__init__` built, in the mode its own switch left it (`init_parts`).
    (message,) = messages("m = Net()\nm.train()\nm.encoder.eval()\nw = Wrapper(m.encoder)", "QL202", captured="w")
    assert "(after `m.encoder.eval()`" in message


@pytest.mark.parametrize(
    ("body", "switch"),
    [
        ("m = Net()\nm.train()\nm.encoder.eval()", "m.encoder.eval()"),
        ("m = Net()\nm.encoder.eval()", "m.encoder.eval()"),  # built in train mode
        ("m = Net()\nm.train()\nm.encoder.train(False)", "m.encoder.train(False)"),
        ("m = Net()\nm.train()\nm.layers[1].eval()", "m.layers[1].eval()"),
    ],
)
def test_qat_capture_with_a_part_in_eval_mode(body, switch):
    (message,) = messages(body, "QL202")
    assert "captured for QAT in eval mode" in message
    assert f"after `{switch}`" in message


@pytest.mark.parametrize(
    "body",
    [
        "m = Net()\nm.train()\nm.head.eval()",  # a Linear: nothing depends on the mode
        "m = Net()\nm.train()\nm.encoder.eval()\nm.encoder.train()",
        "m = Net()\nm.train()\nm.encoder.eval()\nm.train()",
        "m = Net()\nm.train()\nother = Net()\nother.encoder.eval()",
    ],
)
def test_qat_quiet_look_alikes(body):
    assert messages(body, "QL202") == []


def test_ptq_after_a_part_evaled_in_a_train_model_still_says_train():
    # The rest of the model is in train mode: the whole-model switch stays the reason.
    (message,) = messages("m = Net()\nm.train()\nm.encoder.eval()")
    assert "after `m.train()`" in message


CALLERS = (
    HEAD.split("def main(")[0]
    + """\
def quantize(model, x, q):
    return prepare_pt2e(torch.export.export(model, (x,)).module(), q)


def quantize_qat(model, x, q):
    return prepare_qat_pt2e(torch.export.export(model, (x,)).module(), q)


def main(x, q):
    BODY
"""
)


def caller_messages(body: str, rule: str) -> list[str]:
    return [d.message for d in lint(CALLERS.replace("BODY", body.replace("\n", "\n    ")), select=(rule,))]


def test_part_switched_before_a_helper_captures_for_ptq():
    (message,) = caller_messages("m = Net().eval()\nm.encoder.train()\nquantize(m, x, q)", "QL201")
    assert "passes it with `m.encoder` in train mode after `m.encoder.train()`" in message
    assert "which holds BatchNorm2d and Dropout" in message


def test_part_switched_before_a_helper_captures_for_qat():
    (message,) = caller_messages("m = Net()\nm.train()\nm.encoder.eval()\nquantize_qat(m, x, q)", "QL202")
    assert "passes it with `m.encoder` in eval mode after `m.encoder.eval()`" in message


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        ("m = Net().eval()\nm.encoder.train()\nm.encoder.eval()\nquantize(m, x, q)", "QL201"),
        ("m = Net().eval()\nm.head.train()\nquantize(m, x, q)", "QL201"),
        # The helper captures for QAT: a train-mode part is what it wants.
        ("m = Net().eval()\nm.encoder.train()\nquantize_qat(m, x, q)", "QL201"),
        ("m = Net()\nm.train()\nm.encoder.eval()\nm.encoder.train()\nquantize_qat(m, x, q)", "QL202"),
        ("m = Net()\nm.train()\nm.head.eval()\nquantize_qat(m, x, q)", "QL202"),
        # The helper captures for PTQ: an eval-mode part is what it wants.
        ("m = Net()\nm.train()\nm.encoder.eval()\nquantize(m, x, q)", "QL202"),
    ],
)
def test_callers_quiet_look_alikes(body, rule):
    # The helper the snippet does not call is reported for its parameter, as without a caller.
    assert not any("m.encoder" in m or "m.head" in m for m in caller_messages(body, rule))

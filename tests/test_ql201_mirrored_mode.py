"""QL201: a wrapper whose `__init__` ends with `self.train(model.training)` takes the mode of
the module it wraps (timmx's `PrePostWrapper`, built by a helper from the model its caller
evaled). `.train(flag)` also moves every child, so the instance and what it holds are in the
wrapped module's mode, known at the construction or only at the helper's callers.

Quiet when the wrapped model was evaled, also through a helper that wraps its parameter.
Loud when the wrapped model is in train mode, when the switch is under a branch, is not the
last switch of `self`, names an attribute of `self` or a rebound parameter.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(x)


class Wrapper(nn.Module):
    def __init__(self, model, softmax=False):
        super().__init__()
        self.model = model
        self.softmax = softmax
        INIT_TAIL

    def forward(self, x):
        return self.model(x)


def wrap(model):
    return Wrapper(model, softmax=True)


def build(wrap_it):
    model = Net()
    MODE_LINE
    if wrap_it:
        model = wrap(model)
    return model


def main(x, q):
    m = build(True)
    ep = torch.export.export(m, (x,)).module()
    return prepare_pt2e(ep, q)
"""
MIRROR = "self.train(model.training)"


def ql201(init_tail: str = MIRROR, mode_line: str = "model.eval()", tail: str = "") -> list[str]:
    """The lines reported, as text (the snippets above change the line numbers)."""
    src = HEAD.replace("INIT_TAIL", init_tail).replace("MODE_LINE", mode_line) + tail
    lines = src.splitlines()
    return [lines[d.range.start.row - 1].strip() for d in lint(src, select=("QL201",))]


CAPTURE = "ep = torch.export.export(m, (x,)).module()"


def test_a_wrapper_that_takes_the_mode_of_an_evaled_model_through_a_helper_is_quiet():
    assert ql201() == []


def test_the_wrapped_models_mode_is_used_by_keyword_and_in_place():
    direct = (
        "\n\ndef other(x, q):\n"
        "    m = Wrapper(softmax=False, model=Net().eval())\n"
        "    return prepare_pt2e(torch.export.export(m, (x,)).module(), q)\n"
    )
    assert ql201(tail=direct) == []


@pytest.mark.parametrize(
    ("init_tail", "mode_line"),
    [
        # The wrapped model is in train mode: so is the wrapper.
        (MIRROR, "pass"),
        (MIRROR, "model.train()"),
        # Not a mirror: under a branch, overridden, of `self`'s own part, a rebound parameter.
        ("if softmax:\n            " + MIRROR, "model.eval()"),
        (MIRROR + "\n        self.train()", "model.eval()"),
        ("self.train(self.model.training)", "model.eval()"),
        ("model = nn.Sequential(model)\n        " + MIRROR, "model.eval()"),
        # Without the switch the wrapper starts in train mode, its parameter in its callers'.
        ("pass", "pass"),
    ],
)
def test_a_wrapper_that_does_not_take_an_eval_models_mode_is_reported(init_tail, mode_line):
    assert ql201(init_tail, mode_line) == [CAPTURE]


def test_a_wrapper_holding_nothing_else_is_in_the_mode_of_the_model_it_stores():
    # Without the switch too: its own content is mode-free, so it is in the mode of the
    # module `wrap`'s callers pass (`given_modes`), as it is of a local evaled module.
    assert ql201("pass", "model.eval()") == []

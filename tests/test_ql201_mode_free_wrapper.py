"""QL201/QL202: a helper capturing a project wrapper of its parameter (`def export_it(model, x):
return torch.export.export(W(model, 3), (x,))`), called with a mode-free model (`Free()`: no
batch norm, dropout or `self.training`), was reported: the capture the caller sees had no
origin but the helper's construction, so its content was never read and the mode counted as
possibly mattering. A wrapper that takes the mode of what it is given (`given_modes`), holds
nothing found mode-dependent of its own and whose call passes nothing else that may be a
module is now that module for the caller's capture (`given_modes.wrapped_param`): its
construction's content is judged.

Still reported: a train-mode model with batch norm, a wrapper with a Dropout of its own, one
whose `__init__` calls `.train()` on what it stores or sets `training`, one given a second
module, one holding a part of a package that is not read.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e
from elsewhere import Cache


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(x)


class Free(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))


class W(nn.Module):
    def __init__(self, model, n=3):
        super().__init__()
        self.model = model
        self.register_buffer("cache", torch.zeros(n))

    def forward(self, x):
        return self.model(x) + self.cache


class Dropped(nn.Module):
    def __init__(self, model, n=3):
        super().__init__()
        self.model = model
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.model(x))


class Trains(nn.Module):
    def __init__(self, model, n=3):
        super().__init__()
        self.model = model.train()

    def forward(self, x):
        return self.model(x)


class Flags(nn.Module):
    def __init__(self, model, n=3):
        super().__init__()
        self.model = model
        self.training = True

    def forward(self, x):
        return self.model(x)


class Cached(nn.Module):
    def __init__(self, model, n=3):
        super().__init__()
        self.model = model
        self.cache = Cache(n)

    def forward(self, x):
        return self.model(x)


class Pair(nn.Module):
    def __init__(self, model, other):
        super().__init__()
        self.model = model
        self.other = other

    def forward(self, x):
        return self.other(self.model(x))


def export_it(model, x):
    return torch.export.export(WRAP, (x,))


def run(q, x):
    BODY
"""


def messages(wrap: str, body: str, rule: str = "QL201") -> list[str]:
    src = HEAD.replace("WRAP", wrap).replace("BODY", body.replace("\n", "\n    "))
    return [d.message for d in lint(src, select=(rule,))]


@pytest.mark.parametrize(
    ("wrap", "body"),
    [
        ("W(model, 3)", "model = Free()\nprepare_pt2e(export_it(model, x).module(), q)"),
        ("W(model)", "prepare_pt2e(export_it(Free(), x).module(), q)"),
        ("W(model, n=4)", "model = Free()\nprepare_pt2e(export_it(model, x).module(), q)"),
        ("W(model=model)", "prepare_pt2e(export_it(nn.Linear(3, 3), x).module(), q)"),
    ],
)
def test_a_mode_free_model_through_a_mode_free_wrapper_is_quiet(wrap, body):
    assert messages(wrap, body) == []


def test_a_mode_free_model_through_the_wrapper_is_quiet_for_qat_too():
    body = "prepare_qat_pt2e(export_it(Free().eval(), x).module(), q)"
    assert messages("W(model, 3)", body, "QL202") == []


@pytest.mark.parametrize(
    ("wrap", "body", "named"),
    [
        ("W(model, 3)", "prepare_pt2e(export_it(Net(), x).module(), q)", "BatchNorm1d"),
        ("Dropped(model)", "prepare_pt2e(export_it(Free(), x).module(), q)", "Dropout"),
        ("Trains(model)", "m = Free().eval()\nprepare_pt2e(export_it(m, x).module(), q)", ""),
        ("Trains(model)", "prepare_pt2e(export_it(Net().eval(), x).module(), q)", ""),
        ("Flags(model)", "prepare_pt2e(export_it(Free(), x).module(), q)", ""),
        ("Cached(model)", "prepare_pt2e(export_it(Free(), x).module(), q)", ""),
        ("Pair(model, Net())", "prepare_pt2e(export_it(Free(), x).module(), q)", ""),
        ("Pair(model, x)", "prepare_pt2e(export_it(Free(), x).module(), q)", ""),
    ],
)
def test_the_wrapper_is_still_reported_where_it_may_hold_what_the_mode_changes(wrap, body, named):
    (message,) = messages(wrap, body)
    assert "captured for PTQ in train mode" in message and named in message

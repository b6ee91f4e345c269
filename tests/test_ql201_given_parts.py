"""QL201 on a module put in eval mode and then given a part built in train mode
(`model.eval()`, then `model.bn = nn.BatchNorm1d(4)`, then captured for PTQ): the part is in
train mode whatever the module is in, and the capture bakes its training behaviour in
(measured on torch 2.13/torchao 0.18: captured exactly as the all-train model is, calibration
moves the running mean, max error 3.9 against 0.04). `model_builds.Builds.given_part`."""

from __future__ import annotations

import textwrap

from qlint.diagnostic import Applicability
from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bn = nn.Identity()

    def forward(self, x):
        return self.bn(self.fc(x))

"""  # the snippets start on line 15


def found(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL201", "QL202"))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


def test_an_evaled_model_given_a_train_mode_part():
    (d,) = found(
        """
        def f(q, x):
            model = Net()
            model.eval()
            model.bn = nn.BatchNorm1d(4)
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)
        """
    )
    assert (d.code, d.range.start.row) == ("QL201", 20)
    assert "given a part built in train mode at line 19 (`model.bn`)" in d.message
    assert "BatchNorm1d" in d.message
    assert d.fix.applicability is Applicability.SAFE


def test_dropout_and_a_field_set_in_the_same_method():
    assert rows(
        """
        def f(q, x):
            model = Net().eval()
            model.fc = nn.Dropout(0.5)
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)

        class Runner:
            def quantize(self, q, x):
                self.model = Net()
                self.model.eval()
                self.model.bn = nn.BatchNorm1d(4)
                return prepare_pt2e(torch.export.export(self.model, (x,)).module(), q)
        """
    ) == [19, 26]


def test_parts_that_leave_the_capture_right_are_quiet():
    # An evaled part, a mode-free part, an eval after the part, a part handed in (its mode
    # is its caller's), and a QAT capture, which wants train mode.
    assert not rows(
        """
        def evaled_part(q, x):
            model = Net().eval()
            model.bn = nn.BatchNorm1d(4).eval()
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)

        def mode_free_part(q, x):
            model = Net().eval()
            model.bn = nn.Linear(4, 4)
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)

        def evaled_after(q, x):
            model = Net().eval()
            model.bn = nn.BatchNorm1d(4)
            model.eval()
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)

        def passed_part(q, x, bn):
            model = Net().eval()
            model.bn = bn
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)

        def qat(q, x):
            model = Net()
            model.train()
            model.bn = nn.BatchNorm1d(4)
            return prepare_qat_pt2e(torch.export.export(model, (x,)).module(), q)
        """
    )

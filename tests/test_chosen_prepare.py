"""QL201/QL202/QL203: a prepare API chosen by a conditional expression (lane fresh36, issue 14).

DaKanji's `prepare_xnnpack(model, example, *, qat)` binds `prepare = prepare_qat_pt2e if qat
else prepare_pt2e` and returns `prepare(captured, quantizer)`; its test captures a train-mode
model (batch norm, dropout) with `qat=False`. The call names no API, so the capture reached no
sink and QL201 was quiet, while the same helper written `if qat: return prepare_qat_pt2e(...)`
was reported. The choice is now read as each arm under its side of the test, as an `if` is: a
caller's `qat=True` rules the PTQ arm out, `qat=False` the QAT one, and the result is a
prepared graph.
"""

from __future__ import annotations

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))


def build(model, x, q, *, qat):
    captured = export(model, x).module()
"""
BOUND = """\
    prepare = prepare_qat_pt2e if qat else prepare_pt2e
    return prepare(captured, q)
"""
INLINE = """\
    return (prepare_qat_pt2e if qat else prepare_pt2e)(captured, q)
"""
CAPTURE_ROW = HEAD.splitlines().index("    captured = export(model, x).module()") + 1


def run(choice: str, main: str, select=("QL201", "QL202")):
    return lint(HEAD + choice + "\n\n" + main, select=select)


def codes(diagnostics):
    return sorted((d.code, d.range.start.row) for d in diagnostics)


def test_ptq_arm_reports_a_train_mode_model():
    main = """\
def main(x, q):
    gm = build(Net(), x, q, qat=False)
    gm(*x)
    return convert_pt2e(gm)
"""
    for choice in (BOUND, INLINE):
        assert codes(run(choice, main)) == [("QL201", CAPTURE_ROW)]


def test_qat_arm_reports_an_evaled_model():
    main = """\
def main(x, q, loader):
    gm = build(Net().eval(), x, q, qat=True)
    for batch in loader:
        gm(batch).sum().backward()
    return convert_pt2e(gm)
"""
    for choice in (BOUND, INLINE):
        assert codes(run(choice, main)) == [("QL202", CAPTURE_ROW)]


def test_the_other_arm_is_ruled_out_by_the_callers_flag():
    # A train-mode model for QAT and an evaled one for PTQ: each caller's flag picks the arm
    # its model is right for, so neither rule has anything to say.
    main = """\
def main(x, q, loader):
    qat = build(Net(), x, q, qat=True)
    for batch in loader:
        qat(batch).sum().backward()
    ptq = build(Net().eval(), x, q, qat=False)
    ptq(*x)
    return convert_pt2e(qat), convert_pt2e(ptq)
"""
    for choice in (BOUND, INLINE):
        assert run(choice, main) == []


def test_the_result_is_a_prepared_graph():
    main = """\
def main(x, q):
    gm = build(Net().eval(), x, q, qat=False)
    gm(*x)
    gm.eval()
    return convert_pt2e(gm)
"""
    found = run(BOUND, main, select=("QL201", "QL202", "QL203", "QL204"))
    assert [(d.code, d.range.start.row) for d in found] == [("QL203", len((HEAD + BOUND + "\n\n").splitlines()) + 4)]
    assert "NotImplementedError" in found[0].message


def test_a_calibrated_ptq_arm_is_converted_quietly():
    # The PTQ arm's graph calibrated by one forward pass: the convert has nothing to say.
    main = """\
def main(x, q):
    gm = build(Net().eval(), x, q, qat=False)
    gm(*x)
    return convert_pt2e(gm)
"""
    assert run(BOUND, main, select=("QL201", "QL202", "QL203", "QL204")) == []


def test_a_choice_with_another_callable_is_not_read_as_a_prepare():
    # Only a choice between the two prepare APIs is read; anything else stays a call qlint does
    # not follow, as before.
    choice = """\
    prepare = prepare_pt2e if qat else (lambda gm, quantizer: gm)
    return prepare(captured, q)
"""
    main = """\
def main(x, q):
    gm = build(Net(), x, q, qat=False)
    gm(*x)
    return convert_pt2e(gm)
"""
    assert run(choice, main) == []

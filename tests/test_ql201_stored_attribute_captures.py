"""QL201/QL202: a `self.model` stored from `__init__`'s parameter stays the constructions'
model when another method only captures or copies it (lane fresh35, issue 14).

A quantization manager class stores the model it is given and captures it for PTQ in one
method and for QAT in another (a shape met in users' PT2E code). The PTQ capture's mode is the
model the constructions pass; a method handing the attribute to a call may switch its mode,
so such an attribute was read as unknown, and the train-mode model built at the construction
went unreported as soon as a second method captured it too. `torch.export.export`,
`export_for_training`, `capture_pre_autograd_graph` and `copy.deepcopy` never switch the module
they are given (torch 2.13's export reads `training`, never sets it), so a method calling only
those keeps the attribute what `__init__` stored. Any other call still may switch it.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

HEAD = """\
import copy

import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))


class Manager:
    def __init__(self, model, quantizer):
        self.float_model = model
        self.quantizer = quantizer

    def inputs(self):
        return (torch.randn(1, 3, 8, 8),)

    def quantize(self):
        exported = torch.export.export(self.float_model, self.inputs()).module()
        prepared = prepare_pt2e(exported, self.quantizer)
        prepared(*self.inputs())
        return convert_pt2e(prepared)
"""
PTQ_LINE = "        exported = torch.export.export(self.float_model, self.inputs()).module()"
PTQ_ROW = HEAD.splitlines().index(PTQ_LINE) + 1

QAT = """
    def qat(self, loader):
        exported = torch.export.export(self.float_model, self.inputs()).module()
        prepared = prepare_qat_pt2e(exported, self.quantizer)
        for x in loader:
            prepared(x).sum().backward()
        return prepared
"""


def run(other_method: str, construction: str, select=("QL201",), extra: str = ""):
    body = textwrap.indent(textwrap.dedent(other_method).strip("\n"), "    ")
    main = f"""

def main(q):
    manager = Manager({construction}, q)
    manager.quantize()
"""
    return lint(HEAD + "\n" + body + "\n" + extra + main, select=select)


CAPTURES_OR_COPIES = [
    QAT,
    """
    def qat(self, loader):
        exported = torch.export.export_for_training(self.float_model, self.inputs()).module()
        return prepare_qat_pt2e(exported, self.quantizer)
    """,
    """
    def fp32_program(self):
        return torch.export.export(mod=self.float_model, args=self.inputs())
    """,
    """
    def baseline(self):
        return copy.deepcopy(self.float_model)
    """,
]


@pytest.mark.parametrize("other", CAPTURES_OR_COPIES)
def test_a_train_mode_model_is_reported_when_another_method_only_captures_or_copies_it(other):
    found = run(other, "Net()")
    assert [(d.code, d.range.start.row) for d in found] == [("QL201", PTQ_ROW)]
    assert "built at line" in found[0].message


@pytest.mark.parametrize("other", CAPTURES_OR_COPIES)
def test_an_eval_mode_model_stays_quiet_when_another_method_only_captures_or_copies_it(other):
    assert run(other, "Net().eval()") == []


@pytest.mark.parametrize(
    "other",
    [
        # A project helper (this one evals what it is given), or any call qlint does not
        # know, may switch the attribute's mode before `quantize` runs; so may a switch of it.
        """
        def warm_up(self):
            run_epoch(self.float_model)
        """,
        """
        def warm_up(self):
            self.float_model.eval()
        """,
        """
        def warm_up(self):
            torch.export.export(self.float_model, self.inputs())
            run_epoch(self.float_model)
        """,
    ],
)
def test_a_method_handing_the_attribute_to_another_call_still_leaves_its_mode_unknown(other):
    helper = "\n\ndef run_epoch(model):\n    model.eval()\n"
    assert run(other, "Net()", extra=helper) == []


def test_the_qat_capture_of_the_same_attribute_reads_the_constructions_too():
    # QL202 judges the other method's capture by the same constructions: a model built in
    # train mode is right for QAT, an evaled one is reported there.
    assert run(QAT, "Net()", select=("QL202",)) == []
    found = run(QAT, "Net().eval()", select=("QL202",))
    assert [d.code for d in found] == ["QL202"]

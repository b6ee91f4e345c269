"""QL201: a model whose mode-dependent part was replaced by a converted graph before the
whole model is captured (torchao's and ExecuTorch's `test_reentrant`): quiet; look-alikes
that leave a mode-dependent part in the model stay reported."""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e


class ConvBn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3)
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_bn = ConvBn()
        self.linear = torch.nn.Linear(3, 8)
        self.relu = torch.nn.ReLU()

    def forward(self, x):
        return self.relu(self.linear(self.conv_bn(x)))
"""


def rows(src: str, head: str = HEAD, rule: str = "QL201") -> list[int]:
    text = head + textwrap.dedent(src)
    return [d.range.start.row - head.count("\n") for d in lint(text, select=(rule,))]


REENTRANT = """
def test_reentrant(qat_quantizer, quantizer, x):
    m = Net()
    m.conv_bn = export(m.conv_bn, (x,)).module()
    m.conv_bn = prepare_qat_pt2e(m.conv_bn, qat_quantizer)
    m(x)
    m.conv_bn = convert_pt2e(m.conv_bn)
    m = export(m, (x,)).module()
    m = prepare_pt2e(m, quantizer)
    m(x)
    return convert_pt2e(m)
"""


def test_part_replaced_by_converted_graph_is_quiet():
    assert rows(REENTRANT) == []


def test_part_not_converted_last_is_reported():
    # The last store is the QAT-prepared graph, never converted: not the narrow shape.
    src = REENTRANT.replace("    m.conv_bn = convert_pt2e(m.conv_bn)\n", "")
    assert rows(src) == [7]


def test_other_part_replaced_is_reported():
    # The batch norm lives in `conv_bn`; the converted graph replaced `linear`.
    src = REENTRANT.replace("m.conv_bn = convert_pt2e(m.conv_bn)", "m.linear = convert_pt2e(m.conv_bn)")
    assert rows(src) == [8]


def test_replacement_in_a_branch_is_reported():
    assert rows(
        """
        def quantize(part_quantizer, quantizer, x, first):
            m = Net()
            if first:
                m.conv_bn = convert_pt2e(prepare_pt2e(export(m.conv_bn, (x,)).module(), part_quantizer))
            return prepare_pt2e(export(m, (x,)).module(), quantizer)
        """
    ) == [6]


def test_model_rebuilt_after_replacement_is_reported():
    assert rows(
        """
        def quantize(part_quantizer, quantizer, x):
            m = Net()
            m.conv_bn = convert_pt2e(prepare_pt2e(export(m.conv_bn, (x,)).module(), part_quantizer))
            m = Net()
            return prepare_pt2e(export(m, (x,)).module(), quantizer)
        """
    ) == [6]


def test_other_part_added_besides_replacement_is_reported():
    assert rows(
        """
        def quantize(part_quantizer, quantizer, x):
            m = Net()
            m.conv_bn = convert_pt2e(prepare_pt2e(export(m.conv_bn, (x,)).module(), part_quantizer))
            m.extra = torch.nn.Dropout()
            return prepare_pt2e(export(m, (x,)).module(), quantizer)
        """
    ) == [6]


def test_dependent_part_left_beside_the_replaced_one_is_reported():
    head = HEAD.replace("self.relu = torch.nn.ReLU()", "self.relu = torch.nn.Dropout()")
    assert rows(REENTRANT, head) == [8]


def test_aliased_part_is_reported():
    # `self.bn` keeps the batch norm of the replaced part in the model.
    head = HEAD.replace("self.relu = torch.nn.ReLU()", "self.relu = torch.nn.ReLU()\n        self.bn = self.conv_bn.bn")
    assert rows(REENTRANT, head) == [8]


def test_part_stored_twice_in_the_class_is_reported():
    head = HEAD.replace(
        "return self.relu(self.linear(self.conv_bn(x)))",
        "self.conv_bn = ConvBn()\n        return self.relu(self.linear(self.conv_bn(x)))",
    )
    assert rows(REENTRANT, head) == [8]


def test_class_reading_training_is_reported():
    head = HEAD.replace(
        "return self.relu(self.linear(self.conv_bn(x)))",
        "return self.relu(self.linear(self.conv_bn(x))) if self.training else x",
    )
    assert rows(REENTRANT, head) == [8]


def test_qat_capture_of_eval_model_with_replaced_part_is_quiet():
    src = """
    def quantize(part_quantizer, quantizer, x):
        m = Net().eval()
        m.conv_bn = convert_pt2e(prepare_pt2e(export(m.conv_bn, (x,)).module(), part_quantizer))
        return prepare_qat_pt2e(export(m, (x,)).module(), quantizer)
    """
    assert rows(src, rule="QL202") == []
    assert rows(src.replace("m.conv_bn = convert_pt2e", "m.conv_bn = prepare_pt2e"), rule="QL202") == [5]

"""QL201: what a model holds, read through operator calls and dtype arguments (issue 14,
item 7; `class_contents`, `harmless_calls`).

ExecuTorch's Qualcomm test models call operators by their overload
(`torch.ops.aten.pow.Scalar(self._base, x)` in `PowScalar.forward`) and take dtypes in their
constructors (`TriuConstant(1, constant_dtype=torch.bool)`, `Arange(..., dtype=torch.float32)`).
The overload's capitalised name read as a class of torch that may build a module, and a
dtype argument as a value that may be one: the models were not known in full, and a caller
handing them to a helper was not classified. An operator returns tensors; a dtype is no module.
"""

from __future__ import annotations

import pytest

from tests.test_ql201_loop_items import CAPTURE_ROW, ql201

MODELS = """
class PowScalar(torch.nn.Module):
    def __init__(self, base=2.0):
        super().__init__()
        self._base = base

    def forward(self, x):
        return torch.ops.aten.pow.Scalar(self._base, x)


class PowNorm(PowScalar):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(torch.ops.aten.pow.Scalar(self._base, x))


class Triu(torch.nn.Module):
    def __init__(self, diagonal, constant_dtype=torch.float32):
        super().__init__()
        self.diagonal = diagonal
        self.register_buffer("mask", torch.ones((4, 4), dtype=constant_dtype))

    def forward(self, x):
        return torch.triu(self.mask, diagonal=self.diagonal) + x


class Holder(torch.nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.inner = kind(4)

    def forward(self, x):
        return self.inner(x)
"""


def _ql201(model: str):
    return ql201(MODELS + f"\n\ndef main(x, q):\n    quantize({model}, (x,), q)\n")


@pytest.mark.parametrize("model", ["PowScalar(0.5)", "PowScalar()", "Triu(1, constant_dtype=torch.bool)", "Triu(1)"])
def test_operator_calls_and_dtype_arguments_leave_the_model_known(model):
    assert _ql201(model) == []


@pytest.mark.parametrize(
    "model",
    [
        "PowNorm()",  # an operator beside a batch norm: the batch norm is the finding
        "Holder(torch.nn.BatchNorm1d)",  # a torch.nn class handed in: not a dtype
        "Holder(nn.Dropout)",
        "Triu(1, constant_dtype=make())",  # what a call returns may be a module
    ],
)
def test_modules_beside_or_instead_of_those_stay_the_finding(model):
    (d,) = _ql201(model)
    assert d.range.start.row == CAPTURE_ROW

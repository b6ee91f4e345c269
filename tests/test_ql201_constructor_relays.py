"""QL201: a capture helper handed as a bound method to a construction whose class's `__init__`
calls it only on models it builds itself (issue 14, item 7; `constructor_relays`).

ExecuTorch's Qualcomm multi-context test writes `CompositeDelegateModule(compiler_specs=...,
quantize_method=self.get_qdq_module)`, whose `__init__` builds `self.modules = [Conv2dSequential(),
Conv2dSequential(), Add(), Relu()]` and calls `quantize_method(module, sample_input)` for
`module, sample_input in zip(self.modules, self.sample_inputs)`. The reference was no call
the flow reads: the helper's callers were unknown. The models it is handed hold nothing
mode-dependent, and the inputs are tensors: the reference passes nothing harmful.
"""

from __future__ import annotations

import pytest

from tests.test_ql201_subclass_callers import EVALED, PTQ_ROW, _rows

MODELS = """
from torch import nn


class Shuffle(nn.Module):
    def forward(self, x):
        return x.flip(0)


class Conv(nn.Module):
    def __init__(self, bias=True):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1, bias=bias)

    def forward(self, x):
        return self.conv(x)


class Composite(torch.nn.Module):
    def __init__(self, lower, quantize_method=None):
        super().__init__()
        self.parts = [Conv(), Conv(bias=False), Shuffle()]
        self.inputs = [(torch.randn(1, 3, 4, 4),), (torch.randn([1, 3, 4, 4]),), (torch.zeros(2, dtype=torch.float32),)]
        self.lowered = []
        for module, sample_input in zip(self.parts, self.inputs):
            if quantize_method:
                module = quantize_method(module, sample_input)
            self.lowered.append(lower(module, sample_input))

    def forward(self, x):
        return self.lowered[0](x)
"""
TEST = """
from pkg.models import *


class TestComposite(Suite):
    def test_composite(self):
        module = Composite(lower=torch.compile, quantize_method=self.quantize)
"""


def _relay_rows(tmp_path, models: str = MODELS, test: str = TEST) -> list[int]:
    return _rows(tmp_path, "QL201", models=models, test_ops=EVALED, test_composite=test)


def test_executorch_form_keeps_the_helper_quiet(tmp_path):
    assert _relay_rows(tmp_path) == []


def test_statements_before_the_call_that_name_no_item_keep_the_helper_quiet(tmp_path):
    # The older pin's form: `partitioner = partitioner_type(compiler_specs)` first.
    models = MODELS.replace(
        "            if quantize_method:\n",
        "            partitioner = lower(None)\n            if quantize_method:\n",
    )
    assert _relay_rows(tmp_path, models=models) == []


LOUD = {
    "a batch-norm model among those built": (
        "self.parts = [Conv(), Conv(bias=False), Shuffle()]",
        "self.parts = [Conv(), Net(), Shuffle()]",
    ),
    "a model built with a value that is not a constant": ("Conv(bias=False)", "Conv(bias=lower)"),
    "the list filled before the loop": ("        self.lowered = []\n", "        self.parts.append(Net())\n"),
    "a method of the instance runs in the loop": (
        "            self.lowered.append(",
        "            self.fill(\n            ",
    ),
    "the parameter kept": (
        "        self.lowered = []\n",
        "        self.lowered = []\n        self.kept = quantize_method\n",
    ),
    "called with a model that is no item of the lists": (
        "quantize_method(module, sample_input)",
        "quantize_method(Net(), sample_input)",
    ),
    "the target rebound before the call": (
        "            if quantize_method:\n",
        "            module = Net()\n            if quantize_method:\n",
    ),
    "a statement before the call that names the item": (
        "            if quantize_method:\n",
        "            lower(module, sample_input)\n            if quantize_method:\n",
    ),
    "a base other than nn.Module": ("class Composite(torch.nn.Module):", "class Composite(nn.Sequential):"),
    "an input that is no tensor of torch": ("(torch.randn(1, 3, 4, 4),), (torch", "(Net(),), (torch"),
}


@pytest.mark.parametrize("change", LOUD.values(), ids=LOUD.keys())
def test_relays_that_may_hand_on_a_harmful_model_keep_the_report(tmp_path, change):
    old, new = change
    assert old in MODELS
    assert _relay_rows(tmp_path, models=MODELS.replace(old, new)) == [PTQ_ROW]


def test_a_function_given_the_method_keeps_the_report(tmp_path):
    test = TEST.replace("Composite(lower=", "run(lower=").replace(
        "from pkg.models import *", "from pkg.models import *\nrun = print"
    )
    assert _relay_rows(tmp_path, test=test) == [PTQ_ROW]

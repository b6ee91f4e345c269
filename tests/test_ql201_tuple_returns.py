"""QL201: a helper that returns the model in a tuple (`model, x = build()`), as ExecuTorch's
`mobilebert_fine_tune.get_fine_tuned_mobilebert` returns `model.eval(), data, labels`."""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def main(q, path):
    model, x = build(path)
    m = export(model, (x,)).module()
    prepare_pt2e(m, q)
"""


def _build(body: str) -> str:
    return HEAD + "\n\ndef build(path):\n" + textwrap.indent(textwrap.dedent(body), "    ")


BN = "model = nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))\n"


def _ql201(source: str):
    return [d for d in lint(source, select=("QL201",)) if d.code == "QL201"]


def test_the_model_element_of_a_returned_tuple_carries_its_eval_mode():
    assert _ql201(_build(BN + "return model.eval(), torch.randn(1, 3, 8, 8)\n")) == []


def test_the_model_element_of_a_returned_tuple_carries_its_train_mode():
    (d,) = _ql201(_build(BN + "return model, torch.randn(1, 3, 8, 8)\n"))
    assert "in train mode" in d.message and "BatchNorm2d" in d.message


def test_every_return_counts_and_elements_keep_their_positions():
    two = BN + "if path:\n    return model.eval(), torch.randn(1)\nreturn model, torch.randn(1)\n"
    assert len(_ql201(_build(two))) == 1
    # The model in the second position is not the first element.
    swapped = _build(BN + "return torch.randn(1), model\n").replace("model, x = build", "x, model = build")
    assert len(_ql201(swapped)) == 1
    assert _ql201(swapped.replace("return torch.randn(1), model", "return torch.randn(1), model.eval()")) == []


def test_a_return_that_is_no_tuple_leaves_the_elements_unknown():
    # One path returns something the analysis cannot split: its model is not known (quiet here).
    mixed = BN + "if path:\n    return load(path)\nreturn model, torch.randn(1)\n"
    assert _ql201(_build(mixed)) == []

"""QL201/QL202: an `nn.Sequential` built around a module holds that very module, so its
`.eval()` evals the module too (`init_parts._hand_down`, as for a project class storing what it
is given): `wrapped = nn.Sequential(model, nn.Softmax(dim=1)); wrapped.eval()`, then a PTQ
capture of `model`, was reported as a train-mode capture.

Followed only while the container is bound to a name used for its forward and for calls that
keep what it holds (`.eval()`, `.to(d)`): an item replaced, deleted or inserted, the container
handed to a call, or a switch inside a nested function, and `model` may be no part of it any
more. A copy passed (`copy.deepcopy(model)`) is another object; `model.train()` after the
container's eval, a conditional eval, or `model` rebound are still reported.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import copy
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
        self.head = nn.Linear(4, 4)

    def forward(self, x):
        return self.head(self.backbone(x))


def swap(seq):
    seq[0] = Net()


def main(x, q, flag):
    model = Net()
    BODY
    return PREPARE(torch.export.export(model, (x,)).module(), q)
"""


def messages(body: str, rule: str = "QL201", prepare: str = "prepare_pt2e") -> list[str]:
    src = HEAD.replace("BODY", body.replace("\n", "\n    ")).replace("PREPARE", prepare)
    return [d.message for d in lint(src, select=(rule,))]


@pytest.mark.parametrize(
    "body",
    [
        "wrapped = nn.Sequential(model, nn.Softmax(dim=1))\nwrapped.eval()",
        "wrapped = nn.Sequential(nn.Flatten(), model)\nwrapped.to('cpu').eval()",
        "wrapped = nn.Sequential(model)\nwrapped(x)\nwrapped.train(False)",
        "wrapped = nn.Sequential(model.to('cpu'), nn.ReLU())\nwrapped.eval()",
    ],
)
def test_an_eval_of_an_nn_sequential_reaches_the_module_it_holds(body):
    assert messages(body) == []


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("wrapped = nn.Sequential(copy.deepcopy(model), nn.ReLU())\nwrapped.eval()", "built at line"),
        ("wrapped = nn.Sequential(model, nn.ReLU())\nwrapped.eval()\nmodel.train()", "after `model.train()`"),
        ("wrapped = nn.Sequential(model, nn.ReLU())\nif flag:\n    wrapped.eval()", "runs on some paths only"),
        ("wrapped = nn.Sequential(model, nn.ReLU())\nmodel = Net()\nwrapped.eval()", "built at line"),
        ("wrapped = nn.Sequential(model, nn.ReLU())\nwrapped[0] = Net()\nwrapped.eval()", "built at line"),
        ("wrapped = nn.Sequential(model, nn.ReLU())\ndel wrapped[0]\nwrapped.eval()", "built at line"),
        ("wrapped = nn.Sequential(model)\nwrapped.insert(0, Net())\nwrapped.eval()", "built at line"),
        ("wrapped = nn.Sequential(model)\nswap(wrapped)\nwrapped.eval()", "built at line"),
        ("wrapped = nn.Sequential(model)\nf = lambda: wrapped.train()\nwrapped.eval()\nf()", "built at line"),
        ("wrapped = nn.Sequential(model, nn.ReLU())\nwrapped.train()", "after `wrapped.train()`"),
    ],
)
def test_the_module_is_still_reported_where_the_eval_may_not_reach_it(body, why):
    (message,) = messages(body)
    assert why in message and "BatchNorm1d" in message


def test_a_qat_capture_of_a_module_evaled_through_its_container_is_reported():
    body = "wrapped = nn.Sequential(model, nn.ReLU())\nwrapped.eval()"
    assert messages(body, prepare="prepare_qat_pt2e") == []
    (message,) = messages(body, "QL202", "prepare_qat_pt2e")
    assert "in eval mode (after `wrapped.eval()`" in message

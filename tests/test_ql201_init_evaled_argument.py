"""QL201/QL202: a class whose `__init__` evals a module it is given (`self.a = a.eval()`, or
`a.eval()`, a statement of its own body) switches the very module the caller handed
(`given_modes.evaled_arguments`): after `Pair(Full())` the part is in eval mode, and so is a
local `full` handed to it. `Pair(Full())` beside a mode-free `nn.Linear` of its own was
reported as a train-mode capture holding `Full`'s batch norm (fresh36c's probe).

Still reported: a Dropout of the wrapper's own, a second module stored in train mode,
an eval under a branch of `__init__`, a parameter rebound before (a copy), a `.train()` in
`__init__` after the eval, a method that may switch the part back (`self.a.train()`, called or
not: which methods run is not followed). A QAT capture of the evaled module is now reported (QL202).
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import copy
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Full(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
        self.head = nn.Linear(4, 4)

    def forward(self, x):
        return self.head(self.backbone(x))


class Pair(nn.Module):
    def __init__(self, a, flag=False):
        super().__init__()
        INIT
        self.fc = FC

    def forward(self, x):
        return self.fc(self.a(x))

    def unfreeze(self):
        UNFREEZE


def main(x, q, flag):
    BODY
    return PREPARE(torch.export.export(m, (x,)).module(), q)
"""

EVAL = "self.a = a.eval()"
LINEAR = "nn.Linear(4, 4)"


def messages(body, init=EVAL, fc=LINEAR, rule="QL201", prepare="prepare_pt2e", unfreeze="pass") -> list[str]:
    src = HEAD.replace("INIT", init.replace("\n", "\n        ")).replace("FC", fc).replace("UNFREEZE", unfreeze)
    src = src.replace("BODY", body.replace("\n", "\n    ")).replace("PREPARE", prepare)
    return [d.message for d in lint(src, select=(rule,))]


@pytest.mark.parametrize(
    ("body", "init"),
    [
        ("m = Pair(Full())", EVAL),
        ("m = Pair(a=Full())", EVAL),
        ("m = Pair(Full())", "a.eval()\nself.a = a"),
        ("full = Full()\nm = Pair(full)", EVAL),
        ("full = Full()\np = Pair(full)\nm = full", EVAL),
    ],
)
def test_a_module_the_wrappers_init_evals_is_in_eval_mode(body, init):
    assert messages(body, init) == []


@pytest.mark.parametrize(
    ("body", "init", "fc"),
    [
        ("m = Pair(Full())", EVAL, "nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.1))"),
        ("m = Pair(Full())", "if flag:\n    a.eval()\nself.a = a", LINEAR),
        ("m = Pair(Full())", "a = copy.deepcopy(a)\nself.a = a.eval()", LINEAR),
        ("m = Pair(Full())", "self.a = a.eval()\nself.a.train()", LINEAR),
        ("m = Pair(Full(), Full())", "self.a = a.eval()\nself.b = flag", "nn.Sequential(self.b, nn.Linear(4, 4))"),
        ("full = Full()\np = Pair(full)\nfull.train()\nm = full", EVAL, LINEAR),
        ("full = Full()\nif flag:\n    p = Pair(full)\nm = full", EVAL, LINEAR),
    ],
)
def test_the_capture_is_still_reported_where_the_module_may_be_in_train_mode(body, init, fc):
    (message,) = messages(body, init, fc)
    assert "captured for PTQ in train mode" in message


@pytest.mark.parametrize("unfreeze", ["self.a.train()", "self.a.training = True", "setattr(self, 'a', Full())"])
def test_a_class_that_may_switch_the_part_back_leaves_it_as_it_came(unfreeze):
    for body in ("m = Pair(Full())", "full = Full()\np = Pair(full)\np.unfreeze()\nm = full"):
        (message,) = messages(body, unfreeze=unfreeze)
        assert "captured for PTQ in train mode" in message


def test_a_qat_capture_of_a_module_the_wrapper_evaled_is_reported():
    body = "full = Full()\np = Pair(full)\nm = full"
    assert messages(body, prepare="prepare_qat_pt2e") == []
    (message,) = messages(body, rule="QL202", prepare="prepare_qat_pt2e")
    assert "captured for QAT in eval mode" in message and "BatchNorm1d" in message

"""QL201/QL202/QL203: a mode switch through a callable (issue 14).

A lambda called by name (`prep = lambda m: m.train(); prep(model)`) runs its body at the call
(`called_lambdas`); a helper that switches its parameter switches the part of a model handed to
it (`make_train(model.bn)`, `handed_parts`); a `functools.partial` of a helper is a call of the
helper with the partial's arguments first (`partial_calls`).

Quiet when the callable switches a copy or another object, evals, switches a part holding
nothing mode-dependent, is never called or only after the capture, or switches under a
flag the call's arguments rule out; an unknown callable stays unknown.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import copy
import functools
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))


def make_train(m):
    m.train()


def make_eval(m):
    m.eval()


def set_mode(m, train=False):
    if train:
        m.train()


def main(x, q, teacher, get_prep):
    BODY
    return PREPARE(torch.export.export(m, (x,)).module(), q)
"""

FIRST = HEAD.splitlines().index("    BODY") + 1  # the row of the body's first line


def messages(body: str, rule: str = "QL201") -> list[str]:
    prepare = "prepare_qat_pt2e" if rule == "QL202" else "prepare_pt2e"
    src = HEAD.replace("BODY", body.replace("\n", "\n    ")).replace("PREPARE", prepare)
    return [d.message for d in lint(src, select=(rule,))]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("prep = lambda m: m.train()\nm = Net().eval()\nprep(m)", "after `m.train()`"),
        ("prep = lambda m: m.train()\nm = Net().eval()\nm = prep(m)", "after `m.train()`"),
        ("prep = functools.partial(make_train)\nm = Net().eval()\nprep(m)", "after `m.train()`"),
        ("prep = functools.partial(set_mode, train=True)\nm = Net().eval()\nprep(m)", "after `m.train()`"),
        ("prep = functools.partial(set_mode)\nm = Net().eval()\nprep(m, train=True)", "after `m.train()`"),
    ],
)
def test_ptq_capture_after_a_switch_through_a_callable(body, reason):
    (message,) = messages(body)
    assert "captured for PTQ in train mode" in message
    assert reason in message
    assert "BatchNorm2d" in message


@pytest.mark.parametrize(
    ("body", "call"),
    [
        ("m = Net().eval()\nmake_train(m.bn)", "make_train(m.bn)"),
        ("m = Net().eval()\nset_mode(m.bn, train=True)", "set_mode(m.bn, train=True)"),
        ("prep = lambda m: m.train()\nm = Net().eval()\nprep(m.bn)", "prep(m.bn)"),
        ("prep = functools.partial(make_train)\nm = Net().eval()\nprep(m.bn)", "prep(m.bn)"),
    ],
)
def test_ptq_capture_after_a_part_switched_through_a_callable(body, call):
    (message,) = messages(body)
    assert f"with `m.bn` in train mode after `{call}` at line" in message
    assert "which holds BatchNorm2d" in message


@pytest.mark.parametrize(
    "body",
    [
        "prep = lambda m: copy.deepcopy(m).train()\nm = Net().eval()\nprep(m)",  # a copy
        "prep = lambda m: teacher.train()\nm = Net().eval()\nprep(m)",  # another object
        "prep = lambda m: m.eval()\nm = Net()\nprep(m)",  # evals
        "prep = lambda m: m.train()\nm = Net().eval()",  # never called
        "prep = lambda m, t: m.train() if t else m\nm = Net().eval()\nprep(m, False)",  # a branch: not read
        "prep = get_prep()\nm = Net().eval()\nprep(m)",  # an unknown callable
        "m = Net().eval()\nmake_train(m.conv)",  # a part holding nothing mode-dependent
        "m = Net().eval()\nset_mode(m.bn)",  # the switch's flag ruled out by the default
        "m = Net().eval()\nset_mode(m.bn, train=False)",
        "prep = functools.partial(set_mode, train=False)\nm = Net().eval()\nprep(m)",
        "prep = functools.partial(set_mode, train=False)\nm = Net().eval()\nprep(m.bn)",
        "m = Net().eval()\nmake_train(m.bn)\nm.eval()",  # the whole model evaled after it
        "m = Net().eval()\nmake_train(copy.deepcopy(m).bn)",  # a copy's part
        "m = Net().eval()\nother = Net()\nmake_train(other.bn)",  # another model's part
    ],
)
def test_ptq_quiet_look_alikes(body):
    assert messages(body) == []


@pytest.mark.parametrize("call", ["prep(m)", "make_train(m.bn)"])
def test_switch_after_the_capture_is_quiet(call):
    src = HEAD.replace(
        "    BODY\n    return PREPARE(torch.export.export(m, (x,)).module(), q)",
        "    prep = lambda m: m.train()\n    m = Net().eval()\n"
        "    gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)\n"
        f"    {call}\n    return gm",
    )
    assert [d.message for d in lint(src, select=("QL201",))] == []


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("prep = lambda m: m.eval()\nm = Net()\nprep(m)", "after `m.eval()`"),
        ("prep = functools.partial(make_eval)\nm = Net()\nprep(m)", "after `m.eval()`"),
        ("m = Net()\nmake_eval(m.bn)", "with `m.bn` in eval mode after `make_eval(m.bn)`"),
    ],
)
def test_qat_capture_after_an_eval_through_a_callable(body, reason):
    (message,) = messages(body, "QL202")
    assert "captured for QAT in eval mode" in message
    assert reason in message


@pytest.mark.parametrize(
    "body",
    [
        "prep = lambda m: m.train()\nm = Net().eval()\nprep(m)",  # back in train mode
        "m = Net()\nmake_eval(m.conv)",  # nothing mode-dependent in the part
        "prep = lambda m: copy.deepcopy(m).eval()\nm = Net()\nprep(m)",
    ],
)
def test_qat_quiet_look_alikes(body):
    assert messages(body, "QL202") == []


GRAPH = """\
import copy
import functools
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def make_eval(m):
    m.eval()


def main(model, x, q):
    BODY
    return gm
"""


@pytest.mark.parametrize(
    "body",
    [
        "prep = lambda m: m.eval()\ngm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)\nprep(gm)",
        "prep = functools.partial(make_eval)\ngm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"
        "prep(gm)",
    ],
)
def test_switch_of_an_exported_graph_through_a_callable(body):
    src = GRAPH.replace("BODY", body.replace("\n", "\n    "))
    (message,) = [d.message for d in lint(src, select=("QL203",))]
    assert "comes from `prepare_pt2e`" in message
    assert "NotImplementedError" in message


@pytest.mark.parametrize(
    "body",
    [
        "prep = lambda m: m.eval()\ngm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"
        "prep(copy.deepcopy(gm))",
        "prep = lambda m: m.eval()\ngm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)",
        "prep = functools.partial(make_eval)\ngm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"
        "prep(model)",
    ],
)
def test_graph_quiet_look_alikes(body):
    src = GRAPH.replace("BODY", body.replace("\n", "\n    "))
    assert [d.message for d in lint(src, select=("QL203",))] == []


def test_part_switched_by_a_method_of_the_class():
    src = HEAD.replace(
        "def main(x, q, teacher, get_prep):\n    BODY\n    return PREPARE(torch.export.export(m, (x,)).module(), q)",
        "class Runner:\n    def prep(self, m):\n        m.train()\n\n    def run(self, x, q):\n"
        "        m = Net().eval()\n        self.prep(m.bn)\n"
        "        return prepare_pt2e(torch.export.export(m, (x,)).module(), q)",
    )
    (message,) = [d.message for d in lint(src, select=("QL201",))]
    assert "with `m.bn` in train mode after `self.prep(m.bn)`" in message


def test_part_switched_by_a_function_of_another_module():
    helpers = "def unfreeze(m, train=True):\n    if train:\n        m.train()\n"
    body = "from helpers import unfreeze\nm = Net().eval()\nunfreeze(m.bn)"
    src = HEAD.replace("BODY", body.replace("\n", "\n    ")).replace("PREPARE", "prepare_pt2e")
    (message,) = [d.message for d in lint(src, select=("QL201",), overlay={"helpers.py": helpers})]
    assert "with `m.bn` in train mode after `unfreeze(m.bn)`" in message
    quiet = src.replace("unfreeze(m.bn)", "unfreeze(m.bn, train=False)")
    assert [d.message for d in lint(quiet, select=("QL201",), overlay={"helpers.py": helpers})] == []


def test_capture_in_a_lambda_called_by_name():
    (message,) = messages(
        "run = lambda m: prepare_pt2e(torch.export.export(m, (x,)).module(), q)\nrun(Net())\nm = None"
    )
    assert "captured for PTQ in train mode" in message


@pytest.mark.parametrize(
    "body",
    [
        "f = lambda m: f(m)\nm = Net().eval()\nf(m)",  # calls itself
        "a = functools.partial(b)\nb = functools.partial(a)\nm = Net().eval()\na(m)",  # partials of each other
    ],
)
def test_callables_that_call_themselves_end(body):
    assert messages(body) == []

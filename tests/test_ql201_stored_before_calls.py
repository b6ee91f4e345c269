"""QL201: a private method whose every call in its class follows a store of an eval-mode model
in the attribute it hands to a capturing helper, on every path to the call (issue 14, item 2;
`init_calls`).

Several methods of the class may store the model and call the method; the call may sit in an
`if` branch (or its `else`) with the store before it on the way there, the tests passed on the
way running nothing; and a loop that only freezes the model's parameters (`for p in
self.model.parameters(): p.requires_grad = False`, `grad_loops`) may lie between the store and
the call, or between the switch of a local and its store. A caller that does not store it, a
store on some paths only, a branch between the store and the call, a test that runs code, a
call in a loop, a loop doing more than freezing, or another reference to the method keeps the
report.
"""

from __future__ import annotations

import pytest

from tests.conftest import check_file, package_repository, rows_of
from tests.snippets import BN_NET_MODULE, PTQ_QUANTIZE_MODULE, PTQ_QUANTIZE_MODULE_CAPTURE_ROW

HEAD = """\
import copy

from pkg.net import Net
from pkg.quant import quantize

"""

# Two storing methods, each calling the quantizing method after an eval-mode store.
STEP = """\
class Step:
    def __init__(self, path):
        self.path = path
        self.model = None

    def load(self, device):
        self.model = Net().eval()
        self._quantize()

    def reload(self, model):
        model = copy.deepcopy(model)
        model.eval()
        self.model = model
        return self._quantize()

    def _quantize(self):
        self.model = quantize(self.model, (1,))

    def fit(self):
        self.model.train()
"""

LOAD = "        self.model = Net().eval()\n        self._quantize()\n"
RELOAD = (
    "        model = copy.deepcopy(model)\n        model.eval()\n        self.model = model\n"
    "        return self._quantize()\n"
)


READY = "    def ready(self):\n        self.model.train()\n        return True\n\n"


def _load(body: str) -> str:
    return STEP.replace(LOAD, body)


def _reload(body: str) -> str:
    return STEP.replace(RELOAD, body)


QUIET = {
    "two storing callers": STEP,
    "called in an if branch": _load(
        "        self.model = Net().eval()\n        if device:\n            self._quantize()\n"
    ),
    "called in the else branch": _load(
        "        self.model = Net().eval()\n        if device is None:\n            return None\n"
        "        else:\n            self._quantize()\n"
    ),
    "called in an elif branch": _load(
        "        self.model = Net().eval()\n        if device == 'cpu':\n            self.n = 1\n"
        "        elif device == 'cuda':\n            self.n = 2\n            self._quantize()\n"
    ),
    "stored and called in the same branch": _load(
        "        if device:\n            self.model = Net().eval()\n            self._quantize()\n"
    ),
    "called in each branch": _load(
        "        self.model = Net().eval()\n        if device:\n            self._quantize()\n"
        "        else:\n            return self._quantize()\n"
    ),
    "parameters frozen between the store and the call": _load(
        "        self.model = Net().eval()\n        for p in self.model.parameters():\n"
        "            p.requires_grad = False\n        self._quantize()\n"
    ),
    "named parameters frozen by requires_grad_": _load(
        "        self.model = Net().eval()\n        for name, p in self.model.named_parameters(recurse=True):\n"
        "            p.requires_grad_(False)\n        self._quantize()\n"
    ),
    "parameters of the local frozen between its switch and its store": _reload(
        "        model = copy.deepcopy(model)\n        model.eval()\n        for p in model.parameters():\n"
        "            p.requires_grad = False\n        self.model = model\n        return self._quantize()\n"
    ),
    "a deep copy evaled as it is stored": _reload(
        "        self.model = copy.deepcopy(model).eval()\n        return self._quantize()\n"
    ),
}

LOUD = {
    "a second caller storing in train mode": _reload(
        "        self.model = copy.deepcopy(model)\n        return self._quantize()\n"
    ),
    "a second caller storing nothing": _reload("        model.train()\n        return self._quantize()\n"),
    "a second caller training it first": _reload("        self.model.train()\n        return self._quantize()\n"),
    "reassigned after the eval": _load(
        "        self.model = Net().eval()\n        if device:\n            self.n = 1\n"
        "        self.model = Net()\n        self._quantize()\n"
    ),
    "reassigned in the branch after the eval": _load(
        "        self.model = Net().eval()\n        if device:\n            self.model = Net()\n"
        "            self._quantize()\n"
    ),
    "stored in a branch, called after it": _load(
        "        if device:\n            self.model = Net().eval()\n        self._quantize()\n"
    ),
    "stored in one branch, called in the other": _load(
        "        if device:\n            self.model = Net().eval()\n        else:\n            self._quantize()\n"
    ),
    "a branch between the store and the call": _load(
        "        self.model = Net().eval()\n        if device:\n            self.model.train()\n"
        "        self._quantize()\n"
    ),
    "a test that calls a method of self": _load(
        "        self.model = Net().eval()\n        if self.ready():\n            self._quantize()\n"
    ).replace("    def fit(self):", READY + "    def fit(self):"),
    "a test that hands the model to a function": _load(
        "        self.model = Net().eval()\n        if tune(self.model):\n            self._quantize()\n"
    ),
    "called in a loop": _load(
        "        self.model = Net().eval()\n        for _ in range(2):\n            self._quantize()\n"
    ),
    "called in a try block": _load(
        "        self.model = Net().eval()\n        try:\n            self._quantize()\n"
        "        except ValueError:\n            pass\n"
    ),
    "a loop that trains the model between": _load(
        "        self.model = Net().eval()\n        for p in self.model.parameters():\n"
        "            p.requires_grad = False\n            self.model.train()\n        self._quantize()\n"
    ),
    "a loop training the modules between": _load(
        "        self.model = Net().eval()\n        for m in self.model.modules():\n"
        "            m.train()\n        self._quantize()\n"
    ),
    "a loop with an else between": _load(
        "        self.model = Net().eval()\n        for p in self.model.parameters():\n"
        "            p.requires_grad = False\n        else:\n            self.model.train()\n"
        "        self._quantize()\n"
    ),
    "a loop setting the flag from a call between": _load(
        "        self.model = Net().eval()\n        for p in self.model.parameters():\n"
        "            p.requires_grad = tune(self.model)\n        self._quantize()\n"
    ),
    "a loop over another model's parameters training the local": _reload(
        "        model = copy.deepcopy(model)\n        model.eval()\n        for model in self.path.parameters():\n"
        "            model.requires_grad = False\n        self.model = model\n        return self._quantize()\n"
    ),
    "the local trained by a loop over its modules": _reload(
        "        model = copy.deepcopy(model)\n        model.eval()\n        for m in model.modules():\n"
        "            m.train()\n        self.model = model\n        return self._quantize()\n"
    ),
}


def _rows(tmp_path, step: str, **others: str) -> list[int]:
    if "tune(" in step:
        step += "\n\ndef tune(m):\n    m.train()\n    return True\n"
    root = package_repository(
        tmp_path / "repo", quant=PTQ_QUANTIZE_MODULE, net=BN_NET_MODULE, step=HEAD + step, **others
    )
    return rows_of(check_file(root / "pkg" / "quant.py", ("QL201",)).diagnostics)


@pytest.mark.parametrize("name", list(QUIET))
def test_model_stored_in_eval_mode_before_every_call_is_quiet(tmp_path, name):
    assert _rows(tmp_path, QUIET[name]) == []


@pytest.mark.parametrize("name", list(LOUD))
def test_model_that_may_be_in_train_mode_at_a_call_is_reported(tmp_path, name):
    assert _rows(tmp_path, LOUD[name]) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


def test_a_third_call_at_the_modules_top_level_keeps_the_report(tmp_path):
    # The module names the method three times: its two callers in the class and this one.
    step = STEP + "\n\nSTEP = Step('p')\nSTEP.model = Net()\nSTEP._quantize()\n"
    assert _rows(tmp_path, step) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


def test_a_call_from_another_module_keeps_the_report(tmp_path):
    other = "from pkg.step import Step\n\n\ndef retrain(step):\n    step.model.train()\n    step._quantize()\n"
    assert _rows(tmp_path, STEP, other=other) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


def test_a_subclass_overriding_one_storing_method_keeps_the_report(tmp_path):
    sub = "from pkg.net import Net\nfrom pkg.step import Step\n\n\nclass Trained(Step):\n"
    sub += "    def reload(self, model):\n        self.model = Net()\n        return self._quantize()\n"
    assert _rows(tmp_path, STEP, trained=sub) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


# The method captures the attribute itself: PTQ quiet after the eval-mode stores, QAT
# reported (QL202) as captured in eval mode, the call in a branch of one of two callers.
DIRECT = """\
import copy

import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Q:
    def load(self, model, qat):
        self.model = copy.deepcopy(model).eval()
        if qat:
            return self._qat()
        return self._ptq()

    def reload(self, model):
        self.model = copy.deepcopy(model).MODE()
        return self._ptq()

    def _ptq(self):
        ep = torch.export.export(self.model, (1,))
        return prepare_pt2e(ep.module(), None)

    def _qat(self):
        ep = torch.export.export(self.model, (1,))
        return prepare_qat_pt2e(ep.module(), None)
"""
QAT_ROW = [i + 1 for i, line in enumerate(DIRECT.splitlines()) if "torch.export.export" in line][1]


@pytest.mark.parametrize(("rule", "expected"), [("QL201", []), ("QL202", [QAT_ROW])])
def test_a_capture_in_the_method_reads_the_stored_mode(tmp_path, rule, expected):
    # (A caller storing a train-mode model leaves the attribute unknown, not in train mode: a
    # capture in the class of an attribute it cannot read is quiet by issue 14 item 7's policy.)
    root = package_repository(tmp_path / "repo", q=DIRECT.replace("MODE", "eval"))
    assert rows_of(check_file(root / "pkg" / "q.py", (rule,)).diagnostics) == expected

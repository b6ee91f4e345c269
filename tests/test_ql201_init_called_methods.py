"""QL201: a helper whose caller is a private method `__init__` calls once, after it evaluated
the attribute the method hands over (issue 14; KAZU's token-classification NER step,
`int8_x86_quantizer.py:36` at ea14f6c2, `init_calls`).

`__init__` stores `from_pretrained(...).eval()` in `self.model`, moves it to a device and
calls `self._optimize_model()` last; that method hands `self.model` to the quantizer in
another module and stores the quantized result back over it. The second store made the
attribute's mode unknown, and the helper's caller unknown with it. `__init__` runs its
statements in order: the method finds the model as `__init__` left it before the call.
Anything that may touch the attribute between the evaluation and the capture, another
caller of the method, or a subclass keeps the report.
"""

from __future__ import annotations

import os

import pytest

from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import check_file, package_repository, rows_of
from tests.snippets import BN_NET_MODULE, PTQ_QUANTIZE_MODULE, PTQ_QUANTIZE_MODULE_CAPTURE_ROW

HEAD = """\
import os

from transformers import AutoModelForTokenClassification

from pkg.net import Net
from pkg.quant import quantize

"""

# The KAZU shape: the eval on the construction, a device move, the call last.
KAZU = """\
class NerStep:
    def __init__(self, path, device):
        self.config = path
        self.model = AutoModelForTokenClassification.from_pretrained(path, config=self.config).eval()
        self.device = device
        self.model.to(device)
        self._optimize_model()

    def _optimize_model(self):
        if os.getenv("Q") == "1":
            self.model = quantize(self.model, (1,))
        if os.getenv("C") == "1":
            self.model = compile_it(self.model)

    def __call__(self, x):
        return self.model(x)


def compile_it(m):
    return m
"""

INIT = """\
        self.model = AutoModelForTokenClassification.from_pretrained(path, config=self.config).eval()
        self.device = device
        self.model.to(device)
        self._optimize_model()
"""


def _with_init(body: str, extra: str = "", method: str = "_optimize_model") -> str:
    text = KAZU.replace(INIT, body).replace("_optimize_model", method)
    return text.replace("    def __call__(self, x):", extra + "    def __call__(self, x):")


QUIET = {
    "kazu": KAZU,
    "project model evaled on construction": _with_init(
        "        self.model = Net().eval()\n        self.model.to(device)\n        self._optimize_model()\n"
    ),
    # A device built by a call: it cannot switch the model (`init_calls._kept_call`).
    "evaled, then moved to a built device": "import torch\n\n\n"
    + _with_init("        self.model = Net().eval().to(torch.device(device))\n        self._optimize_model()\n"),
    # Nor can a function of the project: nothing else holds the module built in the store
    # (where `switched_stores._kept`, peeling a name the caller may hold, stops).
    "evaled, then moved to a project's device": _with_init(
        "        self.model = Net().eval().to(pick_device())\n        self._optimize_model()\n"
    ),
    "evaled on a line of its own": _with_init(
        "        self.model = Net()\n        self.model.eval()\n        self.n = 2\n        self._optimize_model()\n"
    ),
    "from_pretrained without eval": _with_init(
        "        self.model = AutoModelForTokenClassification.from_pretrained(path)\n        self._optimize_model()\n"
    ),
    "other methods switch it later": _with_init(
        INIT, "    def fit(self):\n        self.model.train()\n        return self.model\n\n"
    ),
}

LOUD = {
    "called from another method, trained elsewhere": _with_init(
        "        self.model = Net().eval()\n",
        "    def run(self):\n        self._optimize_model()\n\n    def fit(self):\n        self.model.train()\n\n",
    ),
    "call before the eval": _with_init(
        "        self.model = Net()\n        self._optimize_model()\n        self.model.eval()\n"
    ),
    "train between": _with_init(
        "        self.model = Net().eval()\n        self.model.train()\n        self._optimize_model()\n"
    ),
    "also called after a train": _with_init(
        INIT, "    def retrain(self):\n        self.model.train()\n        self._optimize_model()\n\n"
    ),
    "built in train mode": _with_init("        self.model = Net()\n        self._optimize_model()\n"),
    "another method between": _with_init(
        "        self.model = Net().eval()\n        self._warm_up()\n        self._optimize_model()\n",
        "    def _warm_up(self):\n        self.model.train()\n\n",
    ),
    "super().__init__ between": _with_init(
        "        self.model = Net().eval()\n        super().__init__()\n        self._optimize_model()\n"
    ),
    "handed to a call between": _with_init(
        "        self.model = Net().eval()\n        tune(self.model)\n        self._optimize_model()\n"
    ),
    "public method": _with_init(INIT, method="optimize_model"),
}


def _rows(tmp_path, step: str, **others: str) -> list[int]:
    if "def tune(" not in step and "tune(" in step:
        step += "\n\ndef tune(m):\n    m.train()\n"
    root = package_repository(
        tmp_path / "repo", quant=PTQ_QUANTIZE_MODULE, net=BN_NET_MODULE, step=HEAD + step, **others
    )
    return rows_of(check_file(root / "pkg" / "quant.py", ("QL201",)).diagnostics)


@pytest.mark.parametrize("name", list(QUIET))
def test_model_evaled_before_init_calls_the_method_is_quiet(tmp_path, name):
    assert _rows(tmp_path, QUIET[name]) == []


@pytest.mark.parametrize("name", list(LOUD))
def test_model_that_may_be_in_train_mode_at_the_call_is_reported(tmp_path, name):
    assert _rows(tmp_path, LOUD[name]) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


def test_method_called_by_a_private_caller_of_the_class_is_reported(tmp_path):
    # `_optimize_model` is named in `_reload` too, which runs after `__init__` (an outside
    # call of `_reload` may follow `step.model.train()`).
    step = _with_init(INIT, "    def _reload(self):\n        self._optimize_model()\n\n")
    assert _rows(tmp_path, step) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


def test_subclass_in_another_module_keeps_the_report(tmp_path):
    # A subclass may build the attribute otherwise and call the method again.
    sub = "from pkg.net import Net\nfrom pkg.step import NerStep\n\n\nclass Tuned(NerStep):\n    def fit(self):\n"
    sub += "        self.model.train()\n        self._optimize_model()\n"
    assert _rows(tmp_path, KAZU, tuned=sub) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


@pytest.mark.parametrize(("step", "expected"), [(KAZU, []), (LOUD["train between"], [PTQ_QUANTIZE_MODULE_CAPTURE_ROW])])
def test_whole_repository_run_agrees(tmp_path, step, expected):
    # The step module's flows are analysed before or after the helper's check: the same answer.
    root = package_repository(tmp_path / "repo", quant=PTQ_QUANTIZE_MODULE, net=BN_NET_MODULE, step=HEAD + step)
    settings = Settings(select=("QL201",), root=root, cache_dir=tmp_path / "cache")
    run = run_check([str(root)], settings, use_cache=False, jobs=1)
    rows = [(os.path.basename(r.path), d.range.start.row) for r in run.results for d in r.diagnostics]
    assert rows == [("quant.py", row) for row in expected]


def test_function_written_in_a_method_reads_self_without_a_class(tmp_path):
    # A function written in a method reads `self.model` with no class of its own around it
    # (ExecuTorch's `LLMEdgeManager.pt2e_calibrate`): no `__init__` to read, and no error.
    step = KAZU.replace(
        "    def __call__(self, x):",
        "    def _later(self):\n        def inner():\n            return quantize(self.model, (1,))\n\n"
        "        return inner()\n\n    def __call__(self, x):",
    )
    assert _rows(tmp_path, step) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]

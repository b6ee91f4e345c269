"""QL201: a private method that one other method of its class calls right after storing the
attribute the private method hands to a capturing helper (issue 14, stop 54 note item 6:
KAZU-like `self.model = AutoModel.from_pretrained(...)` stored by an ordinary method, not
one `__init__` calls; `init_calls`).

The store and the call are statements of the calling method's own body (or of its `if`
branches: `tests/test_ql201_stored_before_calls.py`), in that order, with
only plain stores and mode-keeping steps (`.eval()`, device moves, casts) of the attribute
between: the called method finds the attribute as that store left it. Another reference to
the method (in its class, its module, another module of the project, or a string that could
form its name for `getattr`), a train-mode store, a `.train()` between, a subclass (which
may override the storing method), anything that may run other code between the store and the
call, or a called method that runs later (a generator, a decorator) keeps the report.
"""

from __future__ import annotations

import os

import pytest

from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import check_file, package_repository, rows_of
from tests.snippets import BN_NET_MODULE, PTQ_QUANTIZE_MODULE, PTQ_QUANTIZE_MODULE_CAPTURE_ROW

HEAD = """\
import copy

from transformers import AutoModel

from pkg.net import Net
from pkg.quant import quantize

"""

# The KAZU-like shape: an ordinary method loads the model and calls the quantizing method last.
STEP = """\
class Step:
    def __init__(self, path):
        self.path = path
        self.model = None

    def load(self, device):
        self.model = AutoModel.from_pretrained(self.path)
        self.model.to(device)
        self._quantize()

    def _quantize(self):
        self.model = quantize(self.model, (1,))

    def fit(self):
        self.model.train()
"""

LOAD = """\
        self.model = AutoModel.from_pretrained(self.path)
        self.model.to(device)
        self._quantize()
"""


def _load(body: str, extra: str = "") -> str:
    text = STEP.replace(LOAD, body)
    return text.replace("    def fit(self):", extra + "    def fit(self):")


QUIET = {
    "from_pretrained, moved, called last": STEP,
    "project model evaled on construction": _load("        self.model = Net().eval()\n        self._quantize()\n"),
    "evaled on a line of its own": _load(
        "        self.model = Net()\n        self.model.eval()\n        self.n = 2\n        self._quantize()\n"
    ),
    "a copy evaled then stored (switched_stores)": _load(
        "        model = copy.deepcopy(Net())\n        model.eval()\n        model.float()\n"
        "        self.model = model\n        self._quantize()\n"
    ),
    "the stored local read after the call": _load(
        "        model = copy.deepcopy(Net())\n        model.eval()\n        self.model = model\n"
        "        self._quantize()\n        return model.bn\n"
    ),
    "called in a return": _load("        self.model = Net().eval().half()\n        return self._quantize()\n"),
    "called in an assignment": _load(
        "        self.model = Net().eval()\n        out = self._quantize()\n        return out\n"
    ),
    "called in a branch after the store": _load(
        "        self.model = Net().eval()\n        if device:\n            self._quantize()\n",
    ),
}

LOUD = {
    "stored in train mode": _load("        self.model = Net()\n        self._quantize()\n"),
    "a copy trained then stored": _load(
        "        model = copy.deepcopy(Net())\n        model.train()\n"
        "        self.model = model\n        self._quantize()\n"
    ),
    "train between": _load("        self.model = Net().eval()\n        self.model.train()\n        self._quantize()\n"),
    "the stored local trained between": _load(
        "        model = copy.deepcopy(Net())\n        model.eval()\n        self.model = model\n"
        "        model.train()\n        self._quantize()\n"
    ),
    "the stored local's flag set between": _load(
        "        model = copy.deepcopy(Net())\n        model.eval()\n        self.model = model\n"
        "        model.training = True\n        self._quantize()\n"
    ),
    "the attribute's flag set between": _load(
        "        self.model = Net().eval()\n        self.model.training = True\n        self._quantize()\n"
    ),
    "a project method's result stored": _load(
        "        model = Net()\n        model.eval()\n        model = model.fuse()\n"
        "        self.model = model\n        self._quantize()\n"
    ),
    "another method of self between": _load(
        "        self.model = Net().eval()\n        self.run_callbacks()\n        self._quantize()\n",
        "    def run_callbacks(self):\n        self.model.train()\n\n",
    ),
    "handed to a call between": _load(
        "        self.model = Net().eval()\n        tune(self.model)\n        self._quantize()\n",
        "",
    ),
    "stored in a branch, called after it": _load(
        "        if device:\n            self.model = Net().eval()\n        self._quantize()\n",
    ),
    "called before the store": _load("        self._quantize()\n        self.model = Net().eval()\n"),
    "also called from another method": _load(
        "        self.model = Net().eval()\n        self._quantize()\n",
        "    def requantize(self):\n        self.model.train()\n        self._quantize()\n\n",
    ),
    "named in a table": _load(
        "        self.model = Net().eval()\n        self._quantize()\n",
        "    def steps(self):\n        return {'q': self._quantize}\n\n",
    ),
    "dispatched by an f-string": _load(
        "        self.model = Net().eval()\n        self._quantize()\n",
        "    def run(self, what):\n        self.model.train()\n        return getattr(self, f'_{what}')()\n\n",
    ),
    "dispatched by a concatenated string": _load(
        "        self.model = Net().eval()\n        self._quantize()\n",
        "    def run(self, what):\n        self.model.train()\n        return getattr(self, '_quant' + what)()\n\n",
    ),
    "dispatched by a name read elsewhere": _load(
        "        self.model = Net().eval()\n        self._quantize()\n",
        "    def run(self, what):\n        self.model.train()\n        return getattr(self, what)()\n\n",
    ),
    "public method": _load("        self.model = Net().eval()\n        self.quantize_now()\n").replace(
        "def _quantize(", "def quantize_now("
    ),
    "a generator": _load("        self.model = Net().eval()\n        return self._quantize()\n").replace(
        "        self.model = quantize(self.model, (1,))\n",
        "        yield\n        self.model = quantize(self.model, (1,))\n",
    ),
    "decorated": _load("        self.model = Net().eval()\n        self._quantize()\n").replace(
        "    def _quantize(", "    @later\n    def _quantize("
    ),
    "a yield between": _load("        self.model = Net().eval()\n        x = yield\n        self._quantize()\n"),
    "a property setter": _load(
        "        self.model = Net().eval()\n        self._quantize()\n",
        "    @property\n    def model(self):\n        return self._m\n\n"
        "    @model.setter\n    def model(self, m):\n        self._m = m if m is None else m.train()\n\n",
    ),
    "a __setattr__": _load(
        "        self.model = Net().eval()\n        self._quantize()\n",
        "    def __setattr__(self, name, value):\n        if name == 'model' and value is not None:\n"
        "            value.train()\n        object.__setattr__(self, name, value)\n\n",
    ),
    "self rebound between": _load(
        "        self.model = Net().eval()\n        self = device\n        self._quantize()\n"
    ),
    "the storing method is a staticmethod": _load(
        "        self.model = Net().eval()\n        self._quantize()\n"
    ).replace("    def load(", "    @staticmethod\n    def load("),
}


def _rows(tmp_path, step: str, **others: str) -> list[int]:
    if "tune(" in step:
        step += "\n\ndef tune(m):\n    m.train()\n"
    if "@later" in step:
        step += "\n\ndef later(f):\n    return f\n"
    root = package_repository(
        tmp_path / "repo", quant=PTQ_QUANTIZE_MODULE, net=BN_NET_MODULE, step=HEAD + step, **others
    )
    return rows_of(check_file(root / "pkg" / "quant.py", ("QL201",)).diagnostics)


@pytest.mark.parametrize("name", list(QUIET))
def test_model_stored_in_eval_mode_right_before_the_call_is_quiet(tmp_path, name):
    assert _rows(tmp_path, QUIET[name]) == []


@pytest.mark.parametrize("name", list(LOUD))
def test_model_that_may_be_in_train_mode_at_the_call_is_reported(tmp_path, name):
    assert _rows(tmp_path, LOUD[name]) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


def test_method_called_from_another_module_keeps_the_report(tmp_path):
    # A function elsewhere in the project runs the method on an instance it trained.
    other = "from pkg.step import Step\n\n\ndef retrain(step):\n    step.model.train()\n    step._quantize()\n"
    assert _rows(tmp_path, STEP, other=other) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


def test_method_called_at_the_modules_top_level_keeps_the_report(tmp_path):
    step = STEP + "\n\nSTEP = Step('p')\nSTEP.model = Net()\nSTEP._quantize()\n"
    assert _rows(tmp_path, step) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


def test_subclass_overriding_the_storing_method_keeps_the_report(tmp_path):
    sub = "from pkg.net import Net\nfrom pkg.step import Step\n\n\nclass Trained(Step):\n"
    sub += "    def load(self, device):\n        self.model = Net()\n        self._quantize()\n"
    assert _rows(tmp_path, STEP, trained=sub) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


def test_subclass_in_the_same_module_keeps_the_report(tmp_path):
    step = STEP + "\n\nclass Trained(Step):\n    def load(self, device):\n        self.model = Net()\n"
    step += "        self._quantize()\n"
    assert _rows(tmp_path, step) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


def test_method_name_written_whole_for_a_lookup_elsewhere_keeps_the_report(tmp_path):
    # The class's module writes the name; another module looks it up on an instance it trained.
    step = STEP + "\n\nSTEPS = ('_quantize',)\n"
    other = "from pkg.step import STEPS\n\n\ndef run(step):\n    step.model.train()\n"
    other += "    for name in STEPS:\n        getattr(step, name)()\n"
    assert _rows(tmp_path, step, other=other) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


BUILT = {
    "f-string": ("f'_{kind}'", "quantize"),
    "concatenation": ("'_quant' + kind", "ize"),
    "percent template": ("'_%s' % kind", "quantize"),
    "format template": ("'_{}'.format(kind)", "quantize"),
    "join": ("'_'.join(('', kind))", "quantize"),
}


@pytest.mark.parametrize("name", list(BUILT))
def test_method_name_built_for_a_lookup_elsewhere_keeps_the_report(tmp_path, name):
    built, kind = BUILT[name]
    step = STEP + f"\n\ndef name_of(kind):\n    return {built}\n"
    other = "from pkg.step import name_of\n\n\ndef run(step):\n    step.model.train()\n"
    other += f"    getattr(step, name_of('{kind}'))()\n"
    assert _rows(tmp_path, step, other=other) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


def test_strings_that_cannot_form_the_name_stay_quiet(tmp_path):
    # A docstring naming the method, strings and f-strings that no name could complete to
    # `_quantize`, constant lookups: none reaches the method.
    step = STEP.replace(
        "    def _quantize(self):\n",
        '    def _quantize(self):\n        """Run by load: self._quantize()."""\n',
    )
    step += "\n\nLABEL = 'quantized'\n\n\ndef tag(kind):\n    return f'{kind}.pt2e' + 'x'\n\n\n"
    step += "def device_of(step):\n    return getattr(step, 'device', None)\n"
    assert _rows(tmp_path, step) == []


def test_method_named_in_the_checked_module_keeps_the_report(tmp_path):
    quant = PTQ_QUANTIZE_MODULE + "\n\ndef again(step):\n    step.model.train()\n    step._quantize()\n"
    root = package_repository(tmp_path / "repo", quant=quant, net=BN_NET_MODULE, step=HEAD + STEP)
    assert rows_of(check_file(root / "pkg" / "quant.py", ("QL201",)).diagnostics) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


# Ultralytics' exporter (ethos.py:56, a false alarm that stays): `__call__` stores the model
# after a project method's result (`model.fuse()`), then runs callbacks handed `self`, then
# dispatches by an f-string to a public, decorated export method.
EXPORTER = """\
def try_export(f):
    def outer(*args, **kwargs):
        return f(*args, **kwargs)

    return outer


class Exporter:
    def __init__(self):
        self.callbacks = {}

    def __call__(self, model, fmt):
        model = copy.deepcopy(model)
        model.eval()
        model = model.fuse()
        self.model = model
        self.run_callbacks("on_export_start")
        return getattr(self, f"export_{fmt}")()

    def run_callbacks(self, event):
        for callback in self.callbacks.get(event, []):
            callback(self)

    @try_export
    def export_q(self):
        return quantize(self.model, (1,))
"""


def test_ultralytics_exporter_shape_is_reported(tmp_path):
    assert _rows(tmp_path, EXPORTER) == [PTQ_QUANTIZE_MODULE_CAPTURE_ROW]


@pytest.mark.parametrize(("step", "expected"), [(STEP, []), (LOUD["train between"], [PTQ_QUANTIZE_MODULE_CAPTURE_ROW])])
def test_whole_repository_run_agrees(tmp_path, step, expected):
    # The step module's flows are analysed before or after the helper's check: the same answer.
    root = package_repository(tmp_path / "repo", quant=PTQ_QUANTIZE_MODULE, net=BN_NET_MODULE, step=HEAD + step)
    settings = Settings(select=("QL201",), root=root, cache_dir=tmp_path / "cache")
    run = run_check([str(root)], settings, use_cache=False, jobs=1)
    rows = [(os.path.basename(r.path), d.range.start.row) for r in run.results for d in r.diagnostics]
    assert rows == [("quant.py", row) for row in expected]


def test_cached_answer_follows_a_module_that_comes_to_call_the_method(tmp_path):
    # The quiet answer rests on no other module naming the method: one that comes to name it
    # after the first run makes the next cached run report.
    root = package_repository(tmp_path / "repo", quant=PTQ_QUANTIZE_MODULE, net=BN_NET_MODULE, step=HEAD + STEP)
    settings = Settings(select=("QL201",), root=root, cache_dir=tmp_path / "cache")

    def rows():
        run = run_check([str(root)], settings, use_cache=True, jobs=1)
        return [(os.path.basename(r.path), d.range.start.row) for r in run.results for d in r.diagnostics]

    assert rows() == []
    other = "from pkg.step import Step\n\n\ndef retrain(step):\n    step.model.train()\n    step._quantize()\n"
    (root / "pkg" / "other.py").write_text(other)
    assert rows() == [("quant.py", PTQ_QUANTIZE_MODULE_CAPTURE_ROW)]

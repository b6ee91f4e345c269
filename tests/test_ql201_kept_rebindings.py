"""QL201: steps between an exporter's `model.eval()` and `self.model = model` that hand the
model back as it came (issue 14, item 2; Ultralytics' Ethos-U exporter, `ethos.py:56`).

`Exporter.__call__` copies a model, evals it, then fuses or wraps it before storing it in
`self.model`; `export_q` hands `self.model` to a helper in another module that captures it.
A project method that returns `self` (`model = model.fuse()`), a project function that returns
its parameter (`model = wrap(model)`), either as a statement, an `if` holding only such steps,
and a pair assignment casting the model (`im, model = im.half(), model.half()`) leave the stored
model in the mode the switch set (`kept_rebindings`, `switched_stores`). A method resolves on
the class every binding of the local builds; a model of unknown class, a step that switches,
replaces or rebuilds the model, or one the project does not define keeps the report.
"""

from __future__ import annotations

import os

import pytest

from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import check_file, package_repository, rows_of
from tests.test_ql201_later_stored_attributes import CAPTURE_ROW, HELPER

NET = """\
import torch


def set_train(m):
    m.train()


def deco(f):
    return f


class Base(torch.nn.Module):
    def fuse_base(self):
        return self


class Net(Base):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)

    def fuse(self, verbose=True):
        if verbose:
            print(self)
        return self

    def fuse_train(self):
        self.train()
        return self

    def fuse_via(self):
        set_train(self)
        return self

    def fuse_copy(self):
        return Net()

    def fuse_none(self):
        print(self)

    def fuse_parts(self):
        self.bn = torch.nn.BatchNorm2d(3)
        return self

    @deco
    def fuse_decorated(self):
        return self


class Other(torch.nn.Module):
    def fuse(self):
        return self
"""

WRAP = """\
import torch


def plain(model):
    return model


def trains(model):
    model.train()
    return model


def rebuilt(model):
    return type(model)()


def swapped(model):
    model.bn = torch.nn.BatchNorm2d(3)
    return model


def tuned(model, part):
    part.train()
    return model
"""

EXPORTER = """\
from copy import deepcopy

from pkg.helper import to_q
from pkg.net import Net, Other
from pkg.wrap import plain, rebuilt, swapped, trains, tuned


class Exporter:
    def __init__(self, q, data):
        self.q = q
        self.data = data

    def __call__(self, im, half):
        model = deepcopy(Net()).to("cpu")
        model.MODE()
        model.float()
STEPS        self.model = model
        self.im = im
        return self.export_q()

    def export_q(self):
        return to_q(self.model, self.im, self.q, self.data)

    def keep(self, model):
        print(model)
        return self
"""


def _indent(steps: str) -> str:
    return "".join(f"        {line}\n" for line in steps.splitlines())


def _exporter(steps: str, mode: str = "eval") -> str:
    return EXPORTER.replace("STEPS", _indent(steps)).replace("MODE", mode)


def _cross(tmp_path, exporter: str) -> list[int]:
    root = package_repository(tmp_path / "repo", helper=HELPER, net=NET, wrap=WRAP, exp=exporter)
    return rows_of(check_file(root / "pkg" / "helper.py", ("QL201",)).diagnostics)


def _same(tmp_path, exporter: str) -> list[int]:
    text = exporter.replace("from pkg.helper import to_q\n", "") + "\n\n" + HELPER.split("\n\n\n", 1)[1]
    text = HELPER.split("\n\n\n", 1)[0] + "\n" + text
    root = package_repository(tmp_path / "repo", net=NET, wrap=WRAP, exp=text)
    rows = rows_of(check_file(root / "pkg" / "exp.py", ("QL201",)).diagnostics)
    capture = text.splitlines().index("    ep = torch.export.export(m, (x,))") + 1
    return ["capture" if r == capture else r for r in rows]


# Steps that hand the evaled model back as it came: quiet after `.eval()`, reported after `.train()`.
KEPT = {
    "a method returning self, stored": "model = model.fuse()",
    "a method returning self, with arguments": "model = model.fuse(verbose=False)",
    "a method returning self, as a statement": "model.fuse()",
    "a base class's method returning self": "model = model.fuse_base()",
    "a project function returning its parameter": "model = plain(model)",
    "a project function as a statement": "plain(model)",
    "two steps in a row": "model = model.fuse()\nmodel = plain(model)",
    "a function imported in the branch": "if half:\n    from pkg.wrap import plain as keep\n    model = keep(model)",
    "a cast under a flag": "if half:\n    model = model.half()",
    "a cast in a pair assignment": "im, model = im.half(), model.half()",
    "a flag choosing between two kept steps": "if half:\n    model = model.fuse()\nelse:\n    model = plain(model)",
    "a branch with other statements": "if half:\n    n = 2\n    model = model.fuse()",
}


@pytest.mark.parametrize("steps", KEPT.values(), ids=KEPT.keys())
def test_kept_steps_leave_the_eval_store_quiet_across_modules(tmp_path, steps):
    assert _cross(tmp_path, _exporter(steps)) == []


@pytest.mark.parametrize("steps", KEPT.values(), ids=KEPT.keys())
def test_kept_steps_leave_a_train_store_reported_across_modules(tmp_path, steps):
    assert _cross(tmp_path, _exporter(steps, "train")) == [CAPTURE_ROW]


def test_kept_steps_in_one_module(tmp_path):
    steps = "model = model.fuse()\nmodel = plain(model)"
    assert _same(tmp_path / "e", _exporter(steps)) == []
    assert _same(tmp_path / "t", _exporter(steps, "train")) == ["capture"]


# Steps after which the stored model's mode is not known: reported after `.eval()` too.
UNKNOWN = {
    "a method that trains it": "model = model.fuse_train()",
    "a method that trains it, as a statement": "model.fuse_train()",
    "a method that hands it to a helper training it": "model = model.fuse_via()",
    "a method returning a new model": "model = model.fuse_copy()",
    "a method returning nothing": "model = model.fuse_none()",
    "a method giving it a new batch norm": "model = model.fuse_parts()",
    "a decorated method": "model = model.fuse_decorated()",
    "a method the project does not define": "model = model.fuse_elsewhere()",
    "a function that trains it": "model = trains(model)",
    "a function that trains it, as a statement": "trains(model)",
    "a function returning a new model": "model = rebuilt(model)",
    "a function giving it a new batch norm": "model = swapped(model)",
    "an unknown function": "model = wrap_elsewhere(model)",
    "a branch that trains it": "if half:\n    model.train()",
    "a branch that rebuilds it": "if half:\n    model = Net()",
    "a branch whose test hands it on": "if check(model):\n    model = model.half()",
    "a pair that keeps an alias": "model, alias = model.half(), model",
    "a part of it handed on beside it": "model = tuned(model, model.bn)",
    "a switch in its arguments": "model = model.fuse(model.bn.train())",
    "the exporter's method returning the exporter": "model = self.keep(model)",
}


@pytest.mark.parametrize("steps", UNKNOWN.values(), ids=UNKNOWN.keys())
def test_steps_of_unknown_effect_stay_reported(tmp_path, steps):
    assert _cross(tmp_path, _exporter(steps)) == [CAPTURE_ROW]


def test_a_method_on_a_model_of_unknown_class_stays_reported(tmp_path):
    # Ultralytics' shape: the copy of `__call__`'s own parameter, whose class nothing here says,
    # fused (`fuse` of the project's `Net` returns `self`, but the model may be of any class).
    text = _exporter("model = model.fuse()").replace(
        "def __call__(self, im, half):", "def __call__(self, net, im, half):"
    )
    text = text.replace("deepcopy(Net())", "deepcopy(net)")
    assert _cross(tmp_path, text) == [CAPTURE_ROW]


def test_a_local_bound_to_two_classes_stays_reported(tmp_path):
    # `fuse` of `Other` also returns `self`, but which class the method resolves on is not known.
    text = _exporter("model = model.fuse()").replace(
        '        model = deepcopy(Net()).to("cpu")\n',
        '        model = deepcopy(Net()).to("cpu")\n        if half:\n            model = Other()\n',
    )
    assert _cross(tmp_path, text) == [CAPTURE_ROW]


def test_an_export_method_callable_before_the_store_stays_reported(tmp_path):
    # `__init__` stores a model built in train mode: `export_q` may run before `__call__`.
    text = _exporter("model = model.fuse()").replace(
        "        self.data = data\n", "        self.data = data\n        self.model = Net()\n"
    )
    assert _cross(tmp_path, text) == [CAPTURE_ROW]


def test_a_switch_after_the_store_stays_reported(tmp_path):
    text = _exporter("model = model.fuse()").replace(
        "        self.model = model\n", "        self.model = model\n        model.train()\n"
    )
    assert _cross(tmp_path, text) == [CAPTURE_ROW]


def test_cached_run_follows_the_function_that_comes_to_train_it(tmp_path):
    # The quiet answer rests on `plain`'s body in another module: when it comes to train the
    # model, the next cached run reports.
    root = package_repository(
        tmp_path / "repo", helper=HELPER, net=NET, wrap=WRAP, exp=_exporter("model = plain(model)")
    )
    settings = Settings(select=("QL201",), root=root, cache_dir=tmp_path / "cache")

    def rows():
        run = run_check([str(root)], settings, use_cache=True, jobs=1)
        return [(os.path.basename(r.path), d.range.start.row) for r in run.results for d in r.diagnostics]

    assert rows() == []
    (root / "pkg" / "wrap.py").write_text(WRAP.replace("def plain(model):\n", "def plain(model):\n    model.train()\n"))
    assert rows() == [("helper.py", CAPTURE_ROW)]


# Another class of the exporter's module storing a field of the same name on its own instances
# (Ultralytics' `NMSModel.__init__`: `self.model = model`) writes no exporter's field.
WRAPPER = """

class Wrapper:
    def __init__(self, model):
        self.model = model
        self.model.extra = 1
"""


def test_another_class_storing_its_own_field_of_that_name_is_no_store_of_it(tmp_path):
    text = _exporter("") + WRAPPER
    assert _cross(tmp_path / "e", text) == []
    assert _cross(tmp_path / "t", text.replace("model.eval()", "model.train()")) == [CAPTURE_ROW]


OTHER_WRITERS = {
    "a base of the exporter storing it": (
        "class Exporter:",
        "class Base:\n    def reset(self, model):\n        self.model = model\n\n\nclass Exporter(Base):",
    ),
    "a class storing it on an instance it is handed": (
        "class Exporter:",
        "class Swap:\n    def apply(self, exporter, model):\n        exporter.model = model\n\n\nclass Exporter:",
    ),
    "a static method storing it": (
        "class Exporter:",
        "class Swap:\n    @staticmethod\n    def apply(self, model):\n        self.model = model\n\n\nclass Exporter:",
    ),
    "a class rebinding its first parameter": (
        "class Exporter:",
        "class Swap:\n    def apply(self, exporter, model):\n        self = exporter\n        self.model = model\n\n\n"
        "class Exporter:",
    ),
}


@pytest.mark.parametrize(("old", "new"), OTHER_WRITERS.values(), ids=OTHER_WRITERS.keys())
def test_other_writers_of_the_field_stay_reported(tmp_path, old, new):
    assert _cross(tmp_path, _exporter("").replace(old, new, 1)) == [CAPTURE_ROW]

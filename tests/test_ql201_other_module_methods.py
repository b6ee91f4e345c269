"""QL201/QL202 read a method of another project module's class where an instance (or the
class) calls it, as they read that module's functions (issue 14): `Ready().apply(model)`
with `class Ready: def apply(self, model): model.eval()` in `pkg/ready.py` leaves the model in
eval mode; it was taken as leaving the mode alone, and a capture after it was reported.

Each case is checked alone (a one-file check of the script) and in a run over the whole
repository, which must agree (flows of other modules are kept and reused across checks)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conftest import alone_and_in_run, check_file, codes, lint, package_repository, rows_of
from tests.snippets import CATCHING_TRACED

READY = (
    """\
import torch
from torch import nn

from pkg.base import Base

DEBUG = False


"""
    + CATCHING_TRACED
    + """

def copy_of(m):
    return m


class Ready:
    def apply(self, model):
        model.eval()
        return model

    @staticmethod
    def static_apply(model):
        model.eval()
        return model

    @classmethod
    def class_apply(cls, model):
        model.eval()
        return model

    @traced
    def traced_apply(self, model):
        model.eval()
        return model


class Wrapper:
    def __init__(self, model, inputs=None):
        self.model = model
        self.inputs = inputs

    def prepare(self):
        self.model.eval()
        return self.model

    def fit(self):
        self.model.train()

    def maybe(self, flag=False):
        if not flag:
            return self.model
        self.model.eval()
        return self.model


class Copying:
    def __init__(self, model):
        self.model = model

    def prepare(self):
        self.model = copy_of(self.model)
        self.model.eval()
        return self.model


class Child(Base):
    pass


class Override(Base):
    def apply(self, model):
        return model


class Trains:
    def apply(self, model):
        model.train()
        return model


class Other:
    def apply(self, model, other):
        other.eval()
        return model


class Flagged:
    def apply(self, model, flag=False):
        if flag:
            model.eval()
        return model


class Debugged:
    def apply(self, model):
        if DEBUG:
            model.eval()
        return model


def _frozen(model):
    model.eval()
    return model


def _settle(model):
    return _frozen(model)


def _keep(model):
    return model


def _capture(model, x):
    return torch.export.export(model, (x,)).module()


class Delegating:
    def apply(self, model):
        return _frozen(model)

    def deep_apply(self, model):
        return _settle(model)

    def idle_apply(self, model):
        return _keep(model)

    def capture(self, model, x):
        return _capture(model, x)
"""
)


BASE = """\
class Base:
    def apply(self, model):
        model.eval()
        return model
"""

SCRIPT = """\
import json

import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e

from pkg.ready import Child, Copying, Debugged, Delegating, Flagged, Other, Override, Ready, Trains, Wrapper


def main(quantizer, x):
    model = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3))
    {body}
    ep = torch.export.export(model, (x,)).module()
    return {prepare}(ep, quantizer)
"""
CAPTURE_ROW = SCRIPT.splitlines().index("    ep = torch.export.export(model, (x,)).module()") + 1


def _rows(tmp_path: Path, body: str, prepare: str = "prepare_pt2e") -> list[int]:
    """QL201/QL202 rows of `scripts/run.py`, alone and in a run over the repository (equal)."""
    root = package_repository(tmp_path / "repo", ready=READY, base=BASE)
    script = root / "scripts" / "run.py"
    script.parent.mkdir()
    body = textwrap.indent(textwrap.dedent(body), "    ").strip()
    script.write_text(SCRIPT.format(body=body, prepare=prepare))
    return [row for _, row, _ in alone_and_in_run(script, root, ("QL201", "QL202"), tmp_path / "cache")]


QUIET = {
    "instance": "Ready().apply(model)",
    "bound-instance": "ready = Ready()\nready.apply(model)",
    "static-method": "Ready.static_apply(model)",
    "class-method": "Ready.class_apply(model)",
    "unbound-method": "Ready.apply(Ready(), model)",
    "instance-built-with-the-model": "Wrapper(model).prepare()",
    "keyword-given": "wrapper = Wrapper(model=model, inputs=x)\nwrapper.prepare()",
    "base-class-of-a-third-module": "Child().apply(model)",
    "base-called-on-the-class": "Child.apply(Child(), model)",
    "delegates-to-a-module-helper": "Delegating().apply(model)",
    "delegates-two-helpers-down": "Delegating().deep_apply(model)",
}


@pytest.mark.parametrize("body", QUIET.values(), ids=QUIET.keys())
def test_a_method_of_another_modules_class_that_evals_the_model_vouches_for_the_capture(tmp_path, body):
    assert _rows(tmp_path, body) == []


LOUD = {
    "trains": "Trains().apply(model)",
    "evals-another-value": "Other().apply(model, nn.Linear(1, 1))",
    "flag-false-by-default": "Flagged().apply(model)",
    "dead-branch": "Debugged().apply(model)",
    "subclass-overrides-without-eval": "Override().apply(model)",
    "decorated": "Ready().traced_apply(model)",
    "installed-library-class": "json.JSONEncoder().encode(model)",
    "wrapper-evals-a-copy": "Copying(model).prepare()",
    "wrapper-evals-on-some-paths": "Wrapper(model).maybe()",
    "wrapper-of-another-model": "Wrapper(nn.Linear(1, 1)).prepare()",
    "delegates-to-a-helper-that-switches-nothing": "Delegating().idle_apply(model)",
}


@pytest.mark.parametrize("body", LOUD.values(), ids=LOUD.keys())
def test_a_method_that_leaves_the_model_in_train_mode_keeps_the_capture_reported(tmp_path, body):
    assert _rows(tmp_path, body) == [CAPTURE_ROW]


def test_a_method_that_captures_through_a_module_helper_is_read(tmp_path):
    # `Delegating().capture(model, x)` names no step itself: its module's `_capture` exports.
    root = package_repository(tmp_path / "repo", ready=READY, base=BASE)
    script = root / "run.py"
    script.write_text(
        "import torch\n"
        "from torch import nn\n"
        "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n\n"
        "from pkg.ready import Delegating\n\n\n"
        "def main(quantizer, x, evaled):\n"
        "    model = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3))\n"
        "    if evaled:\n"
        "        return prepare_pt2e(Delegating().capture(model.eval(), x), quantizer)\n"
        "    return prepare_pt2e(Delegating().capture(model, x), quantizer)\n"
    )
    assert rows_of(check_file(script, ("QL201",)).diagnostics) == [12]


def test_qat_mirror_a_method_that_trains_the_model_vouches_for_a_qat_capture(tmp_path):
    assert _rows(tmp_path / "trains", "model.eval()\nTrains().apply(model)", "prepare_qat_pt2e") == []
    assert _rows(tmp_path / "wrapper", "model.eval()\nWrapper(model).fit()", "prepare_qat_pt2e") == []


def test_qat_mirror_a_method_that_evals_the_model_is_reported_before_a_qat_capture(tmp_path):
    assert _rows(tmp_path / "evals", "Ready().apply(model)", "prepare_qat_pt2e") == [CAPTURE_ROW]
    assert _rows(tmp_path / "wrapper", "Wrapper(model).prepare()", "prepare_qat_pt2e") == [CAPTURE_ROW]


SAME_MODULE = {
    "static-method": "Ready.static_apply(model)",
    "class-method": "Ready.class_apply(model)",
    "instance-built-with-the-model": "Wrapper(model).prepare()",
}


@pytest.mark.parametrize("body", SAME_MODULE.values(), ids=SAME_MODULE.keys())
def test_a_method_called_on_a_class_or_a_wrapper_of_the_same_module_is_read_too(body):
    source = READY.replace(
        "from pkg.base import Base\n", "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n"
    )
    source = source.replace("(Base)", "(Ready)")
    source += "\n\ndef main(quantizer, x):\n"
    source += "    model = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3))\n"
    source += f"    {body}\n"
    source += "    return prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)\n"
    assert codes(lint(source, select=("QL201",))) == []
    loud = source.replace(f"    {body}\n", "    Ready.traced_apply(Ready(), model)\n")
    assert codes(lint(loud, select=("QL201",))) == ["QL201"]

"""QL201: dry runs and flag loops between an exporter's `model.eval()` and `self.model = model`
(issue 14, item 2; Ultralytics' Ethos-U exporter, `ethos.py:56`).

`Exporter.__call__` evals its copy, marks its heads for export in a loop over `model.modules()`
(`m.export = True`, `m.dynamic = ...`, `m.forward = m.forward_split`) and runs it twice on a
dummy input before storing it; `export_q` hands `self.model` to a helper in another module that
captures it. Forward calls and loops that set no module's mode leave the stored model in the
mode the switch set (`kept_steps`), and a cast of the fused model (`model = model.half()`)
leaves its class known (`kept_rebindings`); a loop that sets `training`, calls a method of its module or
hands it on, a dry run handed the model, and the loop's module switched after the loop keep
the report.
"""

from __future__ import annotations

import pytest

from tests.test_ql201_kept_rebindings import _cross, _exporter, _same
from tests.test_ql201_later_stored_attributes import CAPTURE_ROW


def _steps(steps: str, mode: str = "eval") -> str:
    return _exporter(steps, mode).replace("from copy import deepcopy\n", "from copy import deepcopy\n\nimport torch\n")


# Steps that leave the evaled model's mode as it was: quiet after `.eval()`, reported after `.train()`.
KEPT = {
    "a dry run": "model(im)",
    "a dry run whose output is kept": "y = model(im)",
    "dry runs in a loop": "y = None\nfor _ in range(2):\n    y = model(im)",
    "a dry run without gradients": "with torch.no_grad():\n    y = model(im)",
    "a dry run on a computed input": "y = model(torch.zeros(1, 3, 8, 8), flag=half)",
    "a flag loop": "for m in model.modules():\n    m.export = True",
    "a flag loop under class tests": (
        "for m in model.modules():\n"
        "    if isinstance(m, torch.nn.BatchNorm2d):\n"
        "        m.export = True\n"
        "        m.dynamic = half\n"
        "    elif hasattr(m, 'forward_split') and not m.export:\n"
        "        m.forward = m.forward_split\n"
        "    else:\n"
        "        pass"
    ),
    "a named flag loop": "for name, m in model.named_modules():\n    if name == 'bn':\n        m.export = True",
    "a flag loop over the children binding a local": (
        "for m in model.children():\n    n = 2 if half else 1\n    m.n = n"
    ),
    "a flag loop reading the model's attributes": "for m in model.modules():\n    m.shape = model.bn.num_features",
    "a fused model cast under a flag": "model = model.fuse()\nif half:\n    model = model.half()",
    "the exporter's order": (
        "model = model.fuse()\n"
        "for m in model.modules():\n"
        "    if isinstance(m, torch.nn.BatchNorm2d):\n"
        "        m.export = True\n"
        "y = None\n"
        "for _ in range(2):\n"
        "    y = model(im)\n"
        "if half:\n"
        "    model = model.half()"
    ),
}


@pytest.mark.parametrize("steps", KEPT.values(), ids=KEPT.keys())
def test_kept_steps_leave_the_eval_store_quiet_across_modules(tmp_path, steps):
    assert _cross(tmp_path, _steps(steps)) == []


@pytest.mark.parametrize("steps", KEPT.values(), ids=KEPT.keys())
def test_kept_steps_leave_a_train_store_reported_across_modules(tmp_path, steps):
    assert _cross(tmp_path, _steps(steps, "train")) == [CAPTURE_ROW]


def test_kept_steps_in_one_module(tmp_path):
    steps = KEPT["the exporter's order"]
    assert _same(tmp_path / "e", _steps(steps)) == []
    assert _same(tmp_path / "t", _steps(steps, "train")) == ["capture"]


# Steps that switch the model, or whose effect on its mode is not known: reported after `.eval()`.
SWITCHING = {
    "a loop setting training": "for m in model.modules():\n    m.training = True",
    "a loop training each module": "for m in model.modules():\n    m.train()",
    "a loop training batch norms": (
        "for m in model.modules():\n    if isinstance(m, torch.nn.BatchNorm2d):\n        m.train()"
    ),
    "a loop setting training by setattr": "for m in model.modules():\n    setattr(m, 'training', True)",
    "a loop whose forward becomes train": "for m in model.modules():\n    m.forward = m.train\ny = model(im)",
    "a loop calling getattr's answer": "for m in model.modules():\n    x = getattr(m, 'train')()",
    "a loop calling a method of its module": "for m in model.modules():\n    m.fuse()",
    "a loop handing its module on": "for m in model.modules():\n    tune(m)",
    "a loop keeping a part in a local": "for m in model.modules():\n    part = m.bn\npart.train()",
    "a loop testing through a call": "for m in model.modules():\n    if m.is_head():\n        m.export = True",
    "a loop over a part's modules": "for m in model.bn.modules():\n    m.training = True",
    "a loop with an else": "for m in model.modules():\n    m.export = True\nelse:\n    model.train()",
    "the loop's module trained after it": "for m in model.modules():\n    m.export = True\nm.train()",
    "a named loop training each pair": "for pair in model.named_modules():\n    pair[1].train()",
    "a loop rebinding the model": "for model in model.modules():\n    model.export = True",
    "a dry run handed the model": "y = model(im, model)",
    "a dry run rebinding the model": "model = model(im)",
    "a dry run then a switch to train": "y = model(im)\nmodel.train()",
    "dry runs in a loop that trains": "for _ in range(2):\n    y = model(im)\n    model.train()",
    "a dry run in a context given the model": "with tuning(model):\n    y = model(im)",
    "a fused model cast, then trained": "model = model.fuse()\nmodel = model.half()\nmodel.train()",
    "a fused model cast through an unknown call": "model = model.fuse()\nmodel = model.half(pick(model))",
}


@pytest.mark.parametrize("steps", SWITCHING.values(), ids=SWITCHING.keys())
def test_switching_steps_stay_reported(tmp_path, steps):
    assert _cross(tmp_path, _steps(steps)) == [CAPTURE_ROW]


def test_the_loops_module_trained_after_the_store_stays_reported(tmp_path):
    text = _steps("for m in model.modules():\n    m.export = True").replace(
        "        self.model = model\n", "        self.model = model\n        m.train()\n"
    )
    assert _cross(tmp_path, text) == [CAPTURE_ROW]


def test_a_flag_loop_inside_a_branch_stays_reported(tmp_path):
    # Only a loop in the store's own block has its module's name checked after it.
    steps = "if half:\n    for m in model.modules():\n        m.export = True"
    assert _cross(tmp_path, _steps(steps)) == [CAPTURE_ROW]

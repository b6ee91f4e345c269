"""QL201: the stage a test harness runs on the artifact of the stage before (issue 14, items 2, 7).

ExecuTorch's backend Tester (`backends/test/harness/tester.py`; the XNNPACK Tester of 2024 and
early 2025 before it) keeps the module its constructor was given in `self.original_module`,
after `module.eval()` (or `module.train()` when `training=True`). Each stage method hands its
stage to `_run_stage(stage_instance, inputs)`, which asks `_pre(stage)` for the artifact and
calls `stage_instance.run(artifact, inputs=inputs)`; the Quantize stage's `run` captures that
artifact for PTQ. `_pre` returns `self.original_module` while no stage has run, and after that
`self.get_artifact()`, the previous stage's `artifact` (`self.stages[self.cur].artifact`).

Whether every artifact Quantize is handed is the evaled module has no sound reading from the
code: the receiver is a parameter the callers fill with a test's stage or a class looked up in a
table the constructor may be given; past the first stage the artifact is whatever the stage
chosen by `self.cur` exposes, and only the table `self.pipeline`, checked by an `assert` (gone
under `python -O`), keeps Quantize first; ArmTester adds a stage before it (`InitialModel`, whose
artifact is the model it was built with); the constructor's train arm is taken by a test that
passes `training=True`. So the harness's capture stays reported (item 7), as the corpus rows at
the four ExecuTorch pins are. What is followed, and must stay so: a method of the tester that
returns the evaled attribute on every path, with the stage built where it is run. These tests
keep the train-mode look-alikes reported, whatever reading of the chain is taught later.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import check_file, package_repository, rows_of
from tests.snippets import QUANTIZE_STAGE, QUANTIZE_STAGE_CAPTURE_ROW

CAPTURE_ROW = QUANTIZE_STAGE_CAPTURE_ROW

# The harness: the artifact is the original module before any stage ran, the previous stage's after.
HARNESS = """\
from pkg.stage import Quantize


class Tester:
    def __init__(self, module, inputs, training=False):
        if training:
            module.train()
        else:
            module.eval()
        self.original_module = module
        self.inputs = inputs
        self.stages = {}
        self.cur = None
        self.pipeline = {"quantize": ["export"], "export": []}

    def _pre(self, name):
        artifact = self.original_module
        if self.cur:
            assert name in self.pipeline[self.cur]
            artifact = self.stages[self.cur].artifact
        self.cur = name
        return artifact

    def _run_stage(self, name, stage_instance, inputs=None):
        artifact = self._pre(name)
        stage_instance.run(artifact, inputs=inputs)
        self.stages[name] = stage_instance
        return self

    def quantize(self, q, quantize_stage=None):
        return self._run_stage("quantize", quantize_stage or Quantize(q), self.inputs)
"""

# What is followed: the stage built where it runs, on what a method returns on every path.
FOLLOWED = """\
from pkg.stage import Quantize


class Tester:
    def __init__(self, module, inputs, training=False):
        if training:
            module.train()
        else:
            module.eval()
        self.original_module = module
        self.inputs = inputs
        self.cur = None

    def _pre(self, name):
        self.cur = name
        return self.original_module

    def quantize(self, q):
        Quantize(q).run(self._pre("quantize"), self.inputs)
        return self
"""

# The previous stage's artifact on the path where a stage ran before.
PREVIOUS = FOLLOWED.replace(
    "        self.cur = name\n        return self.original_module\n",
    "        artifact = self.original_module\n"
    "        if self.cur:\n"
    "            artifact = self.stages[self.cur].artifact\n"
    "        self.cur = name\n"
    "        return artifact\n",
).replace("        self.cur = None\n", "        self.cur = None\n        self.stages = {}\n")

USE = """\
from pkg.stage import Net
from pkg.tester import Tester


def test_quantize(q, x):
    Tester(Net(), (x,)).quantize(q)
"""

# A subclass whose constructor stores the module as it came, without the base's switch.
TRAIN_SUBCLASS = """\
from pkg.stage import Net
from pkg.tester import Tester


class TrainTester(Tester):
    def __init__(self, module, inputs):
        self.original_module = module
        self.inputs = inputs
        self.cur = None


def test_quantize(q, x):
    TrainTester(Net(), (x,)).quantize(q)
"""

# ExecuTorch's XNNPACK Tester (current pin): a subclass relaying its keywords, the base's
# `training` flag among them, to the base constructor; test_batch_norm passes training=True.
RELAY_SUBCLASS = """\
from pkg.stage import Net
from pkg.tester import Tester


class XTester(Tester):
    def __init__(self, module, inputs, **kwargs):
        super().__init__(module, inputs, **kwargs)


def test_quantize(q, x):
    XTester(Net(), (x,), training=True).quantize(q)
"""

# A test that runs the stage itself, on a model of its own.
DIRECT = """\
from pkg.stage import Net, Quantize


def test_stage(q, x):
    Quantize(q).run(Net(), (x,))
"""


def _rows(tmp_path: Path, tester: str, **others: str) -> list[int]:
    modules = {"stage": QUANTIZE_STAGE, "tester": tester, "use": USE, **others}
    root = package_repository(tmp_path / "repo", **modules)
    return rows_of(check_file(root / "pkg" / "stage.py", ("QL201",)).diagnostics)


def test_a_method_returning_the_evaled_module_on_every_path_vouches_for_the_stage(tmp_path):
    assert _rows(tmp_path, FOLLOWED) == []


def test_the_previous_stages_artifact_keeps_the_finding(tmp_path):
    # The constructor evals the module, but past the first stage `_pre` hands on what the stage
    # chosen by `self.cur` exposes: nothing in the code says Quantize always runs first.
    assert _rows(tmp_path, PREVIOUS) == [CAPTURE_ROW]


@pytest.mark.parametrize("use", [USE, USE.replace("(x,))", "(x,), training=True)")], ids=["evaled", "training"])
def test_the_harness_chain_keeps_the_finding(tmp_path, use):
    # The stage is a parameter of `_run_stage` and the artifact `_pre`'s: the callers are unknown.
    assert _rows(tmp_path, HARNESS, use=use) == [CAPTURE_ROW]


def test_the_constructors_train_arm_is_reported(tmp_path):
    use = USE.replace("(x,))", "(x,), training=True)")
    assert _rows(tmp_path, FOLLOWED, use=use) == [CAPTURE_ROW]
    # A construction that leaves the flag at its default beside it does not vouch for this one.
    both = use + "\n\ndef test_eval(q, x):\n    Tester(Net(), (x,)).quantize(q)\n"
    assert _rows(tmp_path / "both", FOLLOWED, use=both) == [CAPTURE_ROW]


def test_a_tester_subclass_storing_a_train_mode_module_is_reported(tmp_path):
    # Today any subclass keeps the finding (`switched_subclasses`: its instances may be built
    # otherwise); a reading of subclass constructors must still find this one's train mode.
    assert _rows(tmp_path, FOLLOWED, sub=TRAIN_SUBCLASS) == [CAPTURE_ROW]


def test_a_stage_run_on_an_artifact_from_elsewhere_is_reported(tmp_path):
    # The tester's own chain is harmless; a test that hands the stage a train-mode model is not.
    assert _rows(tmp_path, FOLLOWED, direct=DIRECT) == [CAPTURE_ROW]
    evaled = DIRECT.replace("Quantize(q).run(Net(), (x,))", "Quantize(q).run(Net().eval(), (x,))")
    assert _rows(tmp_path / "evaled", FOLLOWED, direct=evaled) == []


def test_a_subclass_relaying_the_training_flag_is_reported(tmp_path):
    # The flag reaches the base's `module.train()` through `**kwargs`: a reading of subclass
    # constructors, or of the constructions that leave `training` at its default, must see it.
    assert _rows(tmp_path, FOLLOWED, sub=RELAY_SUBCLASS) == [CAPTURE_ROW]

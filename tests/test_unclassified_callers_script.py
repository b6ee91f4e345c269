"""scripts/unclassified_callers.py lists every caller that keeps a QL201 helper reported,
past the first (which alone decides the verdict) and past a subclass taking the method as a
value (which decides before any call is read). Run in its own process: it patches qlint's
modules for the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import package_repository
from tests.test_ql201_subclass_callers import IMPORT, SUITE

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "unclassified_callers.py"
TESTS = """
class TestOps(Suite):
    def test_evaled(self):
        self.quantize(Net().eval(), torch.randn(1, 3, 4, 4))

    def test_train(self):
        self.quantize(Net(), torch.randn(1, 3, 4, 4))

    def test_loaded(self, load):
        self.quantize(load(), torch.randn(1, 3, 4, 4))

    def test_handed(self, run):
        run(quantize_method=self.quantize)
"""


def test_every_unclassified_caller_and_unread_reference_is_listed(tmp_path):
    root = package_repository(tmp_path / "repo", suite=SUITE, test_ops=IMPORT + TESTS)
    env = {**os.environ, "PYTHONPATH": str(SCRIPT.parents[1])}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "pkg/suite.py"], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    lines = done.stdout.splitlines()
    listed = sorted((int(line.split(":")[1]), line.split(": ")[1]) for line in lines if line.startswith(str(root)))
    offset = IMPORT.count("\n")
    rows = {text.strip(): i + 1 + offset for i, text in enumerate(TESTS.splitlines())}
    assert listed == [
        (rows["self.quantize(Net(), torch.randn(1, 3, 4, 4))"], "caller"),
        (rows["self.quantize(load(), torch.randn(1, 3, 4, 4))"], "caller"),
        (rows["run(quantize_method=self.quantize)"], "reference"),
    ]
    assert "3 unclassified" in lines

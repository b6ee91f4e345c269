"""`qlint fix` applies a QL101 fix in the module that defines a constant compared elsewhere,
but only when that module is part of the run; `--diff` shows it without writing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_package
from tests.snippets import QDQ_USER as USER
from tests.snippets import QDQ_UTILS as UTILS


@pytest.fixture
def pkg(tmp_path) -> Path:
    return write_package(tmp_path, "pkg", qdq_utils=UTILS, passes=USER)


def qlint(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "qlint", *args, "--no-cache"]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_fix_edits_the_defining_module(pkg):
    fixed = UTILS.replace("dequantize_per_channel]", "dequantize_per_channel.default]")
    preview = qlint(pkg.parent, "fix", "--diff", "pkg")
    assert preview.returncode == 1
    assert "+DQ_OPS = [torch.ops.quantized_decomposed.dequantize_per_channel.default]" in preview.stdout
    assert (pkg / "qdq_utils.py").read_text() == UTILS
    run = qlint(pkg.parent, "fix", "pkg")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (pkg / "qdq_utils.py").read_text() == fixed
    assert (pkg / "passes.py").read_text() == USER
    assert qlint(pkg.parent, "fix", "pkg").stdout.strip() == "All checks passed!"


def test_a_file_outside_the_run_is_never_edited(pkg):
    run = qlint(pkg.parent, "fix", "pkg/passes.py")
    assert run.returncode == 1
    assert (pkg / "qdq_utils.py").read_text() == UTILS
    assert "pkg/passes.py:5:24: QL101" in run.stdout and "qdq_utils.py:3" in run.stdout

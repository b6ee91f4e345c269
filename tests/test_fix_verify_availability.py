"""`qlint fix --verify` refuses, saying what to install, when the runtime checker cannot run:
applying fixes as "verified" that nothing verified would be worse than not fixing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import qlint.runtime
import qlint.runtime.client
from qlint.cli import main
from qlint.runtime.availability import install_hint
from tests.snippets import PACKET_MATCHER as PACKET

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fixable(tmp_path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.qlint]\n")
    path = tmp_path / "m.py"
    path.write_text(PACKET)
    return path


def test_install_hint_names_the_distribution_and_the_extra():
    assert re.fullmatch(r'pip install "[\w.-]+\[runtime\]"', install_hint())


def test_verify_without_torch_refuses_and_writes_nothing(fixable, monkeypatch, capsys):
    monkeypatch.setattr(qlint.runtime.client, "installed_versions", lambda: {"torch": None, "torchao": None})
    monkeypatch.setattr(qlint.runtime, "_checkers", {})
    code = main(["fix", "--verify", "--no-cache", str(fixable)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == (
        "qlint: error: --verify: the runtime checker needs torch and torchao, which are not installed;"
        f" install the runtime extra: {install_hint()}\n"
    )
    assert fixable.read_text() == PACKET


def test_verify_with_a_torch_that_cannot_be_imported_refuses(fixable, tmp_path):
    """Metadata says torch is installed, but `import torch` fails (a shadowing package on
    PYTHONPATH, a broken wheel): the worker cannot start, so nothing can be verified."""
    shadow = tmp_path / "shadow"
    (shadow / "torch").mkdir(parents=True)
    (shadow / "torch" / "__init__.py").write_text("raise ImportError('libtorch_cpu.so: cannot open shared object')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shadow), str(ROOT)]))
    cmd = [sys.executable, "-m", "qlint", "fix", "--verify", "--no-cache", str(fixable)]
    out = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2, out.stderr
    assert out.stdout == ""
    assert out.stderr.startswith("qlint: error: --verify: the runtime checker cannot start (")
    assert "ImportError: libtorch_cpu.so: cannot open shared object" in out.stderr
    assert re.search(r'check the runtime extra\'s install: pip install "[\w.-]+\[runtime\]"\n$', out.stderr)
    assert out.stderr.count("\n") == 1
    assert fixable.read_text() == PACKET

"""The pre-commit hooks, run by the real `pre-commit try-repo` against a temporary repository.

The hook environment is built offline: no index, no build isolation (the fresh virtualenv's
own setuptools builds qlint, which has no runtime dependencies).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.conftest import ROOT
from tests.snippets import PACKET_MATCHER as BUGGY

pytestmark = pytest.mark.skipif(shutil.which("pre-commit") is None, reason="pre-commit is not installed")


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("pre-commit-home")


def try_repo(repo, home, hook):
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0"}
    return subprocess.run(
        ["pre-commit", "try-repo", str(ROOT), hook, "--all-files"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture
def repo(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "passes.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(
        "import torch\n\ndef g(n):\n    return n.target == torch.ops.aten.relu.default\n"
    )
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    return tmp_path


def test_check_hook_fails_on_a_finding(repo, home):
    run = try_repo(repo, home, "qlint")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "passes.py:5:24: QL101" in run.stdout
    assert "clean.py" not in run.stdout


def test_fix_hook_rewrites_the_file(repo, home):
    run = try_repo(repo, home, "qlint-fix")
    assert run.returncode == 1, run.stdout + run.stderr  # pre-commit fails a hook that modified files
    assert (repo / "passes.py").read_text() == BUGGY.replace("aten.relu", "aten.relu.default")
    again = try_repo(repo, home, "qlint-fix")
    assert again.returncode == 0, again.stdout + again.stderr

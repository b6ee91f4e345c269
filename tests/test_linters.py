"""The linters backend repositories already run: lintrunner (real binary, temporary git
repository) and flake8 (real flake8, qlint installed with its entry points in a venv)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from qlint.argfiles import ArgfileError, expand
from tests.conftest import ROOT
from tests.rollout_support import BUGGY, FIXED, make_repo, qlint


def test_argfile_lists_paths(tmp_path, monkeypatch):
    (tmp_path / "list.txt").write_text("a.py\n\n-odd.py\r\nsub/b.py\n")
    (tmp_path / "@real.py").write_text("")
    monkeypatch.chdir(tmp_path)
    assert expand(["@list.txt", "c.py", "@real.py"]) == ["a.py", "-odd.py", "sub/b.py", "c.py", "@real.py"]
    with pytest.raises(ArgfileError, match=r"missing\.txt: cannot read the path list"):
        expand(["@missing.txt"])


def test_cli_reads_a_path_list(tmp_path):
    (tmp_path / "a.py").write_text(BUGGY)
    (tmp_path / "b.py").write_text(BUGGY)
    (tmp_path / "paths").write_text(f"{tmp_path / 'a.py'}\n")
    run = qlint(tmp_path, "check", "--no-cache", "@paths")
    assert run.returncode == 1 and "a.py:5:24: QL101" in run.stdout and "b.py" not in run.stdout
    missing = qlint(tmp_path, "check", "--no-cache", "@nope")
    assert missing.returncode == 2 and "nope: cannot read the path list" in missing.stderr


def readme_lintrunner_toml() -> str:
    """The `.lintrunner.toml` the README shows, so the documented snippet is what is tested."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("# .lintrunner.toml\n", 1)[1].split("```", 1)[0]
    assert "'@{{PATHSFILE}}'" in block
    return block.replace("'python3'", repr(sys.executable)).replace("'check', ", "'check', '--no-cache', ")


@pytest.mark.skipif(shutil.which("lintrunner") is None, reason="lintrunner is not installed")
def test_lintrunner_reports_and_applies_the_fix(tmp_path):
    repo = make_repo(
        tmp_path / "r",
        {".lintrunner.toml": readme_lintrunner_toml(), "m.py": BUGGY, "ok.py": FIXED},
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(["lintrunner", "--all-files"], cwd=repo, capture_output=True, text=True, env=env, timeout=300)
    out = run.stdout + run.stderr
    assert "Linter failed" not in out, out
    assert "QL101" in out and "m.py" in out and "ok.py" not in out
    assert "lintrunner -a" in out  # a patch is on offer
    apply = subprocess.run(
        ["lintrunner", "-a", "--all-files"], cwd=repo, capture_output=True, text=True, env=env, timeout=300
    )
    assert apply.returncode == 0, apply.stdout + apply.stderr
    assert (repo / "m.py").read_text() == FIXED


@pytest.fixture(scope="module")
def flake8_python(tmp_path_factory) -> Path:
    pytest.importorskip("flake8")
    env_dir = tmp_path_factory.mktemp("flake8-venv")
    venv.create(env_dir, system_site_packages=True, with_pip=False)
    python = env_dir / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
    subprocess.run(
        [*pip, "--no-build-isolation", "-e", str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return python


FLAKE8_RUN = """
import sys
from flake8.main.application import Application
app = Application()
app.run(sys.argv[1:])
print("torch imported:", "torch" in sys.modules)
sys.exit(app.exit_code())
"""


def test_flake8_reports_ql_codes_without_torch(flake8_python, tmp_path):
    silenced = BUGGY.replace("aten.relu\n", "aten.relu  # noqa: QL101\n")
    repo = make_repo(tmp_path / "r", {"m.py": BUGGY, "s.py": silenced})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the venv's entry points, not the checkout's
    run = subprocess.run(
        [flake8_python, "-c", FLAKE8_RUN, "--select", "QL", "m.py", "s.py"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert run.returncode == 1, run.stderr
    assert "m.py:5:24: QL101 `torch.ops.aten.relu` is an OpOverloadPacket" in run.stdout
    assert "s.py" not in run.stdout
    assert "torch imported: False" in run.stdout


def test_flake8_uses_the_repositorys_settings(flake8_python, tmp_path):
    repo = make_repo(tmp_path / "r", {"pyproject.toml": '[tool.qlint]\nignore = ["QL101"]\n', "m.py": BUGGY})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run(
        [flake8_python, "-m", "flake8", "--select", "QL", "m.py"], cwd=repo, capture_output=True, text=True, env=env
    )
    assert run.returncode == 0 and run.stdout == "", run.stdout + run.stderr


def test_lintrunner_format_turns_file_problems_into_messages(tmp_path):
    (tmp_path / "a.py").write_text(BUGGY)
    (tmp_path / "paths").write_text(f"{tmp_path / 'a.py'}\n{tmp_path / 'gone.py'}\n")
    run = qlint(tmp_path, "check", "--no-cache", "--output-format", "lintrunner", "@paths")
    assert run.returncode == 0, run.stderr  # a nonzero exit would make lintrunner drop a.py's finding
    messages = [json.loads(line) for line in run.stdout.splitlines()]
    assert [m["name"] for m in messages] == ["QL101", "qlint error"]
    assert "gone.py" in messages[1]["description"] and messages[1]["severity"] == "error"
    bad = qlint(tmp_path, "check", "--no-cache", "--output-format", "lintrunner", "--select", "XX9", "a.py")
    assert bad.returncode == 2 and bad.stdout == ""  # a usage error is still the linter failing

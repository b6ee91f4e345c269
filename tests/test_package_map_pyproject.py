"""What `pyproject.toml` declares for setuptools (`declared_packages`), and that a file
declaring nothing of it is not handed to the TOML parser (~5 ms of every one-file check)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from qlint.analysis.names import package_map
from qlint.analysis.names.package_map import declared_packages, missing_package_dirs

ROOT = Path(__file__).resolve().parents[1]


def _repo(tmp_path, text: str) -> str:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text(text)
    return str(tmp_path)


def test_package_dir_and_find_where_are_read(tmp_path):
    repo = _repo(tmp_path, '[tool.setuptools.package-dir]\npkg = "src/pkg"\n')
    assert declared_packages(repo) == (("pkg", str(tmp_path / "src" / "pkg")),)
    package_map._declared.cache_clear()  # the file is read once per repository
    (tmp_path / "pyproject.toml").write_text('[tool.setuptools.packages.find]\nwhere = ["src"]\n')
    assert declared_packages(repo) == (("", str(tmp_path / "src")),)


def test_a_key_spelled_with_an_escape_is_still_read(tmp_path):
    repo = _repo(tmp_path, '[tool.setuptools."package\\u002ddir"]\npkg = "src/pkg"\n')
    assert declared_packages(repo) == (("pkg", str(tmp_path / "src" / "pkg")),)


def test_a_pyproject_that_declares_neither_key_is_not_parsed(tmp_path):
    repo = _repo(tmp_path, '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n')
    code = (
        "import sys\nfrom qlint.analysis.names.package_map import declared_packages\n"
        "print(declared_packages(sys.argv[1]), 'tomllib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, repo], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["()", "False"]


def test_a_file_that_is_not_toml_declares_nothing(tmp_path):
    repo = _repo(tmp_path, "[tool.setuptools.package-dir\npkg = \n")
    assert declared_packages(repo) == ()
    package_map._declared.cache_clear()  # the file is read once per repository
    (tmp_path / "pyproject.toml").write_bytes(b"[tool.setuptools.package-dir]\npkg = '\xff'\n")
    assert declared_packages(repo) == ()


_KEPT = (
    "import sys\nfrom qlint.analysis.names import package_map\nfrom qlint.summary_cache import SummaryStore\n"
    "package_map.use_store(SummaryStore(sys.argv[2]))\n"
    "print(package_map.declared_packages(sys.argv[1]), 'tomllib' in sys.modules)"
)


def _kept_run(repo: str, store) -> list[str]:
    out = subprocess.run([sys.executable, "-c", _KEPT, repo, str(store)], capture_output=True, text=True, check=True)
    return out.stdout.rsplit(" ", 1)


def test_a_later_run_reads_the_declarations_an_earlier_one_kept(tmp_path):
    repo = _repo(tmp_path / "repo", '[tool.setuptools.package-dir]\npkg = "src/pkg"\n')
    expected = str((("pkg", str(tmp_path / "repo" / "src" / "pkg")),))
    store = tmp_path / "store"
    assert _kept_run(repo, store) == [expected, "True\n"]  # parsed, and kept
    assert _kept_run(repo, store) == [expected, "False\n"]  # the TOML parser is not imported again


def test_kept_declarations_are_of_the_bytes_they_were_read_from(tmp_path):
    repo = _repo(tmp_path / "repo", '[tool.setuptools.package-dir]\npkg = "src/pkg"\n')
    store = tmp_path / "store"
    _kept_run(repo, store)
    (tmp_path / "repo" / "other").mkdir()
    (tmp_path / "repo" / "pyproject.toml").write_text('[tool.setuptools.package-dir]\npkg = "other"\n')
    assert _kept_run(repo, store) == [str((("pkg", str(tmp_path / "repo" / "other")),)), "True\n"]


def test_a_kept_directory_that_is_gone_is_not_declared(tmp_path):
    # What is kept is the text's declaration; whether the directory is there is asked each run.
    repo = _repo(tmp_path / "repo", '[tool.setuptools.package-dir]\npkg = "src/pkg"\n')
    store = tmp_path / "store"
    _kept_run(repo, store)
    (tmp_path / "repo" / "src" / "pkg").rmdir()
    assert _kept_run(repo, store) == ["()", "False\n"]


def test_a_damaged_kept_file_is_parsed_again(tmp_path):
    repo = _repo(tmp_path / "repo", '[tool.setuptools.package-dir]\npkg = "src/pkg"\n')
    store = tmp_path / "store"
    _kept_run(repo, store)
    (kept,) = store.glob("*.declared")
    kept.write_bytes(kept.read_bytes()[:-3])
    assert _kept_run(repo, store)[1] == "True\n"


def test_a_declared_package_dir_that_is_missing_is_told_apart(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\nexecutorch = "src/executorch"\nhere = "lib"\nfar = "../outside"\n'
    )
    (tmp_path / "lib").mkdir()
    repo = str(tmp_path)
    assert missing_package_dirs(repo) == (("executorch", "src/executorch"),)
    assert declared_packages(repo) == (("here", str(tmp_path / "lib")),)  # outside the checkout: neither


def _executorch_copy(root, with_links: bool):
    """An ExecuTorch-like checkout whose `src/executorch` links may have been left behind."""
    (root / ".git").mkdir()
    (root / "pyproject.toml").write_text('[tool.setuptools.package-dir]\nexecutorch = "src/executorch"\n')
    (root / "backends").mkdir()
    (root / "backends" / "__init__.py").touch()
    if with_links:
        (root / "src" / "executorch").mkdir(parents=True)
        (root / "src" / "executorch" / "backends").symlink_to("../../backends", target_is_directory=True)
    for i in range(30):  # a run that forks: the warning is said once all the same
        (root / "backends" / f"m{i}.py").write_text(
            "import torch\nfrom executorch.backends.m0 import f\n\n"
            "def g(n):\n    return f(n) or n.target == torch.ops.aten.add\n"
        )
    return root


def _check(root, *args):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    cmd = [sys.executable, "-m", "qlint", "check", "--no-cache", "--exit-zero", "-q", *args]
    return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args", [["-j2", "."], ["-j1", "."], ["backends/m1.py"]])
def test_a_checkout_without_its_package_dir_is_warned_about_once(tmp_path, args):
    run = _check(_executorch_copy(tmp_path, with_links=False), *args)
    warnings = [line for line in run.stderr.splitlines() if line.startswith("qlint: warning:")]
    assert len(warnings) == 1, run.stderr
    assert "package `executorch`" in warnings[0] and "'src/executorch'" in warnings[0]
    assert "Traceback" not in run.stderr


def test_a_full_checkout_is_not_warned_about(tmp_path):
    run = _check(_executorch_copy(tmp_path, with_links=True), "-j2", ".")
    assert run.stderr == ""


@pytest.mark.parametrize("jobs", ["-j1", "-j2"])
def test_a_whole_tree_run_keeps_the_declarations_for_the_next_check(tmp_path, jobs):
    """A run that forks reads the packaging files before it does (`warn_missing`): with the
    store in use already, so that the first edited check after it does not parse them."""
    (tmp_path / "repo").mkdir()
    root = _executorch_copy(tmp_path / "repo", with_links=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    cmd = [
        sys.executable,
        "-m",
        "qlint",
        "check",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--exit-zero",
        "-q",
        jobs,
        ".",
    ]
    run = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    (store,) = (tmp_path / "cache").glob("*/*.summaries")
    expected = str((("executorch", str(root / "src" / "executorch")),))
    assert _kept_run(str(root), store) == [expected, "False\n"]

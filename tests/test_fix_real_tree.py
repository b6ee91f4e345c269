"""`qlint fix` on a copy of real code (torchao's and ExecuTorch's PT2E passes): idempotent,
and every file it writes still parses."""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def package_dir(name: str, *sub: str) -> Path:
    spec = importlib.util.find_spec(name)  # locates without importing
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{name} is not installed")
    return Path(next(iter(spec.submodule_search_locations)), *sub)


def qlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "qlint", *args, "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=600
    )


@pytest.mark.parametrize(
    ("package", "sub"), [("torchao", ("quantization", "pt2e")), ("executorch", ("backends", "arm", "operator_support"))]
)
def test_fix_is_idempotent_on_a_real_tree(tmp_path, package, sub):
    tree = tmp_path / "tree"
    shutil.copytree(package_dir(package, *sub), tree, ignore=shutil.ignore_patterns("__pycache__"))
    before = {p: p.read_bytes() for p in tree.rglob("*.py")}
    first = qlint("fix", "--unsafe-fixes", ".", cwd=tree)
    assert first.returncode in (0, 1), first.stderr
    changed = [p for p, data in before.items() if p.read_bytes() != data]
    assert changed, "expected the known packet findings to be fixed"
    for path in changed:
        ast.parse(path.read_bytes(), filename=str(path))
    snapshot = {p: p.read_bytes() for p in tree.rglob("*.py")}
    second = qlint("fix", "--unsafe-fixes", ".", cwd=tree)
    assert second.returncode in (0, 1), second.stderr
    assert {p: p.read_bytes() for p in tree.rglob("*.py")} == snapshot
    assert "QL001" not in qlint("check", ".", cwd=tree).stdout

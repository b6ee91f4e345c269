"""benchmarks/bench_trees.py compiles the bytecode of the qlint each variant imports before
measuring, so that no side's first run pays for compiling qlint's sources."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


def _bench():
    sys.path.insert(0, str(_ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("bench_trees", _ROOT / "benchmarks" / "bench_trees.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(_ROOT / "benchmarks"))
    return module


def test_the_package_the_variant_imports_is_compiled(tmp_path):
    package = tmp_path / "qlint"
    (package / "rules").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "rules" / "ql999.py").write_text("X = 1\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path), PYTHONDONTWRITEBYTECODE="1")
    assert Path(_bench().byte_compile(env)) == package
    compiled = {p.relative_to(package).parts[0] for p in package.rglob("*.pyc")}
    assert compiled == {"__pycache__", "rules"}

"""benchmarks/peak_memory.py says which processes make a run's peak and which checks raised them."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import write_package
from tests.snippets import PACKET_MATCHER as _MATCHER

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _bench():
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "peak_memory.py"
    spec = importlib.util.spec_from_file_location("peak_memory", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))


def test_every_check_is_measured_once_in_the_process_that_made_it(tmp_path, capsys):
    # Enough files for a pool (`runner.MIN_PARALLEL_FILES`) and `-j2` (too few bytes for a pool
    # otherwise, `run_size`): the wrapped engine is inherited.
    pkg = write_package(tmp_path, "pkg", **{f"m{i}": _MATCHER for i in range(30)})
    _bench().per_file(str(pkg), sys.executable, _env(), top=3, jobs=2)
    out = capsys.readouterr().out
    counts = [int(line.split(":")[1].split()[0]) for line in out.splitlines() if line.startswith("   process ")]
    assert sum(counts) == 31  # m0..m29 and __init__.py, each once whichever worker took it
    assert len(counts) == 2  # the parent and its worker
    assert "largest rises, retained" in out
    assert any(f"  m{i}.py  [" in out for i in range(30))


def test_the_peak_names_the_parent(tmp_path, capsys, monkeypatch):
    pkg = write_package(tmp_path, "pkg", m=_MATCHER)
    bench = _bench()
    monkeypatch.setattr(bench.shutil, "which", lambda name: None)  # no ruff needed here
    qlint = [sys.executable, "-P", "-m", "qlint", "check", "--exit-zero", "--quiet"]
    bench.report("pkg", str(pkg), 1, qlint, _env())
    out = capsys.readouterr().out
    assert "qlint cold peak" in out and "MiB  parent" in out
    assert "ruff ALL" not in out

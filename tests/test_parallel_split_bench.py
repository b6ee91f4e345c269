"""benchmarks/parallel_split.py accounts for every file of a parallel run, per process."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

from qlint import discovery, file_checks, runner, worker_pool


def _split():
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "parallel_split.py"
    spec = importlib.util.spec_from_file_location("parallel_split", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_file_is_charged_to_the_process_that_checked_it(tmp_path, capsys):
    for i in range(runner.MIN_PARALLEL_FILES + 6):  # enough files for a pool
        (tmp_path / f"m{i}.py").write_text(f"def f{i}(n):\n    return n.target\n")
    real = (discovery.discover, runner._wrapper_index, worker_pool._pool, file_checks.check_one_uncached, runner._map)
    cwd = os.getcwd()
    try:
        assert _split().main([str(tmp_path), "-j", "2"]) == 0
    finally:
        os.chdir(cwd)
    assert (
        discovery.discover,
        runner._wrapper_index,
        worker_pool._pool,
        file_checks.check_one_uncached,
        runner._map,
    ) == real
    out = capsys.readouterr().out
    assert f"files checked: {runner.MIN_PARALLEL_FILES + 6}" in out
    counts = [int(n) for n in re.findall(r"^(?:parent|worker) \d+: (\d+) files", out, re.M)]
    assert len(counts) == 2 and sum(counts) == runner.MIN_PARALLEL_FILES + 6, out
    assert "serial CPU of the parent" in out and "pool" in out

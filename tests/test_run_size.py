"""qlint.run_size: a run without `-j` forks workers only when its files are enough bytes to pay for them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qlint import run_size, runner, worker_pool
from qlint.runner import run_check
from qlint.settings import Settings
from tests.snippets import PACKET_MATCHER as _MATCHER


def _tree(tmp_path: Path, n: int) -> list[str]:
    src = tmp_path / "src"
    src.mkdir()
    for i in range(n):
        (src / f"m{i:03}.py").write_text(_MATCHER)
    return sorted(str(p) for p in src.iterdir())


def test_enough_bytes_is_decided_by_the_sizes_added_up(tmp_path):
    paths = _tree(tmp_path, 10)
    size = os.stat(paths[0]).st_size
    assert run_size.enough_for_workers(paths, 10 * size)
    assert not run_size.enough_for_workers(paths, 10 * size + 1)
    assert not run_size.enough_for_workers([*paths, str(tmp_path / "gone.py")], 10 * size + 1)  # unreadable: 0


def test_the_sizes_are_read_only_until_there_are_enough(tmp_path, monkeypatch):
    paths = _tree(tmp_path, 10)
    size = os.stat(paths[0]).st_size
    seen = []
    real_stat = os.stat
    monkeypatch.setattr(run_size.os, "stat", lambda p: seen.append(p) or real_stat(p))
    assert run_size.enough_for_workers(paths, 3 * size)
    assert seen == paths[:3]


@pytest.mark.parametrize(
    ("jobs", "min_bytes", "cores", "expected"),
    [
        (None, None, 2, 1),  # a few KB: one process
        (None, 1, 2, 2),  # enough bytes: every core
        (None, 1, 1, 1),  # one core: nothing to fork for
        (2, None, 2, 2),  # `-j 2` is obeyed however small the run
        (3, None, 2, 3),
    ],
)
def test_without_jobs_the_count_follows_the_bytes_to_check(tmp_path, monkeypatch, jobs, min_bytes, cores, expected):
    paths = _tree(tmp_path, runner.MIN_PARALLEL_FILES)
    monkeypatch.setattr(runner.os, "cpu_count", lambda: cores)
    if min_bytes is not None:
        monkeypatch.setattr(run_size, "MIN_PARALLEL_BYTES", min_bytes)
    assert runner._workers(paths, jobs) == expected


def test_too_few_files_stay_in_process_whatever_their_size(tmp_path, monkeypatch):
    monkeypatch.setattr(run_size, "MIN_PARALLEL_BYTES", 1)
    assert runner._workers(_tree(tmp_path, runner.MIN_PARALLEL_FILES - 1), None) == 1


def _run(tmp_path: Path, monkeypatch, jobs: int | None) -> tuple[list[str], bool]:
    """The run's findings, and whether it made a pool."""
    pooled = []
    real_pool = worker_pool._pool
    monkeypatch.setattr(worker_pool, "_pool", lambda *a: pooled.append(1) or real_pool(*a))
    src = tmp_path / "src"
    s = Settings(root=tmp_path, cache_dir=tmp_path / ".cache", select=("QL101",))
    run = run_check([str(src)], s, use_cache=False, jobs=jobs)
    return [f"{Path(r.path).name}:{d.code}" for r in run.results for d in r.diagnostics], bool(pooled)


def test_a_small_tree_is_checked_in_process_with_the_findings_of_a_pool(tmp_path, monkeypatch):
    _tree(tmp_path, runner.MIN_PARALLEL_FILES + 6)
    monkeypatch.setattr(runner.os, "cpu_count", lambda: 2)
    alone, pooled = _run(tmp_path, monkeypatch, None)
    assert not pooled
    with_pool, pooled = _run(tmp_path, monkeypatch, 2)
    assert pooled
    assert alone == with_pool and len(alone) == runner.MIN_PARALLEL_FILES + 6
    monkeypatch.setattr(run_size, "MIN_PARALLEL_BYTES", 1)
    again, pooled = _run(tmp_path, monkeypatch, None)
    assert pooled and again == alone

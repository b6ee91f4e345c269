"""A parallel run without a cache shares its workers' module summaries through a store of the
run's own (`summary_cache.RunSummaries`): a module one worker summarised, another reads instead
of parsing it, an edited module is summarised again, and nothing is left once the run ends."""

from __future__ import annotations

import ast
import os
import tempfile

from qlint import runner
from qlint.analysis import scan_memo
from qlint.analysis.names.project import ProjectIndex
from qlint.settings import Settings
from qlint.summary_cache import RunSummaries, summary_store


def _pkg(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").touch()
    (pkg / "ops.py").write_text("DQ = 1\n\ndef helper(x):\n    return x\n")
    (pkg / "a.py").write_text("from pkg.ops import DQ\n")
    (pkg / "b.py").write_text("from pkg.ops import helper\n")
    return pkg


def _parses(monkeypatch) -> list[str]:
    parsed: list[str] = []
    real = ast.parse
    monkeypatch.setattr(
        ast, "parse", lambda src, filename="<unknown>", *a, **k: parsed.append(filename) or real(src, filename, *a, **k)
    )
    return parsed


def test_a_module_one_worker_summarised_is_read_by_the_other(tmp_path, monkeypatch):
    pkg = _pkg(tmp_path)
    ops = str(pkg / "ops.py")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with summary_store(Settings(root=tmp_path), False, shared=True):
        store = ProjectIndex.store
        assert isinstance(store, RunSummaries) and store.directory.parent == tmp_path
        parsed = _parses(monkeypatch)
        first, second = ProjectIndex(), ProjectIndex()  # as two workers' indexes
        first.begin_check(str(pkg / "a.py"))
        assert first.module_scope("pkg.ops", str(pkg / "a.py")) is not None
        assert parsed.count(ops) == 1
        second.begin_check(str(pkg / "b.py"))
        assert "helper" in second.module_scope("pkg.ops", str(pkg / "b.py")).functions
        assert parsed.count(ops) == 1  # read, not parsed again
        # Edited meanwhile: the summary kept is of other content, a miss.
        (pkg / "ops.py").write_text("DQ = 2\n\ndef helper2(x):\n    return x\n")
        os.utime(pkg / "ops.py", ns=(1, 1))
        third = ProjectIndex()
        third.begin_check(str(pkg / "b.py"))
        assert "helper2" in third.module_scope("pkg.ops", str(pkg / "b.py")).functions
        assert parsed.count(ops) == 2
        # Nothing a later run could use: project scans keep no memo in it.
        assert scan_memo.use_root(str(tmp_path), store, dict) is None and not scan_memo.keeps(str(tmp_path))
    assert ProjectIndex.store is None
    assert not store.directory.exists()


def test_without_workers_or_with_a_cache_there_is_no_run_store(tmp_path):
    with summary_store(Settings(root=tmp_path), False):
        assert ProjectIndex.store is None
    with summary_store(Settings(root=tmp_path, cache_dir=tmp_path / ".cache"), True, shared=True):
        assert type(ProjectIndex.store).__name__ == "SummaryStore"


def test_a_parallel_run_without_cache_shares_summaries_and_leaves_nothing(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "ops.py").write_text("import torch\nDQ = torch.ops.quantized_decomposed.dequantize_per_tensor\n")
    for i in range(runner.MIN_PARALLEL_FILES + 6):
        (src / f"m{i:03}.py").write_text("from ops import DQ\n\ndef f(n):\n    return n.target == DQ\n")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    s = Settings(root=tmp_path, cache_dir=tmp_path / ".cache")
    stores = []
    real = summary_store

    def spy(settings, enabled, shared=False, answers=False):
        stores.append((enabled, shared, answers))
        return real(settings, enabled, shared, answers)

    monkeypatch.setattr("qlint.summary_cache.summary_store", spy)
    serial = runner.run_check([str(src)], s, use_cache=False, jobs=1)
    parallel = runner.run_check([str(src)], s, use_cache=False, jobs=2)
    assert stores == [(False, False, False), (False, True, False)]  # no answers kept without a cache

    def flat(run):
        return [(r.path, [(d.code, d.range) for d in r.diagnostics]) for r in run.results]

    assert flat(parallel) == flat(serial) and any(r.diagnostics for r in serial.results)
    assert os.listdir(tmp_path / "tmp") == []  # the run's store went with it

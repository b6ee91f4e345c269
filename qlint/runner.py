"""Discovery + cache + checking over all cores: what `qlint check` and `qlint fix` run.

Workers are forked once per run (on Linux) with the settings handed over in the pool
initializer, so nothing is imported or unpickled per file; files travel in chunks built
largest-first so two cores finish together instead of one waiting on a big file at the
end. Small runs (the usual pre-commit call) stay in-process: a pool costs more than it
saves there. A worker that dies (a C stack overflow on a pathological file) costs only
that file: unfinished files are retried one per process and the culprit is reported.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from typing import Any

from qlint.cache import Cache
from qlint.cross_file_fixes import apply_cross_file_fixes
from qlint.discovery import discover
from qlint.engine import FileResult, check_source, content_hash, display_path
from qlint.settings import Settings

# Below this many files to check, a process pool costs more than it saves.
MIN_PARALLEL_FILES = 24
_CHUNKS_PER_JOB = 12


@dataclass
class RunResult:
    results: list[FileResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # discovery problems (files not checked)
    cached: int = 0  # how many results came from the cache

    @property
    def all_errors(self) -> list[str]:
        return self.errors + [e for r in self.results for e in r.errors]


@dataclass
class FixReport:
    """What `qlint fix` did to one file; texts are dropped, only the diff is kept."""

    path: str
    applied: int
    changed: bool
    remaining: FileResult
    diff: str | None = None
    error: str | None = None
    # (original, fixed) of a changed file, kept only when asked (per-repository patches).
    texts: tuple[str, str] | None = None


@dataclass
class FixRunResult:
    reports: list[FixReport] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def all_errors(self) -> list[str]:
        out = list(self.errors)
        for rep in self.reports:
            out.extend(rep.remaining.errors)
            if rep.error:
                out.append(f"{display_path(rep.path)}: {rep.error}")
        return out


def run_check(
    paths: Sequence[str], settings: Settings, use_cache: bool = True, jobs: int | None = None, progress=None
) -> RunResult:
    """Check every discovered file; cached results are reused, fresh ones stored.

    `progress` (optional): an object with `start(total)` and `advance(n)` (qlint.progress)."""
    found = discover(paths, settings)
    if progress is not None:
        progress.start(len(found.files))
    cache = Cache.for_settings(settings) if use_cache else None
    results: dict[str, FileResult] = {}
    todo: list[str] = []
    for path in found.files:
        hit = cache.lookup(path) if cache is not None else None
        if hit is None:
            todo.append(path)
        else:
            results[path] = hit
    run = RunResult(errors=found.errors, cached=len(results))
    if progress is not None:
        progress.advance(len(results))
    for path, (result, size, mtime_ns, digest) in _map(_check_one, todo, settings, jobs):
        results[path] = result
        if progress is not None:
            progress.advance(1)
        if cache is not None and digest:
            cache.store(result, size, mtime_ns, digest)
    if cache is not None:
        cache.forget_missing([os.path.abspath(p) for p in paths or (".",)], set(found.files))
        cache.save()
    run.results = [results[p] for p in found.files]
    return run


def run_fix(
    paths: Sequence[str],
    settings: Settings,
    unsafe: bool,
    diff_only: bool,
    jobs: int | None = None,
    use_cache: bool = True,
    keep_texts: bool = False,
    progress=None,
) -> FixRunResult:
    """Fix (or with `diff_only`, preview) every file; a cached clean file is not re-read."""
    found = discover(paths, settings)
    if progress is not None:
        progress.start(len(found.files))
    cache = Cache.for_settings(settings) if use_cache else None
    reports: dict[str, FixReport] = {}
    todo: list[str] = []
    for path in found.files:
        hit = cache.lookup(path) if cache is not None else None
        if hit is not None and not any(d.fix and d.fix.applies(unsafe) for d in hit.diagnostics):
            reports[path] = FixReport(path, 0, False, hit)
        else:
            todo.append(path)
    if progress is not None:
        progress.advance(len(reports))
    task = _FixTask(unsafe, diff_only, keep_texts)
    for path, report in _map(task, todo, settings, jobs):
        reports[path] = report
        if progress is not None:
            progress.advance(1)
    apply_cross_file_fixes(reports, settings, unsafe, diff_only, keep_texts)
    return FixRunResult([reports[p] for p in found.files], found.errors)


# ----------------------------------------------------------------- per-file work


def _check_one(path: str, settings: Settings) -> tuple[FileResult, int, int, str]:
    """Stat before reading, so a file edited meanwhile is seen as changed next run."""
    try:
        st = os.stat(path)
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        result = FileResult(path=path)
        result.errors.append(f"{display_path(path)}: cannot read: {exc.strerror or exc}")
        return result, 0, 0, ""
    try:
        result = check_source(data, path, settings)
    except (Exception, RecursionError):  # the engine's own safety net failed: keep going
        result = FileResult(path=path)
        result.errors.append(f"{display_path(path)}: internal error:\n{traceback.format_exc(limit=-3)}")
        return result, 0, 0, ""
    result.text = None  # not needed by reporters; would cost a pickle of every file
    return result, st.st_size, st.st_mtime_ns, content_hash(data)


@dataclass(frozen=True)
class _FixTask:
    unsafe: bool
    diff_only: bool
    keep_texts: bool = False

    def __call__(self, path: str, settings: Settings) -> FixReport:
        from qlint.fixes import fix_file, unified_diff

        try:
            outcome = fix_file(path, settings, unsafe=self.unsafe, write=not self.diff_only)
        except (Exception, RecursionError):
            error = f"internal error while fixing:\n{traceback.format_exc(limit=-3)}"
            return FixReport(path, 0, False, FileResult(path=path), None, error)
        # A fix that would not re-parse is reported, never written: count nothing as applied.
        changed = outcome.fixed != outcome.original and outcome.error is None
        diff = None
        if self.diff_only and changed:
            diff = unified_diff(replace(outcome, path=display_path(path)))
        outcome.remaining.text = None
        applied = outcome.applied if changed else 0
        texts = (outcome.original, outcome.fixed) if self.keep_texts and changed else None
        return FixReport(path, applied, changed, outcome.remaining, diff, outcome.error, texts)


# ----------------------------------------------------------------- parallel map

_worker_settings: Settings | None = None


def _init_worker(settings: Settings) -> None:
    global _worker_settings
    _worker_settings = settings
    # Ctrl-C is the parent's to handle (exit 130, quietly); workers are stopped by it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _tune_gc()


# Checking allocates millions of short-lived AST nodes: with the default thresholds the
# cyclic GC runs constantly and rescans the imported modules. Freezing what is loaded and
# collecting less often saves ~20% CPU for a bounded amount of extra garbage.
_GC_THRESHOLDS = (50_000, 20, 100)


def _tune_gc() -> tuple[int, int, int]:
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*_GC_THRESHOLDS)
    return old


@contextlib.contextmanager
def _gc_tuned() -> Iterator[None]:
    old = _tune_gc()
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


def _run_chunk(func: Callable[[str, Settings], Any], paths: list[str]) -> list[tuple[str, Any]]:
    assert _worker_settings is not None
    return [(p, func(p, _worker_settings)) for p in paths]


def _map(
    func: Callable[[str, Settings], Any], paths: list[str], settings: Settings, jobs: int | None
) -> Iterator[tuple[str, Any]]:
    """`(path, func(path, settings))` for every path, in no particular order."""
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(paths) < MIN_PARALLEL_FILES:
        with _gc_tuned():
            for path in paths:
                yield path, func(path, settings)
        return
    done: set[str] = set()
    try:
        with _pool(min(jobs, len(paths)), settings) as pool:
            try:
                futures = [pool.submit(_run_chunk, func, chunk) for chunk in _chunks(paths, jobs)]
                for future in futures:
                    for path, value in future.result():
                        done.add(path)
                        yield path, value
            except (KeyboardInterrupt, GeneratorExit):
                _stop(pool)  # do not wait for the chunks in flight
                raise
    except BrokenProcessPool:
        yield from _isolate(func, [p for p in paths if p not in done], settings)


def _stop(pool: ProcessPoolExecutor) -> None:
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()


def _isolate(func, paths: list[str], settings: Settings) -> Iterator[tuple[str, Any]]:
    """After a worker died: one process per remaining file, so only the culprit is lost."""
    for path in paths:
        try:
            with _pool(1, settings) as pool:
                yield from pool.submit(_run_chunk, func, [path]).result()
        except BrokenProcessPool:
            result = FileResult(path=path)
            result.errors.append(f"{display_path(path)}: the checker crashed on this file (worker process died)")
            yield path, _crashed(func, path, result)


def _crashed(func, path: str, result: FileResult) -> Any:
    if func is _check_one:
        return result, 0, 0, ""
    return FixReport(path, 0, False, result)


def _pool(workers: int, settings: Settings) -> ProcessPoolExecutor:
    # fork: workers inherit the imported modules and the loaded op table for free.
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if sys.platform == "linux" and "fork" in methods else None)
    return ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker, initargs=(settings,))


def _chunks(paths: list[str], jobs: int) -> list[list[str]]:
    """Largest files first, grouped to roughly equal byte budgets (longest-processing-time)."""
    sized = []
    for path in paths:
        try:
            sized.append((os.stat(path).st_size, path))
        except OSError:
            sized.append((0, path))
    sized.sort(reverse=True)
    total = sum(s for s, _ in sized)
    budget = max(total // (jobs * _CHUNKS_PER_JOB), 1)
    chunks: list[list[str]] = []
    current: list[str] = []
    weight = 0
    for size, path in sized:
        current.append(path)
        weight += size
        if weight >= budget:
            chunks.append(current)
            current, weight = [], 0
    if current:
        chunks.append(current)
    return chunks

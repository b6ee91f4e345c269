"""Discovery + cache + checking over all cores: what `qlint check` and `qlint fix` run.

A run the record of the last one answers walks nothing (`run_record`); otherwise the files
discovery finds are looked up in the results cache, and the others checked, with what the
checks share set up once around them (the summary store, the project's fixed contents and
indexes). Small runs (the usual pre-commit call) stay in-process: a pool costs more than it
saves there; without `-j`, so do runs whose files are too few bytes for a worker to pay for
its memory (`run_size`). Larger ones fork workers (`worker_pool`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from qlint import file_checks, lost_interrupts, run_record
from qlint.cache import Cache
from qlint.file_checks import FixReport, FixTask, check_order, gc_tuned
from qlint.process_exit import collector_back
from qlint.results import FileResult, display_path
from qlint.settings import Settings
from qlint.value_classes import field, replace, value_class

if TYPE_CHECKING:
    from qlint.fix_session import FixSession

# Below this many files to check, a process pool costs more than it saves.
MIN_PARALLEL_FILES = 24


@value_class
class RunResult:
    results: list[FileResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # discovery problems (files not checked)
    cached: int = 0  # how many results came from the cache

    @property
    def all_errors(self) -> list[str]:
        return self.errors + [e for r in self.results for e in r.errors]


@value_class
class FixRunResult:
    reports: list[FixReport] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    session: FixSession | None = None

    @property
    def all_errors(self) -> list[str]:
        out = list(self.errors)
        for rep in self.reports:
            out.extend(rep.remaining.errors)
            if rep.error:
                out.append(f"{display_path(rep.path)}: {rep.error}")
        return out

    @property
    def notices(self) -> list[str]:
        return [f"{display_path(r.path)}: {r.notice}" for r in self.reports if r.notice]


def run_check(
    paths: Sequence[str], settings: Settings, use_cache: bool = True, jobs: int | None = None, progress=None
) -> RunResult:
    """Check every discovered file; cached results are reused, fresh ones stored."""
    _take_run_roots(paths)
    cache = Cache.for_settings(settings) if use_cache else None
    recorded = _recorded(cache, paths, settings) if cache is not None else None
    if recorded is not None:  # nothing changed since a run the cache answered entirely
        files, answered = recorded
        if progress is not None:
            progress.start(len(files))
            progress.advance(len(files))
        return RunResult(results=answered, cached=len(answered))
    from qlint.discovery import discover  # not for a run the record answers: it walks nothing

    found = discover(paths, settings)
    if progress is not None:  # an object with start(total) and advance(n) (qlint.progress)
        progress.start(len(found.files))
    if cache is not None:
        cache.stats.walked, cache.stats.walked_names = found.listings, found.names
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
    if todo:
        collector_back()  # files to check: their garbage is the collector's again (`process_exit`)
    jobs = _workers(todo, jobs)  # decided once: `_map` is given the count
    parallel = jobs > 1
    with (
        _summaries(settings, use_cache, bool(todo), parallel, answers=len(todo) == 1),
        _contents_fixed(bool(todo)),
        _dependencies_unwanted(cache is None and bool(todo)),
        _warned_once(paths, todo),
        _wrapper_index(cache, todo, settings, found.listings, parallel),
    ):
        check = file_checks.check_one if cache is not None else file_checks.check_one_uncached
        for path, (result, size, mtime_ns, digest) in _map(check, todo, settings, jobs):
            results[path] = result
            if progress is not None:
                progress.advance(1)
            if cache is not None and digest:
                cache.store(result, size, mtime_ns, digest)
            # What a result depends on is the cache's (which keeps its own copy, interned):
            # kept with every result until the report, the parent held them all (~15 MiB,
            # 127,000 objects at the end of a run over ExecuTorch).
            result.dependencies = {}
    run.results = [results[p] for p in found.files]
    if cache is not None:
        cache.forget_missing([os.path.abspath(p) for p in paths or (".",)], set(found.files))
        # Once the cache answers every file, one record can answer the next run (`run_record`):
        # the files checked now are looked up as the next run would, against this run's view.
        again = None if found.errors else {p: cache.lookup(p) for p in todo}
        cache.save()
        if again is not None and all(hit is not None for hit in again.values()):
            run_record.write(cache, paths, settings, found, [again.get(p) or results[p] for p in found.files])
    return run


def _recorded(cache: Cache, paths: Sequence[str], settings: Settings) -> tuple[list[str], list[FileResult]] | None:
    """`run_record.answer`, the cyclic collector off meanwhile: the record's decoding and the
    stats compared with it make some 20,000 tuples and lists, none in a cycle, over which (and
    over every module loaded) the collector ran at its usual thresholds: 317M -> 309M
    instructions for a warm run over ExecuTorch the record answers."""
    with gc_tuned(collect=False):
        return run_record.answer(cache, paths, settings)


def run_fix(
    paths: Sequence[str],
    settings: Settings,
    unsafe: bool,
    diff_only: bool,
    jobs: int | None = None,
    use_cache: bool = True,
    progress=None,
) -> FixRunResult:
    """Fix (or with `diff_only`, preview) every file; a cached clean file is not re-read."""
    from qlint.discovery import discover

    _take_run_roots(paths)
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
    from qlint.cross_file_fixes import apply_cross_file_fixes
    from qlint.fix_session import FixSession

    if todo:
        collector_back()
    session = FixSession(settings, unsafe)
    if progress is not None:
        progress.advance(len(reports))
    with _summaries(settings, use_cache, bool(todo)), _warned_once(paths, todo):
        for path, (report, fixed) in _map(FixTask(unsafe), todo, settings, jobs):
            reports[path] = report
            if progress is not None:
                progress.advance(1)
            if fixed is not None:
                session.add(fixed)
    per_file = dict(reports)
    apply_cross_file_fixes(reports, session, settings, unsafe)
    for path, report in reports.items():
        if report.changed:
            reports[path] = _finish(report, session, diff_only)
    for target, sites in session.cross_sources.items():
        if reports[target].error or reports[target].notice:  # not written: those findings stay
            for site in sites - {target}:
                if not (reports[site].error or reports[site].notice):
                    before = per_file[site]
                    reports[site] = replace(reports[site], applied=before.applied, remaining=before.remaining)
    return FixRunResult([reports[p] for p in found.files], found.errors, session)


def _take_run_roots(paths: Sequence[str]) -> None:
    """The directories this run was asked about stand in for the project root of files with
    none (`run_roots`); set before anything looks for a project, and before a run forks."""
    from qlint.analysis import run_roots

    run_roots.use(paths)


@contextlib.contextmanager
def _warned_once(paths: Sequence[str], todo: list[str]) -> Iterator[None]:
    """A run that forks (workers, the wrapper index's child) says what is wrong with the
    layout of the repositories it was given before it does, once, instead of once in each
    process (`package_map`). Entered once the summary store is in use: what the packaging
    files declare, read for it, is kept there (`package_map.use_store`); read before, it was
    remembered for the run only, and the first edited check after a whole-tree run imported
    the TOML parser to read ExecuTorch's `pyproject.toml` again."""
    if len(todo) >= MIN_PARALLEL_FILES:
        from qlint.analysis.names import package_map

        package_map.warn_missing(paths or (".",))
    yield


def _contents_fixed(needed: bool) -> contextlib.AbstractContextManager:
    """A check run changes no file: other modules' content keys are taken once (forked
    workers inherit the setting). Not for `qlint fix`, whose files change during the run."""
    if not needed:
        return contextlib.nullcontext()
    from qlint.analysis.names.project import ProjectIndex

    return ProjectIndex.contents_fixed()


def _dependencies_unwanted(unwanted: bool) -> contextlib.AbstractContextManager:
    """A run without a results cache drops what each check depended on (`file_checks.check_one_uncached`):
    the checks need not hash the project's modules to record it (forked workers inherit this)."""
    if not unwanted:
        return contextlib.nullcontext()
    from qlint.analysis.names.project import ProjectIndex

    return ProjectIndex.dependencies_unwanted()


def _summaries(
    settings: Settings, use_cache: bool, needed: bool, shared: bool = False, answers: bool = False
) -> contextlib.AbstractContextManager:
    """The module summary store, while files are checked; a run the results cache answers
    entirely imports none of the summary (and scope) machinery. `shared`: the check runs in
    workers, which share their summaries even without a cache (`summary_cache.RunSummaries`).
    `answers`: QL101/QL102's answers about other modules are kept too (`kept_answers`), as
    for a buffer: a run with one file to check (`qlint check FILE` after an edit, as
    pre-commit runs it, or a tree run where only that file changed) worked them out again,
    each time, from the other modules' texts and summaries."""
    if not needed:
        return contextlib.nullcontext()
    from qlint.summary_cache import summary_store

    return summary_store(settings, use_cache, shared, answers=answers and use_cache)


@contextlib.contextmanager
def _wrapper_index(
    cache: Cache | None, todo: list[str], settings: Settings, listed: dict, parallel: bool = False
) -> Iterator[None]:
    """The project's indexes a run over many files makes once (`run_indexes`); none for a few."""
    if len(todo) < MIN_PARALLEL_FILES:
        yield
        return
    from qlint.run_indexes import project_indexes as made

    with made(cache, todo, settings, listed, parallel):
        yield


def _finish(report: FixReport, session: FixSession, diff_only: bool) -> FixReport:
    """Diff or write one changed file. Not written: its findings as read stay reported."""
    from qlint.notebook import is_notebook

    if diff_only:
        return report if is_notebook(report.path) else replace(report, diff=session.diff(report.path))
    why = session.write(report.path)
    if why is None:
        return report
    fixed = session.get(report.path)
    initial = fixed.initial if fixed is not None and fixed.initial is not None else report.remaining
    if why.startswith("skipped"):
        return replace(report, applied=0, changed=False, remaining=initial, notice=why)
    return replace(report, applied=0, changed=False, remaining=initial, error=why)


def _map(
    func: Callable[[str, Settings], Any], paths: list[str], settings: Settings, jobs: int | None
) -> Iterator[tuple[str, Any]]:
    """`(path, func(path, settings))` for every path, in no particular order. With `jobs`
    processes, the parent is one of them: it checks chunks itself beside `jobs - 1` forked
    workers (`check_chunks.shared_chunks`)."""
    jobs = _workers(paths, jobs)
    if jobs <= 1:
        with gc_tuned(collect=len(paths) > 1):
            for path in check_order(func, paths):
                lost_interrupts.raise_if_lost()
                yield path, func(path, settings)
        return
    # Imported here: the usual pre-commit call checks a few files in-process and should not
    # pay for importing multiprocessing, nor the pool's modules.
    from qlint.worker_pool import pool_map

    yield from pool_map(func, paths, settings, jobs)


def _workers(paths: list[str], jobs: int | None) -> int:
    """How many processes check `paths`: 1 for a run too small for a pool; without `-j`, also
    for one whose files are too few bytes for a worker to pay for its memory (`run_size`)."""
    if len(paths) < MIN_PARALLEL_FILES:
        return 1
    if jobs:
        return jobs
    from qlint.run_size import enough_for_workers

    cores = os.cpu_count() or 1
    return cores if cores > 1 and enough_for_workers(paths) else 1

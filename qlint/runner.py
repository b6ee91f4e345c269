"""Discovery + cache + checking over all cores: what `qlint check` and `qlint fix` run.

Workers are forked once per run (on Linux) with the settings handed over in the pool
initializer, so nothing is imported or unpickled per file; with `-j N` the parent checks
too, beside N - 1 workers (a process that only waits still costs memory: the heap pages the
workers copy). Files travel in chunks built largest-first so two cores finish together
instead of one waiting on a big file at the end, and the chunks of a package go to the
process that checked one of them (`_Affinity`). Small runs (the usual pre-commit call)
stay in-process: a pool costs more than it saves there; without `-j`, so do runs whose files
are too few bytes for a worker to pay for its memory (`run_size`). A worker that dies (a C stack
overflow on a pathological file) costs only that file: the files it had not sent back are
retried one per process and the culprit is reported. A file that kills the parent, as in a
run of one process, ends the run.

Workers die with the parent: on Linux the kernel sends them SIGKILL when it exits
(`PR_SET_PDEATHSIG`, whatever killed it, `kill -9` included), and elsewhere each worker
checks between files that its parent is still there. They never write files anyway:
`qlint fix` workers return texts and the parent writes (see `qlint.fix_session`).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from qlint import lost_interrupts, run_record
from qlint.cache import Cache
from qlint.process_exit import collector_back
from qlint.results import FileResult, content_hash, display_path
from qlint.settings import Settings
from qlint.value_classes import field, replace, value_class

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from qlint.fix_session import FixedFile, FixSession

# Below this many files to check, a process pool costs more than it saves.
MIN_PARALLEL_FILES = 24
_CHUNKS_PER_JOB = 12
_FINE_TAIL, _FINE_CUTS = 3, 4  # the last 3 chunks per job, in quarters


@value_class
class RunResult:
    results: list[FileResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # discovery problems (files not checked)
    cached: int = 0  # how many results came from the cache

    @property
    def all_errors(self) -> list[str]:
        return self.errors + [e for r in self.results for e in r.errors]


@value_class
class FixReport:
    """What `qlint fix` did to one file; its texts are in the run's `FixSession`."""

    path: str
    applied: int
    changed: bool
    remaining: FileResult
    diff: str | None = None
    error: str | None = None  # the file could not be read, fixed or written: exit code 2
    notice: str | None = None  # left alone on purpose (edited meanwhile): not an error


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
        cache.walked, cache.walked_names = found.listings, found.names
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
        check = _check_one if cache is not None else _check_one_uncached
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
    with _gc_tuned(collect=False):
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
        for path, (report, fixed) in _map(_FixTask(unsafe), todo, settings, jobs):
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
    """A run without a results cache drops what each check depended on (`_check_one_uncached`):
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


# The import triggers whose searches the index answers: QL102's wrappers, QL101's sink helpers.
_INDEXED_TRIGGERS = ("qlint.analysis.graphs.wrapper_index:", "qlint.analysis.graphs.sinks:")


@contextlib.contextmanager
def _wrapper_index(
    cache: Cache | None, todo: list[str], settings: Settings, listed: dict, parallel: bool = False
) -> Iterator[None]:
    """A run over many files answers QL102's import trigger (and QL101's) from the project's
    index of wrapper (and sink helper) names (`wrapper_index`), made once here (workers forked meanwhile inherit it)
    instead of resolving every file's imports, over the directories discovery listed. The
    project's words are cut meanwhile by another child, for every process of the run (`shared_words`).

    A run of one process cuts them itself while it waits for the index child (not when the
    results cache holds the index: it would not wait), and imports what its checks will
    (`_import_for_checks`): it waited with a core idle, and then cut the words in its caller
    searches, after its project scans had read the modules for each name (ao: 6,700 reads of
    its modules before the first cut, ~16 scans). Not in a third process: the run's RSS,
    summed over its processes, would count the parent's pages once more while it lives (ao:
    62 MiB at the start, its end's peak being 65)."""
    if len(todo) < MIN_PARALLEL_FILES or not any(
        (r.import_trigger or "").startswith(_INDEXED_TRIGGERS) for r in settings.rules_for(todo[0])
    ):
        yield
        return
    from qlint.analysis.graphs import wrapper_index
    from qlint.analysis.names import project_words

    roots = wrapper_index.roots(todo)
    cutting: list = []  # the words' child (`_words_cut`), once forked

    def apart() -> None:  # one process: only beside the index child (`enable`)
        _import_for_checks()  # what its checks import as they go
        project_words.cut(_project_paths(roots, listed))

    def meanwhile() -> None:  # workers to come: while a child makes the index, else before
        # The index child is forked first: it sets the pace of the run's start (ExecuTorch:
        # 0.8 s of CPU before a worker can start, against 0.4 s for the words' child), and
        # listing and keying the 3,784 modules for the words' child (~0.015 s) came before it.
        # On a large project the child reading half its modules (`wrapper_reads.FirstPart`)
        # is forked next, before this.
        from qlint.analysis import held_interrupts  # `forked_call` has imported it

        held = held_interrupts.hold()  # a Ctrl-C waits until the words' child is where `stop` finds it
        try:
            cutting.append(_words_cut(roots, listed))
        finally:
            held_interrupts.release(held)
        _load_for_workers()  # what the workers inherit, loaded while the children work

    try:
        store = cache.wrappers if cache is not None else None
        wrapper_index.enable(store, todo, listed, meanwhile if parallel else None, None if parallel else apart)
        if parallel:
            wrapper_index.compile_gates()
        # Waited for in here: a Ctrl-C before `wait` is entered stops the child as well.
        words = cutting[0] if cutting else None
        shared = words.wait() if words is not None else None
    except BaseException:  # Ctrl-C, or a failure: the words are not waited for, nor kept mapped
        wrapper_index.disable()
        for words in cutting:
            if words is not None:
                words.stop()
        raise
    project_words.share(shared)
    try:
        yield
    finally:
        wrapper_index.disable()
        if shared is not None:
            project_words.share(None)
            shared.close()


def _words_cut(roots: set[str], listed: dict):
    """A child cutting the words of the modules under `roots` (`shared_words`), or None.

    The content keys taken for it are the run's (`ProjectIndex.run_keys`, a run whose files
    hold still): the workers forked next inherit them, where each process stat'ed every
    module again at its first project scan (ExecuTorch: 3,784 modules; 44,300 stats over a
    two-process run against 33,500 in one process)."""
    from qlint.analysis.names import project_words, shared_words
    from qlint.analysis.names.project import ProjectIndex

    paths = _project_paths(roots, listed)
    words = shared_words.start(paths, project_words.MAX_BYTES, project_words.words_of) if paths else None
    if words is not None and ProjectIndex.fixed_content:
        keys = ProjectIndex.run_keys
        for path, key in zip(words.paths, words.keys, strict=True):
            keys.setdefault(path, key)  # one taken before stays: the run's keys are taken once
    return words


def _project_paths(roots: set[str], listed: dict) -> list[str]:
    """The modules under `roots`, over the directories discovery listed."""
    from qlint.analysis.project_files import disk_files

    return sorted({p for root in roots for p in disk_files(root, True, listed)})


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


# ----------------------------------------------------------------- per-file work


def _traceback() -> str:
    """The current exception's last frames (imported on a crash only, not at every start)."""
    import traceback

    return traceback.format_exc(limit=-3)


def _check_one(path: str, settings: Settings) -> tuple[FileResult, int, int, str]:
    """Stat before reading, so a file edited meanwhile is seen as changed next run."""
    return _checked_file(path, settings, for_cache=True)


def _checked_file(path: str, settings: Settings, for_cache: bool) -> tuple[FileResult, int, int, str]:
    """(result, size, mtime, digest) of `path`; without `for_cache` (a run without a results
    cache), neither stat'ed nor hashed: (result, 0, 0, "")."""
    try:
        st = os.stat(path) if for_cache else None
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        result = FileResult(path=path)
        result.errors.append(f"{display_path(path)}: cannot read: {exc.strerror or exc}")
        return result, 0, 0, ""
    # Imported on the first file to check: a run served from the cache needs no engine.
    from qlint.engine import check_source, checked_once
    from qlint.notebook import check_notebook, is_notebook

    try:
        result = check_notebook(data, path, settings) if is_notebook(path) else check_source(data, path, settings)
    except (Exception, RecursionError):  # the engine's own safety net failed: keep going
        result = FileResult(path=path)
        result.errors.append(f"{display_path(path)}: internal error:\n{_traceback()}")
        return result, 0, 0, ""
    finally:
        checked_once(path)
    if st is None:
        return result, 0, 0, ""
    return result, st.st_size, st.st_mtime_ns, content_hash(data)


def _check_one_uncached(path: str, settings: Settings) -> tuple[FileResult, int, int, str]:
    """`_check_one` for a run without a cache: the result's dependencies, read by the cache
    only, are not sent to the parent (thousands of paths and digests per result of a scan of
    the project); nor is the file stat'ed or hashed for a cache entry (ExecuTorch: 3,841 files,
    most of which no rule reads)."""
    result, size, mtime_ns, digest = _checked_file(path, settings, for_cache=False)
    result.dependencies = {}
    return result, size, mtime_ns, digest


@value_class(frozen=True)
class _FixTask:
    """Fix one file in memory; the parent decides about writing (see `qlint.fix_session`)."""

    unsafe: bool

    def __call__(self, path: str, settings: Settings) -> tuple[FixReport, FixedFile | None]:
        from qlint.fix_session import FixedFile
        from qlint.fixes import fix_file
        from qlint.notebook import is_notebook

        if is_notebook(path):
            return self._notebook(path, settings)
        try:
            outcome = fix_file(path, settings, unsafe=self.unsafe, write=False)
        except (Exception, RecursionError):
            error = f"internal error while fixing:\n{_traceback()}"
            return FixReport(path, 0, False, FileResult(path=path), None, error), None
        # A fix that would not re-parse is reported, never written: count nothing as applied.
        changed = outcome.changed and outcome.error is None
        applied = outcome.applied if changed else 0
        report = FixReport(path, applied, changed, outcome.remaining, None, outcome.error)
        if not changed or outcome.data is None:
            return report, None
        return report, FixedFile(path, outcome.data, outcome.original, outcome.fixed, outcome.initial)

    def _notebook(self, path: str, settings: Settings) -> tuple[FixReport, FixedFile | None]:
        from qlint.fix_session import FixedFile
        from qlint.notebook import fix_notebook

        try:
            with open(path, "rb") as fh:
                raw = fh.read()
            nb = fix_notebook(raw, path, settings, self.unsafe)
        except (Exception, RecursionError):
            error = f"internal error while fixing:\n{_traceback()}"
            return FixReport(path, 0, False, FileResult(path=path), None, error), None
        changed = nb.changed and nb.error is None
        # Cell-by-cell diff (as ruff shows notebooks); the parent writes the JSON as any other file.
        diff = nb.diff(display_path(path)) if changed else None
        report = FixReport(path, nb.applied if changed else 0, changed, nb.remaining, diff, nb.error)
        return report, (FixedFile(path, raw, nb.original, nb.fixed) if changed else None)


# ----------------------------------------------------------------- parallel map

_worker_settings: Settings | None = None
_parent_pid: int | None = None
_PR_SET_PDEATHSIG = 1


def _init_worker(settings: Settings, parent_pid: int) -> None:
    global _worker_settings, _parent_pid
    _worker_settings = settings
    _parent_pid = parent_pid
    _die_with_parent()
    from qlint.analysis import held_interrupts  # with `signal`: only where a run forks

    # Ctrl-C is the parent's to handle (exit 130, quietly); workers are stopped by it. One that
    # came while the worker was forked was held (`_submitted`): it is dropped now.
    held_interrupts.ignore_in_worker()
    _tune_gc()
    _find_malloc_trim()
    # The small tables of answers about other modules this worker works out (`kept_answers`),
    # written down as it exits: the first edited check after the run reads them.
    from qlint.analysis.graphs import kept_answers

    kept_answers.flush_at_worker_exit()


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this worker when the process that forked it exits."""
    if sys.platform != "linux":
        return
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _exit_if_orphaned()  # the parent may have died before the prctl took effect


def _exit_if_orphaned() -> None:
    if _parent_pid is not None and os.getppid() != _parent_pid:
        os._exit(1)


# Checking allocates millions of short-lived AST nodes: with the default thresholds the
# cyclic GC runs constantly and rescans the imported modules. Freezing what is loaded and
# collecting less often saves ~20% CPU for a bounded amount of extra garbage. The engine
# pauses the collector during each check, so a young collection runs between files, when
# the reference cycles a check left behind are unreachable: it frees them. A check leaves
# none (`tests/test_flow_teardown.py`, `ModuleScope.let_go`): what a young collection finds
# is what the run keeps on purpose (other modules' scopes and flows, the trees kept for the
# next checks), each object traversed once, at ~45% of its parse for a tree (ExecuTorch at
# 50,000: 12 collections, 1.2 million objects, 0.4 s of CPU, 2,900 objects freed). Rarely
# then: a run over ExecuTorch or the installed torch makes none. The older generations would
# only rescan (2 s of a 14 s run over ExecuTorch at (50_000, 20, 100)): at most every thousand
# young collections.
_GC_THRESHOLDS = (500_000, 1_000, 1_000)


def _tune_gc() -> tuple[int, int, int]:
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*_GC_THRESHOLDS)
    return old


@contextlib.contextmanager
def _gc_tuned(collect: bool = True) -> Iterator[None]:
    """`collect=False` (one file to check): no collection at all while inside. The collection
    a check's end triggers would only scan that file's garbage (5 ms after ExecuTorch's
    1,111-line vulkan/test/utils.py): what is left goes to the oldest generation with the
    rest, collected when a full collection runs, if ever in a command line's life."""
    old = _tune_gc()
    was_enabled = gc.isenabled()
    if not collect:
        gc.disable()
    try:
        yield
    finally:
        # Survivors go straight to the oldest generation (two list splices): with the default
        # thresholds back, the next young collection would otherwise rescan all of them.
        gc.freeze()
        gc.set_threshold(*old)
        gc.unfreeze()
        if was_enabled:
            gc.enable()


# A check that took this much CPU allocated a tree and its analyses (most files are turned away
# by the triggers in well under a millisecond): what it freed is handed back to the system after
# it. CPU, not wall time (`_check_cpu`): on a busy machine most checks outlast 20 ms of wall
# time while the process waits for a core, and ExecuTorch's run trimmed after 2,440 of its
# 3,841 files instead of ~120, each trim's freed pages faulted back in by the next check (at
# a load of ~25: 185,000 -> 146,000 minor faults over the run). A heavy check, the one whose
# freed memory would raise the run's peak, is still followed by a trim.
_RELEASE_AFTER_SECONDS = 0.02
_check_cpu = time.thread_time  # this thread's CPU: the parent's pool threads are not its checks
_malloc_trim: Callable[[int], int] | None = None  # glibc's, found by `_init_worker`


def _find_malloc_trim() -> None:
    global _malloc_trim
    if sys.platform != "linux":
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):  # musl has none
        _malloc_trim = ctypes.CDLL(None).malloc_trim


def _release_freed_memory() -> None:
    """Give the pages a finished check freed back to the system. A worker's memory is otherwise
    its highest point so far (freed blocks stay mapped, scattered among what the run keeps), and
    the run's peak is the sum over the workers: with each worker back down between its big files,
    the spikes of two workers, which seldom coincide, no longer add up (ao: 82 -> 74 MiB PSS)."""
    if _malloc_trim is not None:
        _malloc_trim(0)


def _run_chunk(func: Callable[[str, Settings], Any], paths: list[str]) -> list[tuple[str, Any]]:
    assert _worker_settings is not None
    out = []
    for path in _check_order(func, paths):
        _exit_if_orphaned()  # the watchdog where PR_SET_PDEATHSIG does not exist
        start = _check_cpu()
        out.append((path, func(path, _worker_settings)))
        if _check_cpu() - start >= _RELEASE_AFTER_SECONDS:
            _release_freed_memory()
    return out


def _map(
    func: Callable[[str, Settings], Any], paths: list[str], settings: Settings, jobs: int | None
) -> Iterator[tuple[str, Any]]:
    """`(path, func(path, settings))` for every path, in no particular order. With `jobs`
    processes, the parent is one of them: it checks chunks itself beside `jobs - 1` forked
    workers (`_shared_chunks`)."""
    jobs = _workers(paths, jobs)
    if jobs <= 1:
        with _gc_tuned(collect=len(paths) > 1):
            for path in _check_order(func, paths):
                lost_interrupts.raise_if_lost()
                yield path, func(path, settings)
        return
    # Imported here: the usual pre-commit call checks a few files in-process and should not
    # pay for importing multiprocessing.
    from concurrent.futures.process import BrokenProcessPool

    done: set[str] = set()
    handed: set[str] = set()  # the paths of the chunks given to workers
    workers = min(jobs, len(paths)) - 1
    with _gc_tuned():
        try:
            with _pool(workers, settings) as pool:
                try:
                    for path, value in _shared_chunks(pool, workers, func, _chunk_parts(paths, jobs), settings, handed):
                        lost_interrupts.raise_if_lost()
                        done.add(path)
                        yield path, value
                except (KeyboardInterrupt, GeneratorExit):
                    _stop(pool)  # do not wait for the chunks in flight
                    raise
        except BrokenProcessPool:
            # A worker died: what it was given and had not sent back is checked one file per
            # process, so only the culprit is lost; what no worker had, the parent checks.
            yield from _isolate(func, [p for p in paths if p in handed and p not in done], settings)
            for path in _check_order(func, [p for p in paths if p not in handed and p not in done]):
                yield path, func(path, settings)


# Chunks given to each worker ahead: the one it checks and the next, so it never waits for
# the parent, which may be in the middle of a file (the heaviest take ~1 s).
_QUEUED_PER_WORKER = 2


def _shared_chunks(
    pool: ProcessPoolExecutor,
    workers: int,
    func: Callable[[str, Settings], Any],
    chunks: tuple[list[list[str]], list[list[str]]],
    settings: Settings,
    handed: set[str],
) -> Iterator[tuple[str, Any]]:
    """The chunks checked by the pool's workers and by this process, whichever is free takes
    the next (heaviest first, of the packages it checked first: `_Affinity`). The parent
    checking instead of waiting saves a process: each process that checks copies most of the
    heap it was forked with (reference counts are written on every object read), so a parent
    that only waited kept its own copy of pages both workers had copied, ~12 MiB of ao's 82
    MiB peak PSS with two workers. A worker's next chunk is submitted when one of its chunks
    comes back (in the pool's thread)."""
    import threading
    from concurrent.futures import FIRST_COMPLETED, wait

    pending = _Affinity(*chunks)
    queued: list = []
    lock = threading.Lock()

    def take(n: int) -> list[list[str]]:
        given = [pending.take(_POOL) for _ in range(min(n, len(pending)))]
        handed.update(p for chunk in given for p in chunk)
        return given

    def next_for_worker(future) -> None:
        if future.cancelled() or future.exception() is not None:
            return  # a broken pool or a stopped run: nothing more goes to the workers
        with lock:
            try:
                later = [pool.submit(_run_chunk, func, chunk) for chunk in take(1)]
            except RuntimeError:  # shut down meanwhile (Ctrl-C): the parent is stopping
                return
            queued.extend(later)
        for each in later:
            each.add_done_callback(next_for_worker)

    def finished(block: bool) -> Iterator[tuple[str, Any]]:
        with lock:
            waiting = list(queued)
        if block and waiting:
            wait(waiting, return_when=FIRST_COMPLETED)
        for future in waiting:
            if future.done():
                with lock:
                    queued.remove(future)
                yield from future.result()  # BrokenProcessPool: a worker died

    with lock:
        queued.extend(_submitted(pool, func, take(workers * _QUEUED_PER_WORKER)))
        first = list(queued)
    for future in first:
        future.add_done_callback(next_for_worker)
    while True:
        with lock:
            chunk = pending.take(_PARENT) if pending else None
        if chunk is None:
            break
        for path in _check_order(func, chunk):
            start = _check_cpu()
            yield path, func(path, settings)
            if _check_cpu() - start >= _RELEASE_AFTER_SECONDS:
                _release_freed_memory()
            yield from finished(block=False)
    while True:
        with lock:
            if not queued:
                break
        yield from finished(block=True)


_POOL, _PARENT = 0, 1  # who takes a chunk: the pool's workers or the parent


class _Affinity:
    """The chunks left, heaviest first, each taker given the heaviest of a package it has
    checked, else of one the other has not, before any other (the fine tail excepted: taken
    in order, so the processes finish together).

    A package's checks read the same modules and search the same callers. Split over two
    processes, both parse them, and the run's peak memory, the sum of its processes' highest
    points, carries that transient twice: ExecuTorch's backends/qualcomm spans three chunks,
    whose heaviest checks (tests/utils.py's and utils/utils.py's callers in the 465 KB
    test_qnn_delegate.py, export_utils.py's 44 caller modules) fell to both processes in
    about one run of three: the parent, which holds the run's state besides, then peaked at
    104-106 MiB instead of 76-80, and the run at 186-188 MiB instead of 170-173 (ruff ALL:
    183). Now one process checks them all: 165-166 MiB in every run. A chunk's packages are
    those of its first and last files."""

    def __init__(self, head: list[list[str]], tail: list[list[str]]):
        self._chunks = head + tail
        self._package = _package([p for chunk in self._chunks for p in chunk[:1] + chunk[-1:]])
        self._head = len(head)  # the fine tail (`_chunk_parts`) is taken in order
        self._seen: tuple[set, set] = (set(), set())

    def __len__(self) -> int:
        return len(self._chunks)

    def take(self, taker: int) -> list[str]:
        seen, other = self._seen[taker], self._seen[1 - taker]
        head = [self._packages(c) for c in self._chunks[: self._head]]
        # Of a package it checked; else of one the other taker has not; else the heaviest.
        pick = next((i for i, p in enumerate(head) if p & seen), None)
        if pick is None:
            pick = next((i for i, p in enumerate(head) if not p & other), 0)
        chunk = self._chunks.pop(pick)
        self._head -= pick < self._head
        seen.update(self._packages(chunk))
        return chunk

    def _packages(self, chunk: list[str]) -> set[tuple[str, ...]]:
        return {self._package(chunk[0]), self._package(chunk[-1])}


def _package(paths: list[str]) -> Callable[[str], tuple[str, ...]]:
    """The package of a path: its first two directories below the directory holding all of
    `paths` (ExecuTorch: `backends/qualcomm`, `exir/tests`)."""
    try:
        root = os.path.commonpath(paths) if len(paths) > 1 else ""
    except ValueError:  # absolute and relative paths together, or several drives
        root = ""
    skip = len(root.rstrip(os.sep)) + 1 if root else 0  # "/" too

    def package(path: str) -> tuple[str, ...]:
        return tuple(os.path.dirname(path[skip:]).split(os.sep)[:2])

    return package


def _submitted(pool: ProcessPoolExecutor, func: Callable[[str, Settings], Any], chunks: list[list[str]]) -> list:
    """The chunks' futures. The first submit forks the workers: a Ctrl-C meanwhile is held until
    they are forked (a worker that got it before its initializer printed a traceback) and raised
    here, in the caller's `try` that stops them."""
    from qlint.analysis import held_interrupts  # with `signal` (its enums: ~3 M instructions), for a pool only

    held = held_interrupts.hold()
    try:
        return [pool.submit(_run_chunk, func, chunk) for chunk in chunks]
    finally:
        held_interrupts.release(held)


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


def _check_order(func: Callable[[str, Settings], Any], paths: list[str]) -> Iterator[str]:
    """Every path once, in the given order except that a file whose tree a module summary
    kept (`tree_handover`: a file checked meanwhile imports it) is checked right after, so
    it is parsed once and its tree is not held for long. Checks only: `qlint fix` rewrites
    files as it goes, and a file checked alone has nothing to share."""
    if func not in (_check_one, _check_one_uncached) or len(paths) < 2 or len(set(paths)) != len(paths):
        yield from paths
        return
    from qlint.analysis.names.tree_handover import HANDOVER

    named = {os.path.abspath(p): p for p in paths}
    remaining = dict.fromkeys(paths)
    HANDOVER.expect(named)
    try:
        while remaining:
            path = next((named[k] for k in HANDOVER.kept() if named.get(k) in remaining), None)
            if path is None:
                path = next(iter(remaining))
            del remaining[path]
            yield path
    finally:
        HANDOVER.expect(())


def _stop(pool: ProcessPoolExecutor) -> None:
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    for process in processes:
        with contextlib.suppress(Exception):
            process.terminate()
    # The pool's manager thread sees its workers die and closes the pool's wake-up pipe, which
    # `shutdown` writes to: racing it, the write met a closed pipe (BrokenPipeError, so exit 1
    # instead of 130, or "Bad file descriptor" on stderr at exit). Once it is done, the write
    # is skipped.
    if manager is not None:
        manager.join(timeout=5)
    pool.shutdown(wait=False, cancel_futures=True)


def _isolate(func, paths: list[str], settings: Settings) -> Iterator[tuple[str, Any]]:
    """After a worker died: one process per remaining file, so only the culprit is lost."""
    from concurrent.futures.process import BrokenProcessPool

    for path in paths:
        try:
            with _pool(1, settings) as pool:
                yield from _submitted(pool, func, [[path]])[0].result()
        except BrokenProcessPool:
            result = FileResult(path=path)
            result.errors.append(f"{display_path(path)}: the checker crashed on this file (worker process died)")
            yield path, _crashed(func, path, result)


def _crashed(func, path: str, result: FileResult) -> Any:
    if func in (_check_one, _check_one_uncached):
        return result, 0, 0, ""
    return FixReport(path, 0, False, result), None


def _pool(workers: int, settings: Settings) -> ProcessPoolExecutor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    _load_for_workers()
    # What the parent freed before forking (the project's wrapper index is built just before,
    # reading every module that inserts) would stay mapped in it for the whole run.
    _find_malloc_trim()
    _release_freed_memory()

    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if sys.platform == "linux" and "fork" in methods else None)
    return ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker, initargs=(settings, os.getpid()))


def _load_for_workers() -> None:
    """fork: workers inherit the imported modules and the loaded op table for free, so the
    engine and the rules (imported lazily, as a run of a few files needs them) are imported
    before it: once here rather than once per worker. A run that makes the project's wrapper
    index does it while a child makes the index (~0.2 s of ExecuTorch's imports off the
    time before the workers start); `_pool` then finds everything loaded. A run of one
    process imports the modules while it waits for that child (`_import_for_checks`)."""
    from qlint.optable import load_op_table
    from qlint.short_digests import load_before_forking

    _import_for_checks()
    load_before_forking()
    # The op table too (1.3 MiB of decoded JSON): each worker loaded its own copy at its first
    # check; inherited, only the pages of the ops a worker looks up are copied.
    load_op_table().loaded()
    _import_for_pool()


def _import_for_pool() -> None:
    """What the pool itself loads before its first worker runs: `multiprocessing` and the
    modules its queues, locks and fork bring in, and glibc's `malloc_trim` (`ctypes`). Loaded
    by `_pool` after the wrapper index's child had returned, they were ~0.02 s of CPU on the
    run's serial path while one core idled (the index's child alone was at work), before
    either process checked a file; here they load while that child works."""
    import importlib

    for name in _POOL_MODULES:
        importlib.import_module(name)
    _find_malloc_trim()


_POOL_MODULES = (
    "concurrent.futures.process",
    "multiprocessing.connection",
    "multiprocessing.popen_fork",
    "multiprocessing.queues",
    "multiprocessing.synchronize",
)


def _import_for_checks() -> None:
    """The engine and every rule's module. A run of one process imports them while it waits
    for the wrapper index's child, rather than at its first checks (on ao, all but five of
    these modules are imported by its checks anyway); OpenSSL and the whole op table are left
    to be loaded as the checks need them, as in any run without workers."""
    import qlint.engine
    import qlint.notebook  # noqa: F401

    _import_rules()


def _import_rules() -> None:
    """Import every rule's module (before forking: once, not once per worker) as the registry
    imports one when a file needs it, so the registry keeps answering from its manifest.
    `registry.rules()` instead turned the workers' registry to the classes, where each file's
    two `engine_rule` questions rebuilt the facts of every rule (ExecuTorch: 7,699 rebuilds,
    92,000 `_facts_of` calls over the two workers; none in-process)."""
    from qlint import registry

    for code in registry.facts():
        registry.rule_class(code)


def _chunk_parts(paths: list[str], jobs: int) -> tuple[list[list[str]], list[list[str]]]:
    """Neighbouring files together, in chunks of roughly equal byte budgets, heaviest first
    (longest-processing-time). A worker reads (and keeps) the modules the files it checks
    import: files of one package in one chunk share them, where chunks of files from all
    over the tree made both workers read most of the project's imported modules (on
    ExecuTorch each of the two parsed ~310 of 432; the work and memory were duplicated)."""
    sized = []
    for path in sorted(paths):
        try:
            sized.append((os.stat(path).st_size, path))
        except OSError:
            sized.append((0, path))
    total = sum(s for s, _ in sized)
    budget = max(total // (jobs * _CHUNKS_PER_JOB), 1)
    chunks: list[tuple[int, list[str]]] = []
    current: list[str] = []
    weight = 0
    for size, path in sized:
        current.append(path)
        weight += size
        if weight >= budget:
            chunks.append((weight, current))
            current, weight = [], 0
    if current:
        chunks.append((weight, current))
    chunks.sort(key=lambda c: -c[0])  # stable: equal weights keep the tree's order
    # Neighbours cluster the expensive files too: the last chunks are cut finer, so the
    # workers still finish together.
    head, tail = chunks[: -jobs * _FINE_TAIL], chunks[-jobs * _FINE_TAIL :]
    fine = []
    for _, chunk in tail:
        step = max(len(chunk) // _FINE_CUTS, 1)
        fine += [chunk[i : i + step] for i in range(0, len(chunk), step)]
    return [c for _, c in head], fine

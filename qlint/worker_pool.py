"""The process pool of a run with workers: what `runner._map` does with more than one process.

Workers are forked once per run (on Linux) with the settings handed over in the pool
initializer (`worker_process`); the parent checks too (`check_chunks`). A worker that dies
(a C stack overflow on a pathological file) costs only that file: the files it had not sent
back are retried one per process and the culprit is reported. A file that kills the parent,
as in a run of one process, ends the run.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from qlint import lost_interrupts, worker_process
from qlint.check_chunks import chunk_parts, shared_chunks, submitted
from qlint.file_checks import FixReport, check_one, check_one_uncached, check_order, gc_tuned
from qlint.results import FileResult, display_path
from qlint.settings import Settings

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


def pool_map(
    func: Callable[[str, Settings], Any], paths: list[str], settings: Settings, jobs: int
) -> Iterator[tuple[str, Any]]:
    """`runner._map` with `jobs` processes, the parent one of them: it checks chunks itself
    beside `jobs - 1` forked workers (`shared_chunks`)."""
    from concurrent.futures.process import BrokenProcessPool

    done: set[str] = set()
    handed: set[str] = set()  # the paths of the chunks given to workers
    workers = min(jobs, len(paths)) - 1
    with gc_tuned():
        try:
            with _pool(workers, settings) as pool:
                try:
                    for path, value in shared_chunks(pool, workers, func, chunk_parts(paths, jobs), settings, handed):
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
            for path in check_order(func, [p for p in paths if p not in handed and p not in done]):
                yield path, func(path, settings)


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
                yield from submitted(pool, func, [[path]])[0].result()
        except BrokenProcessPool:
            result = FileResult(path=path)
            result.errors.append(f"{display_path(path)}: the checker crashed on this file (worker process died)")
            yield path, _crashed(func, path, result)


def _crashed(func, path: str, result: FileResult) -> Any:
    if func in (check_one, check_one_uncached):
        return result, 0, 0, ""
    return FixReport(path, 0, False, result), None


def _pool(workers: int, settings: Settings) -> ProcessPoolExecutor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    load_for_workers()
    # What the parent freed before forking (the project's wrapper index is built just before,
    # reading every module that inserts) would stay mapped in it for the whole run.
    worker_process.find_malloc_trim()
    worker_process.release_freed_memory()

    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if sys.platform == "linux" and "fork" in methods else None)
    return ProcessPoolExecutor(
        workers, mp_context=ctx, initializer=worker_process.init_worker, initargs=(settings, os.getpid())
    )


def load_for_workers() -> None:
    """fork: workers inherit the imported modules and the loaded op table for free, so the
    engine and the rules (imported lazily, as a run of a few files needs them) are imported
    before it: once here rather than once per worker. A run that makes the project's wrapper
    index does it while a child makes the index (~0.2 s of ExecuTorch's imports off the
    time before the workers start); `_pool` then finds everything loaded. A run of one
    process imports the modules while it waits for that child (`import_for_checks`)."""
    from qlint.optable import load_op_table
    from qlint.short_digests import load_before_forking

    import_for_checks()
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
    worker_process.find_malloc_trim()


_POOL_MODULES = (
    "concurrent.futures.process",
    "multiprocessing.connection",
    "multiprocessing.popen_fork",
    "multiprocessing.queues",
    "multiprocessing.synchronize",
)


def import_for_checks() -> None:
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

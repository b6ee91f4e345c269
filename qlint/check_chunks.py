"""The files of a run with workers, in chunks, and which process checks which chunk.

Files travel in chunks built largest-first so two cores finish together instead of one
waiting on a big file at the end, and the chunks of a package go to the process that
checked one of them (`_Affinity`). With `-j N` the parent checks chunks too, beside N - 1
workers (a process that only waits still costs memory: the heap pages the workers copy).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from qlint import worker_process
from qlint.file_checks import check_order
from qlint.settings import Settings

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

_CHUNKS_PER_JOB = 12
_FINE_TAIL, _FINE_CUTS = 3, 4  # the last 3 chunks per job, in quarters


def chunk_parts(paths: list[str], jobs: int) -> tuple[list[list[str]], list[list[str]]]:
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


# Chunks given to each worker ahead: the one it checks and the next, so it never waits for
# the parent, which may be in the middle of a file (the heaviest take ~1 s).
_QUEUED_PER_WORKER = 2


def shared_chunks(
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
                later = [pool.submit(worker_process.run_chunk, func, chunk) for chunk in take(1)]
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
        queued.extend(submitted(pool, func, take(workers * _QUEUED_PER_WORKER)))
        first = list(queued)
    for future in first:
        future.add_done_callback(next_for_worker)
    while True:
        with lock:
            chunk = pending.take(_PARENT) if pending else None
        if chunk is None:
            break
        for path in check_order(func, chunk):
            start = worker_process.check_cpu()
            yield path, func(path, settings)
            if worker_process.check_cpu() - start >= worker_process.RELEASE_AFTER_SECONDS:
                worker_process.release_freed_memory()
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
        self._head = len(head)  # the fine tail (`chunk_parts`) is taken in order
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


def submitted(pool: ProcessPoolExecutor, func: Callable[[str, Settings], Any], chunks: list[list[str]]) -> list:
    """The chunks' futures. The first submit forks the workers: a Ctrl-C meanwhile is held until
    they are forked (a worker that got it before its initializer printed a traceback) and raised
    here, in the caller's `try` that stops them."""
    from qlint.analysis import held_interrupts  # with `signal` (its enums: ~3 M instructions), for a pool only

    held = held_interrupts.hold()
    try:
        return [pool.submit(worker_process.run_chunk, func, chunk) for chunk in chunks]
    finally:
        held_interrupts.release(held)

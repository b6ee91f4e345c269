"""A worker process of a run: its start (the run's settings, handed over once in the pool's
initializer, so nothing is imported or unpickled per file), the chunks it checks, and the
memory it gives back after a heavy check.

Workers die with the parent: on Linux the kernel sends them SIGKILL when it exits
(`PR_SET_PDEATHSIG`, whatever killed it, `kill -9` included), and elsewhere each worker
checks between files that its parent is still there. They never write files anyway:
`qlint fix` workers return texts and the parent writes (see `qlint.fix_session`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from qlint.file_checks import check_order, tune_gc
from qlint.settings import Settings

_worker_settings: Settings | None = None
_parent_pid: int | None = None
_PR_SET_PDEATHSIG = 1


def init_worker(settings: Settings, parent_pid: int) -> None:
    global _worker_settings, _parent_pid
    _worker_settings = settings
    _parent_pid = parent_pid
    _die_with_parent()
    from qlint.analysis import held_interrupts  # with `signal`: only where a run forks

    # Ctrl-C is the parent's to handle (exit 130, quietly); workers are stopped by it. One that
    # came while the worker was forked was held (`check_chunks.submitted`): it is dropped now.
    held_interrupts.ignore_in_worker()
    tune_gc()
    find_malloc_trim()
    # The small tables of answers about other modules this worker works out (`kept_answers`),
    # written down as it exits: the first edited check after the run reads them.
    from qlint.analysis.graphs import kept_shards

    kept_shards.flush_at_worker_exit()


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


# A check that took this much CPU allocated a tree and its analyses (most files are turned away
# by the triggers in well under a millisecond): what it freed is handed back to the system after
# it. CPU, not wall time (`check_cpu`): on a busy machine most checks outlast 20 ms of wall
# time while the process waits for a core, and ExecuTorch's run trimmed after 2,440 of its
# 3,841 files instead of ~120, each trim's freed pages faulted back in by the next check (at
# a load of ~25: 185,000 -> 146,000 minor faults over the run). A heavy check, the one whose
# freed memory would raise the run's peak, is still followed by a trim.
RELEASE_AFTER_SECONDS = 0.02
check_cpu = time.thread_time  # this thread's CPU: the parent's pool threads are not its checks
_malloc_trim: Callable[[int], int] | None = None  # glibc's, found by `init_worker`


def find_malloc_trim() -> None:
    global _malloc_trim
    if sys.platform != "linux":
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):  # musl has none
        _malloc_trim = ctypes.CDLL(None).malloc_trim


def release_freed_memory() -> None:
    """Give the pages a finished check freed back to the system. A worker's memory is otherwise
    its highest point so far (freed blocks stay mapped, scattered among what the run keeps), and
    the run's peak is the sum over the workers: with each worker back down between its big files,
    the spikes of two workers, which seldom coincide, no longer add up (ao: 82 -> 74 MiB PSS)."""
    if _malloc_trim is not None:
        _malloc_trim(0)


def run_chunk(func: Callable[[str, Settings], Any], paths: list[str]) -> list[tuple[str, Any]]:
    assert _worker_settings is not None
    out = []
    for path in check_order(func, paths):
        _exit_if_orphaned()  # the watchdog where PR_SET_PDEATHSIG does not exist
        start = check_cpu()
        out.append((path, func(path, _worker_settings)))
        if check_cpu() - start >= RELEASE_AFTER_SECONDS:
            release_freed_memory()
    return out

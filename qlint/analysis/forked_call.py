"""Work whose garbage the calling process must not keep: done in a forked child, which hands
back only its result (plain data, `marshal`ed through a pipe).

A process's heap does not shrink back after a burst of short-lived objects: CPython's small
object allocator gives an arena (1 MiB) back only once every block in it is free, and the few
objects that outlive the burst keep most arenas. `qlint check` makes the project's wrapper
index (`wrapper_index.enable`) just before forking its workers: on ExecuTorch reading every
module that inserts left the parent with 28 arenas holding 7 MiB. The workers then allocate
into those free blocks (copy-on-write copies: each worker's own), while the parent keeps its
copy of every such page for the whole run: the parent alone reached 35 MiB of the run's peak
PSS. Made in a child, the parent forks its workers from the heap it had before the index.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import sys
from collections.abc import Callable
from typing import TypeVar

from qlint.analysis import held_interrupts

_T = TypeVar("_T")


def call(work: Callable[[], _T], meanwhile: Callable[[], object] | None = None) -> _T:
    """`work()`, computed in a forked child where `fork` exists (Linux), else here. Its result
    must be something `marshal` writes (tuples, frozensets, strings...). A child that fails
    in any way (an exception, killed, a result `marshal` refuses) leaves the work to this
    process, which then meets the same exception, if any, as it would have without a child.
    `meanwhile()`: this process's own work, done while the child works (once, in any case)."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        if meanwhile is not None:
            meanwhile()
        return work()
    read_end, write_end = os.pipe()
    held = held_interrupts.hold()  # a Ctrl-C now waits until the child can be stopped
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        held_interrupts.release(held)
        if meanwhile is not None:
            meanwhile()
        return work()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
        _child(work, read_end, write_end, held)
    try:
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            held_interrupts.release(held)
            if meanwhile is not None:
                meanwhile()
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
    except BaseException:  # Ctrl-C: the child's work is not waited for
        kill_and_reap(pid)
        held_interrupts.release(held)  # never left blocked, whatever failed before it was released
        raise
    if os.waitstatus_to_exitcode(status) != 0 or not data:
        return work()
    return marshal.loads(data)


def spawn(work: Callable[[], object], read_end: int, write_end: int) -> int | None:
    """A child writing `work()` into the pipe (`marshal`ed, as `call`'s child does) while this
    process goes on, for another process to read: its pid (the caller's to `kill_and_reap`
    once done with it: a child left unreaped stays a zombie), or None where no child can be
    forked. The caller closes its own `write_end` afterwards, so that the reader meets the
    pipe's end once the child is done."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return None
    held = held_interrupts.hold()
    try:
        pid = os.fork()
    except OSError:
        held_interrupts.release(held)
        return None
    if pid == 0:  # pragma: no cover - the child
        _child(work, read_end, write_end, held)
    try:
        held_interrupts.release(held)  # a Ctrl-C held meanwhile is raised here
    except BaseException:
        kill_and_reap(pid)
        raise
    return pid


def kill_and_reap(pid: int) -> None:
    """Kill the child and reap it: nothing of the run outlives it, not even a zombie."""
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.waitpid(pid, 0)


def _child(work: Callable[[], object], read_end: int, write_end: int, held: object) -> None:  # pragma: no cover
    """Never returns: no `atexit` handler, no buffered output of the parent's is run or
    flushed twice (`os._exit`)."""
    status = 1
    try:
        held_interrupts.release_in_child(held)
        os.close(read_end)
        data = marshal.dumps(work())
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)
        status = 0
    except BaseException:  # the parent works it out again, and reports what it meets
        pass
    finally:
        os._exit(status)

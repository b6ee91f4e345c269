"""Ctrl-C held across a `fork`, so that it lands where the process that gets it can handle it.

A terminal's Ctrl-C sends SIGINT to the whole process group: the parent and every child it
forked. Landing in a child between `fork` and the code meant for the child, Python's
`KeyboardInterrupt` unwound the *parent's* stack in the child (its `finally` blocks, its exit
handlers, the command's exit code); landing in a pool worker before its initializer ignored
SIGINT, it printed a traceback. Landing in the parent between `fork` and the `try` that stops
the child, the child was left running. Blocked (not ignored: a blocked signal waits) while
the fork is made, it is delivered only once each side is ready for it.
"""

from __future__ import annotations

import signal

_BLOCKABLE = hasattr(signal, "pthread_sigmask")
_INT = frozenset({signal.SIGINT})


def hold() -> object:
    """Block SIGINT in this thread (a child forked now inherits the block); `release` with what
    this returns. Nothing where signals cannot be blocked."""
    return signal.pthread_sigmask(signal.SIG_BLOCK, _INT) if _BLOCKABLE else None


def release(held: object) -> None:
    """The mask `hold` found: a Ctrl-C that came meanwhile raises `KeyboardInterrupt` here
    (`pthread_sigmask` runs the handler before returning), so call it where that is handled."""
    if _BLOCKABLE and held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def release_in_child(held: object) -> None:
    """In a child forked while held: a Ctrl-C ends it at once, as the system ends a process,
    instead of raising `KeyboardInterrupt` in code copied from the parent. A child that ignores
    SIGINT (forked by a pool worker) or has someone's own handler keeps it."""
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
    except ValueError:  # not the main thread: nothing to change
        pass
    release(held)


def ignore_in_worker() -> None:
    """In a pool worker (forked while held): Ctrl-C is the parent's to handle. Ignored first,
    then let through: one held meanwhile is dropped."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if _BLOCKABLE:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _INT)

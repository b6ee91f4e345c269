"""Ctrl-C that Python could not raise where it landed, kept for where the run can stop.

A `KeyboardInterrupt` raised in a weakref callback or a `__del__` (the callback of an import's
module lock, as a parallel run starts) is "ignored": Python prints it as an ignored exception,
drops it, and the run went on to its end (exit 1, a traceback on stderr). Sent to the main
thread again from the hook, it would land in the hook, which Python runs as a callback too.
Apart from `held_interrupts`: the one-file check imports this at start and not `signal`.
"""

from __future__ import annotations

import sys


def keep_lost_interrupts() -> None:
    """Keep a Ctrl-C Python drops as unraisable, for `raise_if_lost`."""
    previous = sys.unraisablehook
    if getattr(previous, "keeps_interrupts", False):
        return

    def hook(unraisable) -> None:
        global _lost
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            _lost = True
            return
        previous(unraisable)

    hook.keeps_interrupts = True  # type: ignore[attr-defined]
    sys.unraisablehook = hook


_lost = False


def raise_if_lost() -> None:
    """Raise the Ctrl-C `keep_lost_interrupts` kept, once."""
    global _lost
    if _lost:
        _lost = False
        raise KeyboardInterrupt

"""Pause the cyclic garbage collector while a file is checked.

Parsing a 2,000-line module allocates some 15,000 AST nodes and the analyses build as many
small objects; none of it is freed by the cyclic collector (syntax trees hold no cycles),
yet with the default thresholds it runs dozens of collections per check, each rescanning
everything the process holds: about a fifth of a check in the language server and the
benchmark's in-process loop. The pause is reentrant and shared by threads (the language
server checks in worker threads): the collector runs again when the last check ends.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()

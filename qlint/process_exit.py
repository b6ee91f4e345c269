"""Leave the process as soon as a command's output is out.

A normal interpreter exit tears down every module and object the run built (the syntax
trees and summaries of the modules a check read, the op table, the rules) and runs a last
garbage collection: about 25 ms after `qlint check FILE` on an ExecuTorch module, a tenth
of the whole command and more than ruff takes for the same file. Like mypy, the command
line flushes its streams, runs the exit handlers (the runtime checker's, a plugin's) and
ends the process without the teardown. Where that cannot be done safely (another thread
still runs, a stream cannot be flushed, a profiler waits for the exit to write its report,
an interpreter without `atexit._run_exitfuncs`), the normal exit is taken.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys

_ending = False


def ends_after_command() -> None:
    """This process ends when the command it runs returns (`qlint.cli.run`, not a test nor
    an embedding program calling `qlint.cli.main`). The cyclic collector is off until the
    command starts work whose garbage it is for (`collector_back`): before, it only rescanned
    the modules being imported and the cache's answers, none of them garbage (a cached
    `qlint check FILE`: ~2.5 M instructions on ao, ~3 M on ExecuTorch, in a dozen collections)."""
    global _ending
    _ending = True
    gc.disable()


def collector_back() -> None:
    """Files are to be checked or fixed, or the language server starts: the collector runs
    again, as it would have all along, in a process `ends_after_command` turned it off in."""
    if _ending:
        gc.enable()


def ending() -> bool:
    """Whether this process ends after the command: work for later (collecting garbage) is waste."""
    return _ending


def exit_now(code: int) -> None:
    """End the process with `code`: at once when that is safe, else by `sys.exit`."""
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    threading = sys.modules.get("threading")
    # A profiler or tracer (`python -m cProfile -m qlint`) writes its report after the
    # command returns, as the interpreter exits: that exit is taken then.
    watched = sys.getprofile() is not None or sys.gettrace() is not None
    if run_exit_handlers is None or watched or (threading is not None and threading.active_count() > 1):
        sys.exit(code)
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        sys.exit(code)  # a closed or broken stream: let the interpreter report it as usual
    run_exit_handlers()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()  # what the handlers printed
    except (OSError, ValueError):
        pass
    os._exit(code)

"""Python's cycle collector in the server: never during a check, and not over what lives on.

A check allocates a few hundred thousand objects (the module's syntax tree, its scopes,
the rules' state) and frees them by reference counting: on the 2,000-line module of
`benchmarks/lsp_bench.py`, `gc.collect()` after each check found nothing to free. Yet the
collector, triggered by allocation counts, ran during the checks, and its passes over the
oldest generation walked every live object, the tree being checked included: 50-100 ms
each, which was the p95 of edit -> publish. So the collector is paused while a check runs
and keeps its usual schedule between checks (cycles made anywhere are still freed), and
what is alive after the first check (imported modules, rule and op tables, the server
itself) is frozen out of its walks.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def no_collection() -> Iterator[None]:
    """Run a check without the collector (only the checker thread pauses it)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def settle() -> None:
    """Once, after the first check: collect, then move every surviving object to the
    permanent generation (the start-up state, which stays alive for good)."""
    gc.collect()
    gc.freeze()

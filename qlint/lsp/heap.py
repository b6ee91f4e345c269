"""The cycle collector in the server: not over what lives for good.

A check allocates a few hundred thousand objects and frees them by reference counting
(on the 2,000-line module of `benchmarks/lsp_bench.py`, `gc.collect()` after each check
found nothing to free), yet the collector, triggered by allocation counts, ran during the
checks, and its passes over the oldest generation walked every live object: 50-100 ms
each, which was the p95 of edit -> publish. The server runs each check, conversion to LSP
included, inside `qlint.gc_pause.gc_paused`; between checks the collector keeps its usual
schedule (cycles made anywhere are still freed), and what is alive after the first check
(imported modules, rule and op tables, the server itself) is frozen out of its walks here.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Once, after the first check: collect, then move every surviving object to the
    permanent generation (the start-up state, which stays alive for good)."""
    gc.collect()
    gc.freeze()

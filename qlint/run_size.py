"""Whether a run has enough to check for a second process to pay for its memory (`runner._workers`).

A worker is not free: forked from a parent that imported the rules, it copies most of the pages
it reads (reference counts are written on every object read), reads and keeps its own facts of
the modules its files import, and its heap stays at its highest point. On pytorch/ao (633 files,
7 MB, 2 s of CPU) the second process added ~30 MiB of the run's peak PSS (parent 45 + worker
34 MiB against 47 MiB in one process; `ruff --select ALL` peaks at 62 MiB there) for at most half
of the checks' time. Over ExecuTorch (29 MB, 14 s of CPU) or the installed torch (49 MB) the
time a second core saves is many seconds and its memory a smaller share of the peak.

Measured again at 0ef7400 (2 cores, `benchmarks/bench_vs_ruff.measure_tree`, CPU user+sys):
ao at one process 2.0 s CPU, peak RSS 60 / PSS 52 MiB; at two 2.3 s, RSS 98 / PSS 75 MiB, the
wall ~1.1 s instead of ~1.6 s (ruff ALL: RSS 63 / PSS 61 MiB, 0.9 s): a second process would
take ao past ruff's memory for a wall time still above ruff's. ExecuTorch at two processes: RSS
180-194 / PSS 149-165 MiB (ruff ALL: RSS 180-182 / PSS 180 MiB); at one, RSS 126 / PSS 117 MiB
but a wall of 18-23 s against 11-13 s. `MALLOC_ARENA_MAX=1` changed neither (RSS 184/187 against
189/180 MiB).

The measure is the bytes of the files to check, as `stat` gives them: cheap (no file is read),
and the checks' CPU time follows it (0.24-0.5 s per MB over ao, torch, ExecuTorch). An explicit
`--jobs N` is always obeyed; this only decides what no `-j` means.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

# Below this much source to check, one process does it all (ao: 7 MB; ExecuTorch 29 MB, torch
# 49 MB get every core).
MIN_PARALLEL_BYTES = 16 * 2**20


def enough_for_workers(paths: Iterable[str], min_bytes: int | None = None) -> bool:
    """True once the files' sizes add up to `min_bytes` (stops stat-ing there)."""
    needed = MIN_PARALLEL_BYTES if min_bytes is None else min_bytes
    total = 0
    for path in paths:
        try:
            total += os.stat(path).st_size
        except OSError:
            continue
        if total >= needed:
            return True
    return False

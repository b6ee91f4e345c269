"""Where an edit's time goes inside the server, for `benchmarks/lsp_bench.py` and bug reports.

For each check the server ran: when the edits it covers arrived, when it started (the
wait before it is debounce, coalescing, and the check already running), how long the
engine took, what the server did around the engine (overlay, settings, conversion to LSP),
and when the result was handed to the transport. The check in progress is listed too (what
tests wait on: "the importer's recheck is running now", instead of sleeping and hoping), and
stays in the log until it ends, so each check is taken once, complete. Stamps are `time.monotonic()`, the clock
`time.perf_counter()` also reads on Linux, so a client on the same machine can line them up
with its own. A bounded log: it costs a few clock reads per check and never grows.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import asdict, dataclass

KEEP = 4096  # checks remembered; the benchmark fetches them every few hundred edits


@dataclass
class CheckTiming:
    uri: str
    version: int | None
    first_edit: float | None  # the oldest edit not covered by a publish of this buffer
    last_edit: float | None  # the edit that made this version
    started: float
    engine: float = 0.0  # seconds in `check_source`
    engine_cpu: float = 0.0  # CPU seconds of the checker thread in it (wall >> CPU: a loaded machine)
    work: float = 0.0  # seconds on the checker thread, engine included
    finished: float = 0.0  # the checker thread handed the result back
    published: float | None = None  # written to the transport (None: stale, dropped)
    why: str = ""  # "edit", "dependent"
    cancelled: bool = False  # stopped between rules: the buffer moved on, or an edit waited


class Timings:
    def __init__(self) -> None:
        self.checks: deque[CheckTiming] = deque(maxlen=KEEP)
        self._first_unpublished: dict[str, float] = {}
        self._last_edit: dict[str, float] = {}
        self.running: CheckTiming | None = None  # the check on the checker thread now

    def edited(self, uri: str) -> None:
        now = time.monotonic()
        self._first_unpublished.setdefault(uri, now)
        self._last_edit[uri] = now

    def started(self, uri: str, version: int | None, why: str) -> CheckTiming:
        timing = CheckTiming(
            uri, version, self._first_unpublished.get(uri), self._last_edit.get(uri), time.monotonic(), why=why
        )
        self.checks.append(timing)
        self.running = timing
        return timing

    def ended(self) -> None:
        """The running check is over (published, dropped, stopped or failed)."""
        self.running = None

    def published(self, timing: CheckTiming, current: bool) -> None:
        """The check's result was sent (`current`), or dropped because the buffer moved on."""
        if current:
            timing.published = time.monotonic()
            self._first_unpublished.pop(timing.uri, None)

    def forget(self, uri: str) -> None:
        self._first_unpublished.pop(uri, None)
        self._last_edit.pop(uri, None)

    def take(self) -> list[dict]:
        """The checks that ended since the last call (JSON-ready), oldest first; the one
        running now is taken by the call after it ends."""
        taken = [asdict(t) for t in self.checks if t is not self.running]
        self.checks.clear()
        if self.running is not None:
            self.checks.append(self.running)
        return taken

    def in_progress(self) -> dict | None:
        """The running check as far as it got (JSON-ready), or None."""
        return None if self.running is None else asdict(self.running)

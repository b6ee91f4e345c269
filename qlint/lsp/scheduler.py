"""When each open buffer is checked: one check at a time, the buffer being edited first.

Checks run one after another on the server's single checker thread (the project index is
not thread-safe, and two checks side by side would only share one interpreter lock). So
the order decides latency, and this queue decides it:

- An edited, opened or saved buffer is an *edit*: it is checked as soon as a short window
  passes in which edits sent back to back (a paste, a multi-cursor change, a burst from a
  client that does not debounce) are coalesced into one check of the newest text. Each
  new edit restarts the window (a burst is checked once, at its end).
- The buffers that import an edited module are *dependents*: re-checked only when no edit
  is waiting and the user has paused typing for `DEPENDENT_IDLE_SECONDS`, so an edit never
  waits behind them, except behind the one dependent check already running when it came.
- A check whose buffer was edited while it ran is dropped by the server; the buffer's next
  check then waits for a pause in typing as long as that check took (up to `debounce`),
  counted from the newest edit: a keystroke during a check is checked as soon as the
  check ends when the typing has stopped, and fast typing on a slow module does not keep a
  core busy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

COALESCE_SECONDS = 0.003  # back-to-back messages reach the server about 1 ms apart
DEPENDENT_IDLE_SECONDS = 0.3  # a pause in typing before the importers are re-checked

log = logging.getLogger(__name__)

EDIT, DEPENDENT = 0, 1  # priorities
EDITED, NOW, LATER = "edited", "now", "later"  # why a buffer is due (see `add`)


@dataclass
class Due:
    """What the next check of a buffer owes: a recheck of the buffers that import it (its
    own text changed) and a runtime run (it was opened or saved)."""

    notify_dependents: bool = False
    runtime_version: int | None = None  # the version that was opened or saved
    runtime: bool = False
    priority: int = DEPENDENT
    ready_at: float = 0.0  # event-loop time


# Checks `uri` for what `Due` says; True when the buffer changed while it ran (stale).
Runner = Callable[[str, Due], Awaitable[bool]]


class CheckQueue:
    def __init__(self, run: Runner, debounce: float):
        self.run = run
        self.debounce = debounce
        self.due: dict[str, Due] = {}
        self.in_flight: str | None = None
        self.cost: dict[str, float] = {}  # seconds each buffer's last check took
        self.edited_at: dict[str, float] = {}
        self.last_edit = float("-inf")  # the newest edit to any buffer
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task | None = None

    def entry(self, uri: str) -> Due:
        return self.due.setdefault(uri, Due())

    def pending(self, uri: str) -> bool:
        return uri in self.due or self.in_flight == uri

    def pending_dependents(self) -> bool:
        """Whether a recheck of a dependent is due (not counting the one running now)."""
        return any(due.priority == DEPENDENT for due in self.due.values())

    def add(self, uri: str, when: str) -> None:
        {EDITED: self.edit, NOW: self.now, LATER: self.later}[when](uri)

    def edit(self, uri: str) -> None:
        """The buffer's text changed: check it after the coalescing window (a pause that
        `after_stale` set is kept: an edit never brings a check forward)."""
        now = self._now()
        self.edited_at[uri] = self.last_edit = now
        fresh = uri not in self.due or self.due[uri].priority != EDIT
        due = self.entry(uri)
        if fresh:
            due.priority, due.ready_at = EDIT, now
        due.ready_at = max(due.ready_at, now + COALESCE_SECONDS)
        self._kick()

    def now(self, uri: str) -> None:
        """Opened, saved, asked for (pull), or its settings changed: check it next."""
        due = self.entry(uri)
        due.priority = EDIT
        due.ready_at = self._now()
        self._kick()

    def later(self, uri: str) -> None:
        """A module it imports changed: check it when the user pauses (an edit it already
        owes keeps its place)."""
        due = self.entry(uri)
        if due.priority != EDIT:
            due.ready_at = self._now()
        self._kick()

    def discard(self, uri: str) -> None:
        self.due.pop(uri, None)
        self.cost.pop(uri, None)
        self.edited_at.pop(uri, None)

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        self.due.clear()

    def next_check(self, now: float) -> tuple[str | None, float]:
        """The buffer to check now, or None and how long to wait for one to be ready."""
        edits = [(due.ready_at, uri) for uri, due in self.due.items() if due.priority == EDIT]
        if edits:
            ready_at, uri = min(edits)
            return (uri, 0.0) if ready_at <= now else (None, ready_at - now)
        idle_from = self.last_edit + DEPENDENT_IDLE_SECONDS
        ready_at, uri = min((max(due.ready_at, idle_from), uri) for uri, due in self.due.items())
        return (uri, 0.0) if ready_at <= now else (None, ready_at - now)

    def after_stale(self, uri: str) -> None:
        """The check of `uri` was dropped (edited meanwhile): its next one waits for a
        pause in typing as long as a check of it takes, counted from the newest edit."""
        due = self.due.get(uri)
        if due is None:
            return
        pause = min(self.debounce, self.cost.get(uri, self.debounce))
        due.ready_at = max(due.ready_at, self.edited_at.get(uri, float("-inf")) + pause)

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def _kick(self) -> None:
        if self._wake is None:
            self._wake = asyncio.Event()
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._dispatch())

    async def _dispatch(self) -> None:
        loop = asyncio.get_running_loop()
        while self.due:
            uri, wait = self.next_check(loop.time())
            if uri is None:
                self._wake.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), wait)
                continue
            due = self.due.pop(uri)
            self.in_flight = uri
            try:
                stale = await self.run(uri, due)
            except Exception:  # a bug must cost this check, not the ones queued after it
                log.exception("checking %s failed", uri)
                stale = False
            finally:
                self.in_flight = None
            if stale:
                self.after_stale(uri)

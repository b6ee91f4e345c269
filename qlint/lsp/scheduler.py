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
- A check whose buffer is edited while it runs stops at the next boundary between rules
  (the engine asks between rules), and so does an importer's recheck when an edit comes
  in; the newest text is then checked at once. A keystroke thus waits for at most one
  rule's work of the check it made stale, not for the whole check and a pause after it
  (that pause, which spared a core while typing fast on a slow module, cost up to a whole
  check of latency on every keystroke that landed during a check: most of them, while
  typing). A check that was not stopped in time (the edit came during its last rule) is
  dropped by the server and followed at once too.
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
CANCELLED = "cancelled"  # what a check that stopped early (see `Runner`) returns
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


# Checks `uri` for what `Due` says; True when the buffer changed while it ran (stale),
# CANCELLED when it stopped early because of an edit (to this buffer, or, for an importer's
# recheck, to any): it cost at most one rule's work, so the next check needs no pause.
Runner = Callable[[str, Due], Awaitable["bool | str"]]


class CheckQueue:
    def __init__(self, run: Runner):
        self.run = run
        self.due: dict[str, Due] = {}
        self.in_flight: str | None = None
        self.last_edit = float("-inf")  # the newest edit to any buffer
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task | None = None

    def entry(self, uri: str) -> Due:
        return self.due.setdefault(uri, Due())

    def pending(self, uri: str) -> bool:
        return uri in self.due or self.in_flight == uri

    def edit_waiting(self) -> bool:
        """Whether an edited (or opened, saved) buffer is due. Asked from the checker thread:
        the values are copied in one step, as the event loop may change the dict meanwhile."""
        return any(due.priority == EDIT for due in list(self.due.values()))

    def pending_dependents(self) -> bool:
        """Whether a recheck of a dependent is due (not counting the one running now)."""
        return any(due.priority == DEPENDENT for due in list(self.due.values()))

    def add(self, uri: str, when: str) -> None:
        {EDITED: self.edit, NOW: self.now, LATER: self.later}[when](uri)

    def edit(self, uri: str) -> None:
        """The buffer's text changed: check it once the coalescing window has passed."""
        now = self._now()
        self.last_edit = now
        due = self.entry(uri)
        due.priority, due.ready_at = EDIT, now + COALESCE_SECONDS
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
            if stale is True:
                log.debug("%s changed during its last rule: checked again", uri)

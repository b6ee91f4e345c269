"""A bounded memo that forgets the entries used longest ago.

An editor's memos hold a few entries per checked file (one per scan a check makes), and a check
writes several. Clearing the whole memo when it fills drops entries the same check has just
written, so the next keystroke scans the project again; which check that is depends on what
was checked before, so it showed up as a test failing only after other test files ran.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class RecentEntries(OrderedDict[K, V]):
    """At most `max_entries` entries; `get` and writing an entry make it the newest."""

    def __init__(self, max_entries: int) -> None:
        super().__init__()
        self.max_entries = max_entries

    def get(self, key, default=None):  # type: ignore[override]
        if key not in self:
            return default
        self.move_to_end(key)
        return self[key]

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.max_entries:
            self.popitem(last=False)

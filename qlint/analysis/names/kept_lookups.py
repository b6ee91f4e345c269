"""Where a module was found (`ProjectIndex.find_module`), kept from one check to the next while
the directories that decide it are unchanged (the language server; issue 13).

A check looks each (module, requesting directory) up once (`find_module_in_check`), and a
lookup is a few `stat`s per place the module may live in: ExecuTorch's
`backends/qualcomm/tests/utils.py` made 134 of them per check, ~1,300 `stat`s, mostly to
re-validate the answers QL101/QL102 keep about other modules (each answer's trail of lookups
must still find what it found: a module created ahead of the one found changes it). Which
file a lookup finds depends on which entries the directories it looks in hold, and a
directory's mtime changes whenever an entry is created, removed or renamed in it. So an
answer is kept with the mtimes of the directories deciding each candidate it tried
(`<base>.py`/`<base>.pyi`: the directory holding them; `<base>/__init__.py`: `<base>` itself;
a directory that does not exist: its nearest existing ancestor, whose listing changes when it
is made; a symbolic link on the way: the directory holding the link, which is replaced to
point elsewhere) and is reused while every one of them has the same mtime, each directory
`stat`-ed once per check.

The mtimes are taken before the lookup runs, so a change made meanwhile shows at the next
check. A directory modified within `RACY_NS` of the moment its mtime was read may change again
within the same timestamp tick without a new mtime: such an answer is not kept. The places a
module may live in (`import_paths.module_bases`) are themselves cached for the process; the
editor buffers a lookup counts as files are part of the answer: the index drops every kept
answer when a buffer for a new path opens or one closes (`clear`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from qlint.analysis.names.import_paths import module_bases
from qlint.analysis.racy_stats import RACY_NS

_ABSENT = -1  # the mtime of a directory that does not exist (or is no directory)


class KeptLookups:
    def __init__(self) -> None:
        # (module, requesting directory) -> (file found or None, ((directory, mtime), ...))
        self._answers: dict[tuple[str, str], tuple[str | None, tuple[tuple[str, int], ...]]] = {}
        self._mtimes: dict[str, int] = {}  # this check's, by directory

    def begin_check(self) -> None:
        self._mtimes.clear()

    def clear(self) -> None:
        self._answers.clear()
        self._mtimes.clear()

    def find(self, key: tuple[str, str], module: str, requester: str, lookup: Callable[[str, str], str | None]):
        kept = self._answers.get(key)
        if kept is not None and all(self._mtime(d) == m for d, m in kept[1]):
            return kept[0]
        stamps = self._stamps(module, requester)
        found = lookup(module, requester)
        if stamps is not None:
            self._answers[key] = (found, stamps)
        else:
            self._answers.pop(key, None)
        return found

    def _mtime(self, directory: str) -> int:
        known = self._mtimes.get(directory)
        if known is None:
            try:
                st = os.stat(directory)
                known = st.st_mtime_ns if os.path.stat.S_ISDIR(st.st_mode) else _ABSENT
            except OSError:
                known = _ABSENT
            self._mtimes[directory] = known
        return known

    def _stamps(self, module: str, requester: str) -> tuple[tuple[str, int], ...] | None:
        """The deciding directories' mtimes for every place `module` may live in, or None when
        one of them is too recent to vouch for a later check."""
        deciding: dict[str, None] = {}
        for base in module_bases(module, requester):
            for directory in (os.path.dirname(base), base):
                for d in self._deciding(directory):
                    deciding[d] = None
        now = time.time_ns()
        stamps = []
        for directory in deciding:
            self._mtimes.pop(directory, None)  # read now, before the lookup
            mtime = self._mtime(directory)
            if mtime == _ABSENT or now - mtime < RACY_NS:
                return None
            stamps.append((directory, mtime))
        return tuple(stamps)

    def _deciding(self, directory: str) -> list[str]:
        """The directory whose listing decides what `directory` holds (itself, or its nearest
        existing ancestor), and the directories holding each symbolic link on its path."""
        out = []
        existing = directory
        while self._mtime(existing) == _ABSENT:
            parent = os.path.dirname(existing)
            if parent == existing:
                return out
            existing = parent
        out.append(existing)
        probe = existing
        while True:
            parent = os.path.dirname(probe)
            if parent == probe:
                break
            if os.path.islink(probe):
                out.append(parent)
            probe = parent
        return out


__all__ = ["KeptLookups"]

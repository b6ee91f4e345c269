"""A root's answers to the project scans' questions as an earlier run wrote them
(`SavedAnswers`), and what a run that learned more writes over them: the digests and answers
the table lacks (`newly_learned`), put in (`apply_learned`), with the entries and listings of
what is gone dropped (`drop_gone`). `scan_memo` consults and flushes them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Protocol

from qlint.analysis import skipped_dirs
from qlint.analysis.names import content_keys
from qlint.analysis.racy_stats import RACY_NS

# Questions kept on disk per root; past this many (names of helpers long renamed) the
# answers start again from none.
_MAX_QUESTIONS = 256


class ScanStore(Protocol):
    def get_scan(self, root: str) -> dict | None: ...

    def put_scan(self, root: str, payload: dict) -> None: ...


class SavedAnswers:
    """A root's answers as an earlier run wrote them: relative path -> [mtime_ns, size,
    digest ("" unknown), bit mask of the questions answered no, of those answered yes]."""

    def __init__(self, root: str, store: ScanStore, payload: dict | None, listings: Callable[[], dict]):
        self.root = root
        self.listings = listings
        self.base = root + os.sep
        self.store = store
        self.questions: list[str] = []
        self.files: dict[str, list] = {}
        if payload is not None:
            self.questions = list(payload["questions"])
            self.files = payload["files"]
            if not all(type(q) is str for q in self.questions) or type(self.files) is not dict:
                raise TypeError("bad scan memo")
        self.bits = {q: i for i, q in enumerate(self.questions)}
        self._by_path: dict[str, list] | None = None

    def by_path(self) -> dict[str, list]:
        """The well-formed entries by absolute path (`known_answers`), built once."""
        if self._by_path is None:
            self._by_path = {
                self.base + rel: entry
                for rel, entry in self.files.items()
                if type(rel) is str
                and type(entry) is list
                and len(entry) == 5
                and type(entry[2]) is str
                and type(entry[3]) is int
                and type(entry[4]) is int
            }
        return self._by_path

    def entry(self, path: str, key: tuple) -> list | None:
        """The saved entry of the module at `path`, if it was saved with content `key`."""
        entry = self.files.get(path[len(self.base) :])
        if type(entry) is not list or len(entry) != 5 or entry[0] != key[0] or entry[1] != key[1]:
            return None
        return entry if type(entry[2]) is str and type(entry[3]) is int and type(entry[4]) is int else None

    def answer(self, entry: list | None, question: str) -> bool | None:
        bit = self.bits.get(question)
        if entry is None or bit is None:
            return None
        if (entry[3] >> bit) & 1:
            return False
        if (entry[4] >> bit) & 1:
            return True
        return None


def _trusted(key: tuple | None) -> bool:
    return key is not None and key[0] != "overlay" and content_keys.STARTED_NS - key[0] >= RACY_NS


def newly_learned(saved: SavedAnswers, known: dict) -> tuple[list, list]:
    """(digests, answers) under the root that this process found (`known`: its answers, path ->
    (content key, {question: answer})) and the saved table lacks."""
    digests = [
        (path, key, digest)
        for path, (key, digest) in content_keys.digests_under(saved.base)
        if digest and _trusted(key) and (saved.entry(path, key) or [None] * 3)[2] != digest
    ]
    found = []
    for path, (key, mine) in known.items():
        if path.startswith(saved.base) and _trusted(key):
            entry = saved.entry(path, key)
            found += [(path, key, q, a) for q, a in mine.items() if saved.answer(entry, q) is not a]
    return digests, found


def drop_gone(files: dict, dirs: dict) -> None:
    """Drop the entries of modules, and the listings of directories, that the listings being
    written say are gone (a file deleted or renamed, or a directory above it): nothing would
    ever ask about them again, and the memo would only grow. Every listed directory above a
    path has its say (one below may be a listing kept from an earlier run that this run did
    not list again). A name a listing cannot tell about (not a `.py` file; a directory the
    listing skips) is kept."""
    names: dict[str, set[str]] = {}

    def gone(rel: str, is_file: bool) -> bool:
        parts = rel.split(os.sep)
        for i, name in enumerate(parts):
            parent = os.sep.join(parts[:i])
            listing = dirs.get(parent)
            if listing is None:
                continue
            known = names.get(parent)
            if known is None:
                known = names[parent] = {n for part in listing[1:] for n in part}
            tellable = name.endswith(".py") if is_file and i == len(parts) - 1 else skipped_dirs.walked(name)
            if tellable and name not in known:
                return True
        return False

    for rel in [r for r in files if type(r) is str and gone(r, True)]:
        del files[rel]
    for rel in [r for r in dirs if r and gone(r, False)]:
        del dirs[rel]


def apply_learned(saved: SavedAnswers, digests: list, found: list) -> None:
    files = saved.files
    saved._by_path = None  # entries added: built again when asked
    base = len(saved.base)
    for path, key, digest in digests:
        entry = saved.entry(path, key)
        if entry is None:
            files[path[base:]] = [key[0], key[1], digest, 0, 0]
        else:
            entry[2] = digest
    if len(saved.questions) + len({q for _, _, q, _ in found}) > _MAX_QUESTIONS:
        saved.questions.clear()
        saved.bits.clear()
        for entry in files.values():
            if type(entry) is list and len(entry) == 5:
                entry[3] = entry[4] = 0
    for path, key, question, answer in found:
        bit = saved.bits.get(question)
        if bit is None:
            bit = saved.bits[question] = len(saved.questions)
            saved.questions.append(question)
        entry = saved.entry(path, key)
        if entry is None:
            entry = files[path[base:]] = [key[0], key[1], "", 0, 0]
        entry[4 if answer else 3] |= 1 << bit
        entry[3 if answer else 4] &= ~(1 << bit)

"""What the project scans learned about each module's content, kept between runs.

The scans that read the whole project (QL102's packet consumers and insertions, QL201's
callers, QL103's convert calls) ask each module one question: does its text hold this name,
or match this pattern? Within a process the answers are kept per content key (the module's
stat, or its editor buffer); a new process asked every module again, reading and hashing it:
`qlint check -` on an edit of torch's `ao/quantization/observer.py` read each of the 2,285
modules of the package three times (0.4 s of its 0.55 s), for answers the run before had
found.

With a summary store (the CLI's cache; the language server keeps them in memory only), the
answers about the modules under a scan's root are kept beside the summaries: per module its
stat, its content hash (the dependency a check records) and what its content was found to
hold and not to hold; per directory, its listing at its stamp (`project_files`, which hands them over). A later run
trusts an answer only while the module has the same stat, so an edited module is read
again. As the results cache does, a stat is trusted only if the file was last modified at
least two seconds before the process started: a second edit within the same mtime tick, of
the same size, would keep the stat and change the content.

What is read from disk is consulted where it lies, not copied into this process's memos, so
a run that learns nothing new writes nothing and pays nothing per module at exit.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import Protocol

from qlint.analysis import skipped_dirs
from qlint.analysis.names import content_keys
from qlint.analysis.racy_stats import RACY_NS

# path -> (content key, {question: answer}): what this process found about the module at
# that content.
_KNOWN: dict[str, tuple[tuple, dict[str, bool]]] = {}
_MAX_KNOWN = 200_000
# Questions kept on disk per root; past this many (names of helpers long renamed) the
# answers start again from none.
_MAX_QUESTIONS = 256


class ScanStore(Protocol):
    def get_scan(self, root: str) -> dict | None: ...

    def put_scan(self, root: str, payload: dict) -> None: ...


class _Saved:
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


_ROOTS: dict[str, _Saved] = {}


def answers(path: str, key: tuple | None, questions: list[str]) -> list[bool | None]:
    """What is known of the module at `path` with content `key`: for each question, whether
    its text holds (matches) it, None when unknown."""
    if key is None:
        return [None] * len(questions)
    known = _KNOWN.get(path)
    if known is not None and known[0] == key:
        mine = known[1]
        out = [mine.get(q) for q in questions]
        if None not in out:
            return out
    else:
        out = [None] * len(questions)
    for saved in _saved_for(path):
        entry = saved.entry(path, key)
        if entry is None:
            continue
        no, yes, bits = entry[3], entry[4], saved.bits
        for i, question in enumerate(questions):
            bit = bits.get(question)
            if out[i] is None and bit is not None:
                out[i] = False if (no >> bit) & 1 else True if (yes >> bit) & 1 else None
        if None not in out:
            break
    return out


def unanswered(modules: list[tuple[str, tuple]], questions: list[str]) -> list[tuple[str, tuple, list[bool | None]]]:
    """(path, key, `answers(path, key, questions)`) of the modules (path, content key) of
    `modules` for which some of `questions` is not known to be missed: a scan of a whole
    project (torch: 2,284 modules) asks this of every module, and nearly all answer no to
    everything from what an earlier run saved. Those are told apart here with one lookup and
    one mask per module; any other goes through `answers`, whose results these are."""
    roots = []
    for saved in _ROOTS.values():
        bits = [saved.bits.get(q) for q in questions]
        mask = sum(1 << b for b in bits) if None not in bits else None
        roots.append((saved.base, len(saved.base), saved.files, mask))
    out = []
    for path, key in modules:
        if path not in _KNOWN:
            # The first root holding the path answers first (`_saved_for`'s order): all no there is all no.
            for base, cut, files, mask in roots:
                if path.startswith(base):
                    if mask is not None:
                        entry = files.get(path[cut:])
                        if (
                            type(entry) is list
                            and len(entry) == 5
                            and entry[0] == key[0]
                            and entry[1] == key[1]
                            and type(entry[2]) is str
                            and type(entry[3]) is int
                            and type(entry[4]) is int
                            and entry[3] & mask == mask
                        ):
                            break  # every question answered no
                    out.append((path, key, answers(path, key, questions)))
                    break
            else:
                out.append((path, key, answers(path, key, questions)))
            continue
        known = answers(path, key, questions)
        if any(a is not False for a in known):
            out.append((path, key, known))
    return out


def known_sets(keys: Mapping[str, tuple | None], questions: list[str]) -> list[tuple[set[str], set[str]]]:
    """For each of `questions`: (the modules of `keys` (path -> content key) known to hold it
    at that key, those known not to), as `answers` tells module by module, in one pass over
    what is kept per root. QL201's caller search asks each of ExecuTorch's ~3,800 modules
    whether its text holds a name: asked module by module, the answers cost ~50 ms a name
    of a one-file check."""
    out: list[tuple[set[str], set[str]]] = [(set(), set()) for _ in questions]
    get = keys.get
    for saved in _ROOTS.values():
        bits = [saved.bits.get(q) for q in questions]
        if all(bit is None for bit in bits):
            continue
        valid = [
            (path, entry[3], entry[4])
            for path, entry in saved.by_path().items()
            if (key := get(path)) is not None and entry[0] == key[0] and entry[1] == key[1]
        ]
        for (yes, no), bit in zip(out, bits, strict=True):
            if bit is not None:
                mask = 1 << bit
                no.update(path for path, held_not, _ in valid if held_not & mask)
                yes.update(path for path, _, held in valid if held & mask)
    if _KNOWN:  # what this process found comes first, as `answers` takes it
        for path, (key, mine) in _KNOWN.items():
            if get(path) != key:
                continue
            for (yes, no), question in zip(out, questions, strict=True):
                answer = mine.get(question)
                if answer is not None:
                    (yes if answer else no).add(path)
                    (no if answer else yes).discard(path)
    return out


def saved_holders(root: str, question: str) -> list[tuple[str, int, int]]:
    """(path, mtime_ns, size) of the modules under `root` (as `use_root` was given it) that an
    earlier run found to hold `question` at that stat: an answer one such module decides
    (another module names this one: `project_search.named_in_text`) asks it alone, while it
    keeps that stat, instead of listing and stat'ing every module of the project."""
    saved = _ROOTS.get(root)
    bit = saved.bits.get(question) if saved is not None else None
    if bit is None:
        return []
    mask = 1 << bit
    return [(path, e[0], e[1]) for path, e in saved.by_path().items() if e[4] & mask and not e[3] & mask]


def known_miss(path: str, question: str, key: tuple | None) -> bool:
    """Whether the module at `path`, with content `key`, is known not to hold `question`."""
    return answers(path, key, [question])[0] is False


def note(path: str, question: str, key: tuple | None, answer: bool) -> None:
    """The module at `path`, with content `key`, holds `question` (`answer`) or not."""
    if key is None:
        return
    known = _KNOWN.get(path)
    if known is None or known[0] != key:
        if len(_KNOWN) > _MAX_KNOWN:
            _KNOWN.clear()
        known = _KNOWN[path] = (key, {})
    # Interned: the scans ask each of the project's modules the same few questions, each
    # spelled anew per module (`prefix + name`); kept as is they were ~107,000 strings of a
    # worker's memory on ExecuTorch (7.7 MiB), one object per question when interned.
    known[1][sys.intern(question)] = answer


def note_miss(path: str, question: str, key: tuple | None) -> None:
    note(path, question, key, False)


def _saved_digest(path: str, key: tuple) -> str | None:
    for saved in _saved_for(path):
        entry = saved.entry(path, key)
        if entry is not None and entry[2]:
            return entry[2]
    return None


def _saved_for(path: str) -> list[_Saved]:
    """The roots in use that hold `path`: one, or a few (a package inside its repository,
    which QL201's caller scan reads whole)."""
    return [saved for saved in _ROOTS.values() if path.startswith(saved.base)]


def use_root(root: str, store: ScanStore | None, listings: Callable[[], dict]) -> dict | None:
    """Consult what earlier runs learned about the modules under `root` (read once per
    process and store), and keep what this one learns for `flush`, with the directory
    listings `listings()` gives then. Returns the listings saved (for the caller to use)
    when they were just read, else None. No store (or one kept for this run only): memory only."""
    if store is None or not getattr(store, "keeps_scans", True):
        return None
    known = _ROOTS.get(root)
    if known is not None and known.store is store:
        return None
    payload = store.get_scan(root)
    try:
        saved = _Saved(root, store, payload, listings)
        dirs = payload["dirs"] if payload is not None else None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        saved, dirs = _Saved(root, store, None, listings), None  # a damaged file: as if absent
    if not _ROOTS:
        _flush_at_worker_exit()
    _ROOTS[root] = saved
    content_keys.consult(_saved_digest)
    return dirs if isinstance(dirs, dict) else None


def keeps(root: str) -> bool:
    """Whether what this process finds about the modules under `root` is kept between runs
    (a summary store is in use for it: `use_root`)."""
    return os.path.abspath(root) in _ROOTS


def flush() -> None:
    """Write down what this process learned about each root in use, over what the file holds
    now (a worker beside this one may have written meanwhile). Nothing new: nothing written."""
    for root, saved in _ROOTS.items():
        learned = _learned(saved)
        if not learned[0] and not learned[1]:
            continue
        try:
            current = _Saved(root, saved.store, saved.store.get_scan(root), saved.listings)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            current = _Saved(root, saved.store, None, saved.listings)
        _apply(current, *learned)
        dirs = saved.listings()
        _drop_gone(current.files, dirs)
        payload = {"questions": current.questions, "files": current.files, "dirs": dirs}
        saved.store.put_scan(root, payload)
        current.store = saved.store
        _ROOTS[root] = current


def _flush_at_worker_exit() -> None:
    """In a worker of a parallel run (`qlint.runner`), `flush` once as it exits (the pool's
    shutdown waits for that): after each chunk, the writes cost ~1 s of a cold ExecuTorch run.
    The parent flushes when its summary store closes. A process that has not imported
    `multiprocessing` is no pool's worker: importing it to ask is ~10 ms of a one-file check."""
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is not None and multiprocessing.parent_process() is not None:
        from multiprocessing.util import Finalize

        Finalize(None, flush, exitpriority=10)


def forget() -> None:
    """Drop every answer and root in use (tests; a process that changes stores)."""
    _KNOWN.clear()
    _ROOTS.clear()


def _trusted(key: tuple | None) -> bool:
    return key is not None and key[0] != "overlay" and content_keys.STARTED_NS - key[0] >= RACY_NS


def _learned(saved: _Saved) -> tuple[list, list]:
    """(digests, answers) under the root that this process found and the saved table lacks."""
    digests = [
        (path, key, digest)
        for path, (key, digest) in content_keys.digests_under(saved.base)
        if digest and _trusted(key) and (saved.entry(path, key) or [None] * 3)[2] != digest
    ]
    found = []
    for path, (key, mine) in _KNOWN.items():
        if path.startswith(saved.base) and _trusted(key):
            entry = saved.entry(path, key)
            found += [(path, key, q, a) for q, a in mine.items() if saved.answer(entry, q) is not a]
    return digests, found


def _drop_gone(files: dict, dirs: dict) -> None:
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


def _apply(saved: _Saved, digests: list, found: list) -> None:
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


__all__ = [
    "answers",
    "flush",
    "forget",
    "keeps",
    "known_miss",
    "known_sets",
    "note",
    "note_miss",
    "unanswered",
    "use_root",
]

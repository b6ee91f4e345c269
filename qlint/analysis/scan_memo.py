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

from qlint.analysis.names import content_keys
from qlint.analysis.saved_answers import SavedAnswers, ScanStore, apply_learned, drop_gone, newly_learned

# path -> (content key, {question: answer}): what this process found about the module at
# that content.
_KNOWN: dict[str, tuple[tuple, dict[str, bool]]] = {}
_MAX_KNOWN = 200_000


_ROOTS: dict[str, SavedAnswers] = {}


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


def _saved_for(path: str) -> list[SavedAnswers]:
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
        saved = SavedAnswers(root, store, payload, listings)
        dirs = payload["dirs"] if payload is not None else None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        saved, dirs = SavedAnswers(root, store, None, listings), None  # a damaged file: as if absent
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
        learned = newly_learned(saved, _KNOWN)
        if not learned[0] and not learned[1]:
            continue
        try:
            current = SavedAnswers(root, saved.store, saved.store.get_scan(root), saved.listings)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            current = SavedAnswers(root, saved.store, None, saved.listings)
        apply_learned(current, *learned)
        dirs = saved.listings()
        drop_gone(current.files, dirs)
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

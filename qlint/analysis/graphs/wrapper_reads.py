"""What `wrapper_index` reads of each module of a project to make its index, in one pass over
the files: the stats its record keeps, the `X as Y` renames, the modules that insert or name
one of QL101's default sinks (read as `ModuleText`s), and the import words of the others
(`Chains`, for `candidates` to follow wrapper chains through).

On a large project the pass is cut in two (`read`): a child forked beside the index's child
(`FirstPart`) reads the first half of the files while the index's child reads the others,
and hands it what it found as plain data (`forked_call.spawn`). The index's child set the
pace of a parallel run's start (ExecuTorch: ~0.8 s of CPU, half of it this pass) while the
parent's own work and the words' child (`shared_words`, ~0.45 s) left the other core idle
~0.3 s before a worker could start. The two parts are joined in the files' order: the same
lists, in the same order, as one pass makes, and the same index.
"""

from __future__ import annotations

import contextlib
import marshal
import os
from typing import TYPE_CHECKING

from qlint.analysis import wrapper_record
from qlint.analysis.graphs.chain_modules import Chains
from qlint.analysis.graphs.import_words import import_words
from qlint.analysis.graphs.insertions import calls_inserting
from qlint.analysis.identifier_text import normalised_bytes
from qlint.lazy_patterns import lazy
from qlint.source import DecodeError, decode_source

if TYPE_CHECKING:
    from qlint.analysis.graphs.module_text import ModuleText

# Below this many files one process reads them all: a fork and the hand-over of half the
# reads (ExecuTorch's 3,784 modules: ~10 ms of the reader's CPU to write it, ~14 ms of the
# index child's to take it) would cost more than the core they free (ao's 628 modules: the
# index's child, ~0.15 s of CPU, is as long as the parent's work and the words' child).
_APART_FILES = 1_000
# The share of the files (the first ones) the other child reads.
_CHILD_SHARE = 0.5


def read(files: list[str], part: FirstPart | None = None) -> Reads:
    """What the pass finds in `files` (in the index's child: the first ones as `part` read
    them, where it did)."""
    if part is None:
        return Reads().read(files)
    part.close_writer()  # the copy this process inherited: the pipe ends where the reader's does
    cut = _cut(files)
    rest = Reads().read(files[cut:])
    first = part.taken(files[:cut]) if cut else Reads()
    return (first or Reads().read(files[:cut])).then(rest)


def _cores() -> int:
    """The cores this process may run on."""
    getaffinity = getattr(os, "sched_getaffinity", None)
    return len(getaffinity(0)) if getaffinity is not None else os.cpu_count() or 1


def _cut(files: list[str]) -> int:
    """How many of the files (the first ones) `FirstPart` reads: none of a small project."""
    return int(len(files) * _CHILD_SHARE) if len(files) >= _APART_FILES else 0


class FirstPart:
    """The first files of a large project, read by a child forked beside the index's child
    (`wrapper_index._built_apart`), which takes what it read from a pipe (`taken`). Forked by
    the run's process, which reaps it (`stop`), not by the index's child: the run kills that
    one at once on Ctrl-C, and its own child, orphaned, was left a zombie where no init reaps
    (a container's first process)."""

    def __init__(self):
        self._read_end, self._write_end = os.pipe()
        self._pid: int | None = None

    def start(self, root: str, listed: dict | None) -> None:
        """In the run's process, once the index's child is forked: fork the reader if the
        project under `root` is large (`listed`: the run's listing, as the index's child reads it)."""
        from qlint.analysis import forked_call, held_interrupts
        from qlint.analysis.project_files import disk_files

        held = None
        try:
            files = disk_files(root, True, listed)
            cut = _cut(files) if _cores() > 1 else 0  # one core: the hand-over would only cost
            if cut:
                first = files[:cut]
                held = held_interrupts.hold()  # a Ctrl-C waits until `stop` knows the reader's pid
                self._pid = forked_call.spawn(
                    lambda: (first, Reads().read(first).fields()), self._read_end, self._write_end
                )
        finally:
            self.close_writer()  # before any other child is forked: it would hold the pipe open
            if held is not None:
                held_interrupts.release(held)

    def close_writer(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._write_end)

    def taken(self, first: list[str]) -> Reads | None:
        """In the index's child: what the reader found in `first`, or None (none was forked,
        it failed, or it read other files: the listing changed between the two)."""
        try:
            with os.fdopen(self._read_end, "rb", closefd=False) as pipe:
                data = pipe.read()
            paths, fields = marshal.loads(data)
        except (OSError, EOFError, ValueError, TypeError):
            return None
        return Reads.revived(fields) if paths == first else None

    def stop(self) -> None:
        """In the run's process: the reader killed (if still there) and reaped, the pipe closed."""
        from qlint.analysis import forked_call

        if self._pid is not None:
            forked_call.kill_and_reap(self._pid)
            self._pid = None
        self.close_writer()
        with contextlib.suppress(OSError):
            os.close(self._read_end)


class Reads:
    """What the pass found, each list in the order of the files read."""

    def __init__(self):
        self.stats: dict[str, tuple[int, int] | None] = {}
        self.sinks: list[ModuleText] = []  # the modules that insert
        self.renames: list[tuple[str, str]] = []
        self.chains = Chains()  # the others
        # QL101's: the modules naming one of its default sinks, and the others (chain links).
        self.ql101: list[ModuleText] = []
        self.ql101_words: list[frozenset[bytes]] = []  # their import words (`importing`)
        self.ql101_chains = Chains()

    def read(self, paths: list[str]) -> Reads:
        """Read `paths`, in order."""
        # Imported here: only building the index reads module texts; a one-file check that
        # finds it on disk does not compile their readers' 17 patterns (~2 ms).
        from qlint.analysis.graphs import sink_index
        from qlint.analysis.graphs.module_text import ModuleText

        stats, renames, chains, ql101_chains = self.stats, self.renames, self.chains, self.ql101_chains
        for path in paths:
            try:
                st = os.stat(path)
                with open(path, "rb") as fh:
                    data = normalised_bytes(fh.read())  # as Python reads identifiers (`identifier_text`)
            except OSError:
                stats[path] = None
                continue
            stats[path] = wrapper_record.trusted_stat(st)
            if b" as" in data:
                renames.extend(_renames(data))
            words = import_words(data)
            if sink_index.holds_sink(data):
                with contextlib.suppress(DecodeError):  # not parsed by the search either
                    self.ql101.append(sink_index.sink_module_text(decode_source(data), path))
                    self.ql101_words.append(words)
            else:
                ql101_chains.add(path, data, words)
            if _holds_any(data, wrapper_record.SINK_NEEDLES):
                try:
                    text = decode_source(data)
                except DecodeError:
                    continue
                if calls_inserting(text):
                    self.sinks.append(ModuleText(text, path))
                    continue
            chains.add(path, data, words)
        return self

    def fields(self) -> tuple:
        """What was found, as plain data (`marshal`: handed from the child that read it).
        The import words of a module, in both chains' rows and QL101's (one set), go once, as one string
        (`marshal` wrote each word of a set: ~15 of its ~23 ms on half of ExecuTorch)."""
        sinks, ql101 = [m.state() for m in self.sinks], [m.state() for m in self.ql101]
        spelled: dict[int, int] = {}  # id of a row -> its index in `words`
        words: list[bytes] = []
        rows = []
        for kept in (self.chains.rows, self.ql101_chains.rows, self.ql101_words):
            at = []
            for row in kept:
                i = spelled.get(id(row))
                if i is None:
                    i = spelled[id(row)] = len(words)
                    words.append(b" ".join(row))  # words hold no blank
                at.append(i)
            rows.append(at)
        chains = (self.chains.paths, rows[0]), (self.ql101_chains.paths, rows[1])
        return self.stats, sinks, self.renames, ql101, words, chains, rows[2]

    @classmethod
    def revived(cls, fields: tuple) -> Reads:
        from qlint.analysis.graphs.module_text import ModuleText

        reads = cls()
        reads.stats, sinks, reads.renames, ql101, words, chains, ql101_at = fields
        reads.sinks, reads.ql101 = [ModuleText.revived(s) for s in sinks], [ModuleText.revived(s) for s in ql101]
        rows = [frozenset(spelled.split()) for spelled in words]
        for into, (paths, at) in zip((reads.chains, reads.ql101_chains), chains, strict=True):
            into.paths, into.rows = paths, [rows[i] for i in at]
        reads.ql101_words = [rows[i] for i in ql101_at]
        return reads

    def importing(self, names: set[str]) -> list[str]:
        """The modules whose import statements may spell one of `names` (the words read of
        each, `import_words`): each binds the name, which another module may reach as its
        attribute (a re-export: `mod.name`)."""
        spelled = {name.encode() for name in names}
        out = [m.path for m, words in zip(self.ql101, self.ql101_words, strict=True) if not spelled.isdisjoint(words)]
        chains = self.ql101_chains
        rows = zip(chains.paths, chains.rows, strict=True)
        return out + [path for path, words in rows if not spelled.isdisjoint(words)]

    def then(self, other: Reads) -> Reads:
        """These reads followed by `other`'s (of the files after these)."""
        self.stats.update(other.stats)
        self.sinks += other.sinks
        self.renames += other.renames
        self.chains.extend(other.chains)
        self.ql101 += other.ql101
        self.ql101_words += other.ql101_words
        self.ql101_chains.extend(other.ql101_chains)
        return self


def _holds_any(data: bytes, needles: tuple[bytes, ...]) -> bool:
    for needle in needles:  # noqa: SIM110 - asked of every module: no generator made each time
        if needle in data:
            return True
    return False


# `as` and the name it binds (led by the literal: searched fast); the name before it is read
# backwards from the match.
# An import's new name ends its item (`,`, `)`, `;`, a comment or the row): prose (`... as the
# result`) does not.
_AS = lazy(rb"as[ \t\\\n]+([^\s,();#\\]+)[ \t]*(?=[,);#\r\n\\]|\Z)")
_NAME_FROM_END = lazy(rb"[^\s,();#\\.]+")


def _renames(data: bytes) -> list[tuple[str, str]]:
    """(X, Y) for every `X as Y` in the text (in an import or not: a superset), X being the
    last dotted part before `as`."""
    out = []
    for m in _AS.finditer(data):
        start = m.start()
        if start == 0 or data[start - 1] not in b" \t\\\n":
            continue
        before = data[max(0, start - 200) : start].rstrip(b" \t\\\n")
        # The name ending `before`, read from its end (a search anchored at the end is
        # tried from each of its 200 offsets).
        source = _NAME_FROM_END.match(before[::-1])
        if source is None:
            continue
        try:
            out.append((source.group()[::-1].decode("utf-8"), m.group(1).decode("utf-8")))
        except UnicodeDecodeError:
            continue
    return out

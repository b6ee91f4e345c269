"""What `wrapper_index` reads of each module of a project to make its index, in one pass over
the files: the stats its record keeps, the `X as Y` renames, the modules that insert or name
one of QL101's default sinks (read as `ModuleText`s), and the import words of the others
(`_Chains`, for `candidates` to follow wrapper chains through).

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
import functools
import marshal
import os
import re
from typing import TYPE_CHECKING

from qlint.analysis import wrapper_record
from qlint.analysis.graphs.import_words import import_words
from qlint.analysis.graphs.insertions import calls_inserting
from qlint.analysis.identifier_text import normalised_bytes
from qlint.analysis.names.modules import module_stem
from qlint.analysis.names.project_words import words_of
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
        self.chains = _Chains()  # the others
        # QL101's: the modules naming one of its default sinks, and the others (chain links).
        self.ql101: list[ModuleText] = []
        self.ql101_words: list[frozenset[bytes]] = []  # their import words (`importing`)
        self.ql101_chains = _Chains()

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


class _Chains:
    """The modules that insert nothing, for `candidates` to read those on a wrapper chain:
    a module whose functions hand a parameter on to a wrapper function of another module
    imports it, or the module defining it (`gu.insert_op`), so its import statements name
    one or the other (a package's `__init__.py` by the package's name). Only the words of
    every module's import statements are kept, scanned for the few words each round asks
    (a handful of rounds per run: an inverted index of every module's words cost more to
    make than all the scans); a module they match, whose text holds one of the names found
    so far, is read again."""

    def __init__(self):
        self.paths: list[str] = []
        self.rows: list[frozenset[bytes]] = []  # per module, its import words
        self._asked: set[str] = set()  # the stems and names whose modules were looked up
        # Matched, but held no name found so far: their bytes and words, tested again for
        # new names (ExecuTorch: ~850 modules, a few MiB while the index is made).
        self._matched: dict[int, tuple[bytes, frozenset[bytes]]] = {}
        self._read: set[int] = set()
        # Those that may import a mixin's module (`more`'s `mixins`), none of whose mixins
        # they spelled yet: their texts once read.
        self._through: dict[int, str | None] = {}
        self.count = 0  # modules read again (`more`), for the benchmarks

    def add(self, path: str, data: bytes, words: frozenset[bytes] | None = None) -> None:
        """`words`: `import_words(data)`, when the caller has them already."""
        self.paths.append(path)
        self.rows.append(import_words(data) if words is None else words)

    def extend(self, other: _Chains) -> None:
        """`other`'s modules after these (neither asked `more` yet)."""
        self.paths += other.paths
        self.rows += other.rows

    def more(
        self,
        new: set[str],
        known: set[str],
        defining: list[str],
        methods: dict[str, set[str]] | None = None,
        mixins: list[str] = (),
        bases: set[str] = frozenset(),
    ) -> list[ModuleText]:
        """The modules not read yet that may call one of the `new` names (by name, or as
        `m.name` of one of the modules `defining` them), among those that hold one of the
        `known` names. `methods`: for the names that are classes only, their candidate
        methods; such a class counts in a module that also spells a call of one of them on
        an instance (`.insert`): a module that only lists passes does not build a link.
        `mixins`: the modules of the TestCase mixins among the `new` names, whose subclasses
        may name them through their module (`mixin_sinks.importing_mixin_modules`): those
        modules are read where they spell one of the mixins (`bases`), now or in a later round
        (a stem as common as `utils` lets through modules spelling other names found)."""
        wanted = (new | {module_stem(p) for p in defining}) - self._asked
        self._asked |= wanted
        asked = {w.encode() for w in wanted}
        fresh = {i for i, words in enumerate(self.rows) if not asked.isdisjoint(words)} if asked else set()
        if mixins:
            from qlint.analysis.graphs.mixin_sinks import importing_mixin_modules

            for i in importing_mixin_modules(self.paths, self.rows, set(mixins) - self._asked):
                self._through.setdefault(i, None)
            self._asked.update(mixins)
        fresh -= self._read | self._matched.keys()
        # A module matched before held none of the names known then: only the new ones can
        # be in it now.
        spelled_known, spelled_new = _spelled(known), _spelled(new)
        tests = [(i, spelled_known) for i in sorted(fresh)] + [(i, spelled_new) for i in sorted(self._matched)]
        from qlint.analysis.graphs.module_text import ModuleText  # see `Reads.read`

        out = []
        for i, names in tests:
            path = self.paths[i]
            try:
                matched = self._matched.get(i)
                if matched is None:
                    with open(path, "rb") as fh:
                        data = normalised_bytes(fh.read())  # as `Reads.read` reads it
                    matched = (data, words_of(data))
                text = decode_source(matched[0]) if _names_any(matched, names, methods or {}) else None
            except (OSError, DecodeError):
                continue
            if text is None:
                self._matched[i] = matched  # a name found later may be in it
                continue
            self._matched.pop(i, None)
            self._read.add(i)
            self.count += 1
            out.append(ModuleText(text, path))
        if self._through:
            out += self._spelling(bases)
        return out

    def _spelling(self, bases: set[str]) -> list[ModuleText]:
        """The modules that may import a mixin's module (`more`'s `mixins`), not read yet, that
        spell one of the mixins (`bases`) as a word, read; the others kept for a later round.
        Searched for the few mixins' names (`spells_word`), not split into words: ao's
        `torchao/testing/pt2e/_xnnpack_quantizer_utils.py` (40 KB), split as `more` splits, cost
        its index 9 M instructions."""
        from qlint.analysis.graphs.module_text import ModuleText
        from qlint.analysis.word_search import spells_word

        out = []
        for i in sorted(self._through):
            text = self._through.pop(i)
            if i in self._read:
                continue
            if text is None:
                try:
                    with open(self.paths[i], "rb") as fh:
                        text = decode_source(fh.read())
                except (OSError, DecodeError):
                    continue
            if not any(spells_word(text, name) for name in bases):
                self._through[i] = text  # a mixin found later may be in it
                continue
            self._matched.pop(i, None)
            self._read.add(i)
            self.count += 1
            out.append(ModuleText(text, self.paths[i]))
        return out


def _spelled(names: set[str]) -> dict[bytes, str]:
    """The names by their bytes, encoded once per round rather than once per module."""
    return {name.encode(): name for name in names}


def _names_any(matched: tuple[bytes, frozenset[bytes]], names: dict[bytes, str], methods: dict[str, set[str]]) -> bool:
    """Whether the text (its bytes and its words: the maximal runs of ASCII identifier
    characters, so a name is one of them exactly where `references.spells` finds it) holds
    one of the names as a whole identifier; a class of `methods` only with an attribute
    named like one of its methods. The words are split once per module, not searched
    for each name of each round."""
    data, words = matched
    for spelled in words.intersection(names):
        name = names[spelled]
        if name not in methods or any(m.encode() in words and _attribute(data, m) for m in methods[name]):
            return True
    return False


def _attribute(data: bytes, name: str) -> bool:
    """Whether the text spells `.name` (blanks, continuations or comments may follow the dot)."""
    return name.encode() in data and _ATTRIBUTE_SPELLING(name).search(data) is not None


@functools.lru_cache(maxsize=1024)
def _ATTRIBUTE_SPELLING(name: str) -> re.Pattern[bytes]:
    # A comment runs to its row's end (possessive), as in packet_text._LINKS: else a row of
    # `#`s after a dot backtracks exponentially.
    return re.compile(rb"\.(?:\s|\\|#[^\n]*+)*+" + re.escape(name.encode()) + rb"(?!\w)")


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

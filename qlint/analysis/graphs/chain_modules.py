"""The modules of a project that insert nothing, as the wrapper index's pass keeps them
(`Chains`): only the words of their import statements, for `candidates` to find those on a
wrapper chain (a module handing a parameter on to another module's wrapper imports it, or the
module defining it), and read again only when they may spell a name found so far.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from qlint.analysis.graphs.import_words import import_words
from qlint.analysis.identifier_text import normalised_bytes
from qlint.analysis.names.modules import module_stem
from qlint.analysis.names.project_words import words_of
from qlint.source import DecodeError, decode_source

if TYPE_CHECKING:
    from qlint.analysis.graphs.module_text import ModuleText


class Chains:
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

    def extend(self, other: Chains) -> None:
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

"""An inserting module's text as the wrapper index reads it (`wrapper_candidates`), without
parsing: its `def`/`class` spans, each function's parameters, the insertions and the calls it
spans and the names they pass as whole arguments.

Strings and comments are blanked first (`masked_text`), so a `def` row in a docstring is none
and brackets pair as the parser pairs them. A function spans its rows up to the next
`def`/`class` row indented no deeper: a statement after it at the module's level (not a
`def`/`class`) only widens the span, which keeps the answer a superset.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

from qlint.analysis.graphs.attribute_text import AFTER_DOT
from qlint.analysis.graphs.masked_text import BRACKETS, masked, top_level
from qlint.analysis.names.text_imports import text_imports

# A `def`/`class` header, searched from its keyword (a pattern led by `^`, or by the line
# break before, is tried at every row or offset of the text: 3x slower); what leads it on
# its row is checked apart.
_HEADER = re.compile(r"(def|class)[ \t]+(\w+)")
_INDENT = re.compile(r"([ \t]*)(?:async[ \t]+)?")
# Led by its words, not by `\b` (same reason); the character before is checked apart.
_INSERT = re.compile(r"(?:call_function|create_node)\b")
_PARAM = re.compile(r"^\s*\**\s*(\w+)")
# A whole argument that is a name, maybe a keyword's value, starred or in brackets (`(op)`).
_BARE = re.compile(r"^\s*(?:\*{1,2}\s*)?(?:\w+\s*=\s*)?[(\s]*(\w+)[)\s]*$")
_DEFINED = re.compile(r"(?:^|\W)(?:def|class)[ \t]+$")
_ATTRIBUTE = re.compile(r"\.\s*$")
_OWN = re.compile(r"(?<![\w.])(?:self|cls)\s*\.\s*$")
# The dotted name before a called attribute (`gu.`, `pkg . graph_utils .`), from its head;
# blanks and continuations may stand around each dot (comments are blanked already).
_HEAD = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?:[\s\\]*\.[\s\\]*[A-Za-z_]\w*)*[\s\\]*\.[\s\\]*\Z")
# Relative imports resolve from a module this deep (only the names they bind are read).
_ANY_MODULE = ".".join(["_"] * 32)
_KEYWORD = re.compile(r"^\s*(\w+)\s*=(?!=)")
# A call's callee name (its last dotted part), then its bracket, maybe past blanks and `)`.
_CALL = re.compile(r"([A-Za-z_]\w*)[\s\\)]*\(")
_WORDS = re.compile(r"\w+")
# An ASCII text's other characters as blanks: its split gives the same runs, found faster
# than by a pattern (the inserting modules' words, read once per index: ExecuTorch ~3 MiB).
_ASCII_BLANKS = str.maketrans({c: " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")})

Span = tuple[str, str, int, int, int, tuple[int, ...]]  # kind, name, start, end, header's end, outer
Sites = Callable[[str], list[tuple[int, "frozenset[str] | None"]]]


class ModuleText:
    """An inserting module's text (strings and comments blanked), with its `def`/`class` spans."""

    def __init__(self, text: str, path: str = "", sites: Sites | None = None):
        """`sites`: where the module's own sinks are, read from its masked text (default: its
        insertions), each with the names it passes them (None: any parameter may reach it)."""
        self.path = path
        self.masked = masked(text)
        self._params: dict[int, frozenset[str]] = {}
        self._imported: frozenset[str] | None = None  # the names its imports bind, when asked
        self._by_name: dict[tuple[str, int | None], list[int]] | None = None  # `bodies_of`
        headers = _headers(self.masked)
        ends = [len(self.masked)] * len(headers)
        open_: list[tuple[int, int]] = []  # (indent, index) of the headers still open
        outers: list[tuple[int, ...]] = []
        for i, (indent, _, _, start, _) in enumerate(headers):
            while open_ and open_[-1][0] >= indent:
                ends[open_.pop()[1]] = start
            outers.append(tuple(j for _, j in open_))
            open_.append((indent, i))
        self.spans: list[Span] = [
            (kind, name, start, ends[i], end, outers[i]) for i, (_, kind, name, start, end) in enumerate(headers)
        ]
        self.bases = {i: self._between_brackets(h[4]) or "" for i, h in enumerate(headers) if h[1] == "class"}
        self.inserting = self._insertions() if sites is None else sites(self.masked)

    def state(self) -> tuple:
        """What `__init__` read, as plain data (`marshal`: `wrapper_reads` hands it from the
        child that read the module); `revived` makes the same module text of it."""
        return self.path, self.masked, self.spans, self.bases, self.inserting

    @classmethod
    def revived(cls, state: tuple) -> ModuleText:
        module = cls.__new__(cls)
        module.path, module.masked, module.spans, module.bases, module.inserting = state
        module._params, module._imported, module._by_name = {}, None, None
        return module

    def _insertions(self) -> list[tuple[int, frozenset[str] | None]]:
        """(offset, the target passed) of every insertion of the module."""
        text = self.masked
        return [
            (m.start(), self._target(m.end(), m.group()))
            for m in _INSERT.finditer(text)
            if not _word_before(text, m.start()) and AFTER_DOT.search(text, max(0, m.start() - 200), m.start())
        ]

    def params(self, end: int) -> frozenset[str]:
        """The parameter names of the `def` whose name ends at `end` (read when asked)."""
        known = self._params.get(end)
        if known is None:
            known = self._params[end] = self._read_params(end)
        return known

    def _read_params(self, end: int) -> frozenset[str]:
        inside = self._between_brackets(end)
        if inside is None:
            return frozenset()
        return frozenset(m.group(1) for piece in top_level(inside) if (m := _PARAM.match(piece)))

    def _between_brackets(self, end: int) -> str | None:
        """The text inside the brackets opening right after `end` (past blanks and closing
        brackets, as in `(f)(x)`), None when none opens there."""
        i = end
        text = self.masked
        while i < len(text) and text[i] in " \t\r\n\\)":
            i += 1
        if i >= len(text) or text[i] != "(":
            return None
        depth = 0
        for m in BRACKETS.finditer(text, i):
            depth += 1 if m.group() in "([{" else -1
            if depth == 0:
                return text[i + 1 : m.start()]
        return text[i + 1 :]

    def _arguments(self, end: int) -> frozenset[str] | None:
        """Names passed as whole arguments by the call whose callee ends at `end` (None: no
        call to read there, any parameter may reach it)."""
        inside = self._between_brackets(end)
        if inside is None:
            return None
        return frozenset(m.group(1) for piece in top_level(inside) if (m := _BARE.match(piece)))

    def _target(self, end: int, attr: str) -> frozenset[str] | None:
        """The name an insertion's call passes as its target (`x.call_function(op, ...)`,
        `x.create_node(kind, op, ...)`, or by keyword), if a name; None: unknown (no call to
        read, or a `*args` before it), any parameter may be it."""
        inside = self._between_brackets(end)
        if inside is None:
            return None
        keyword, position = ("the_function", 0) if attr == "call_function" else ("target", 1)
        positional = []
        for piece in top_level(inside):
            named = _KEYWORD.match(piece)
            if named is not None:
                if named.group(1) == keyword:
                    return _bare(piece)
                continue
            if piece.lstrip().startswith("*"):
                return None if not piece.lstrip().startswith("**") else frozenset()
            positional.append(piece)
        return _bare(positional[position]) if len(positional) > position else frozenset()

    def calls_of(
        self, patterns: list[tuple[str, re.Pattern]], holders: dict[str, set[str]] | None = None
    ) -> list[tuple[int, frozenset[str] | None]]:
        """(offset, whole arguments) of every call of one of the names (`f(...)`, `self.f(...)`,
        `m.f(...)` with `m` imported, and `x.f(...)` where `f` is a method of one of the
        classes `holders` gives for it and the module spells that class: `x` may be an
        instance the module builds, `Builder(g).f(...)`, `self.builder.f(...)`)."""
        out = []
        text = self.masked
        words = self.words
        for name, pattern in patterns:
            if name not in words:
                continue  # a call's name is a whole word (one set lookup, not a search of the text)
            for m in pattern.finditer(text):
                before = text[max(0, m.start() - 12) : m.start()]
                if before[-1:].isalnum() or before.endswith("_") or _DEFINED.search(before):
                    continue  # another name, or the `def`/`class` row naming it
                if (
                    _ATTRIBUTE.search(before)
                    and not _OWN.search(before)
                    and not self._of_import(m.start())
                    and not self._spells_any((holders or {}).get(name, ()))
                ):
                    continue  # `x.f(...)`, `super().f(...)`: the search resolves no helper there
                out.append((m.start(), self._arguments(m.end())))
        return out

    def bodies_of(self, name: str, of_class: int | None = None) -> list[int]:
        """The spans (indices) of the module-level function `name`, or of the methods of the
        module-level class `name`; with `of_class`, of that class's methods named `name`."""
        if self._by_name is None:
            by_name: dict[tuple[str, int | None], list[int]] = {}
            methods: dict[int, list[int]] = {}
            for i, (kind, spelled, *_, outer) in enumerate(self.spans):
                if not outer:
                    by_name.setdefault((spelled, None), [i] if kind == "def" else methods.setdefault(i, []))
                elif kind == "def" and self.spans[outer[-1]][0] == "class" and len(outer) == 1:
                    methods.setdefault(outer[0], []).append(i)
                    by_name.setdefault((spelled, outer[0]), []).append(i)
            self._by_name = by_name
        return list(self._by_name.get((name, of_class), ()))

    def functions(self) -> list[int]:
        """The spans of the module's functions and methods (at any depth)."""
        return [i for i, span in enumerate(self.spans) if span[0] == "def"]

    def owner(self, body: int) -> int | None:
        """The class a method's span lies in directly (None: no method)."""
        outer = self.spans[body][5]
        return outer[-1] if outer and self.spans[outer[-1]][0] == "class" else None

    def calls_within(self, body: int) -> list[tuple[str, str]]:
        """(head, name) of every call in a function's span that passes one of its parameters
        as a whole argument (or arguments that cannot be read): `f(op)` is ("", "f"),
        `gu.f(op)` ("gu", "f"), `self.f(op)` ("self", "f"), `x.f(op)` on another receiver
        ("?", "f"). A nested function's calls count for the one around it (a superset)."""
        _, _, _, end, header, _ = self.spans[body]
        params = self.params(header)
        found: list[tuple[str, str]] = []
        if not params:
            return found
        text = self.masked
        for m in _CALL.finditer(text, header, end):
            if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"):
                continue
            passed = self._arguments(m.end(1))
            if passed is not None and not passed & params:
                continue
            head = ""
            if _ATTRIBUTE.search(text, max(0, m.start() - 12), m.start()):
                dotted = _HEAD.search(text, max(0, m.start() - 300), m.start())
                head = dotted.group(1) if dotted is not None and dotted.group(0).count(".") == 1 else "?"
            found.append((head, m.group(1)))
        return found

    def spells(self, name: str) -> bool:
        return self._spells_any((name,))

    def _spells_any(self, names: Iterable[str]) -> bool:
        words = self.words
        return any(name in words for name in names)

    @functools.cached_property
    def base_words(self) -> dict[int, frozenset[str]]:
        """The words of each class's bases (`bases`, by the class's span): a class name made of
        word characters only is named there (`\\b` on both sides) exactly when it is one of
        them (`candidates`: one set intersection per class and round, not a test of every
        class found so far)."""
        return {i: frozenset(_WORDS.findall(bases)) for i, bases in self.bases.items()}

    @functools.cached_property
    def words(self) -> frozenset[str]:
        """The maximal runs of word characters of the masked text: a name is spelled (as a
        whole identifier) exactly where it is one of them."""
        text = self.masked
        if text.isascii():
            return frozenset(text.translate(_ASCII_BLANKS).split())
        return frozenset(_WORDS.findall(text))

    def _of_import(self, at: int) -> bool:
        """Whether the dotted name ending at `at` (`gu.` of `gu.f`, `pkg.graph_utils.` of
        `pkg.graph_utils.f`) starts at a name the module imports."""
        head = _HEAD.search(self.masked, max(0, at - 300), at)
        if head is None:
            return False
        if self._imported is None:
            self._imported = frozenset(name for name, _ in text_imports(self.masked, _ANY_MODULE, "m.py"))
        return head.group(1) in self._imported


def _headers(text: str) -> list[tuple[int, str, str, int, int]]:
    """(indent, kind, name, the row's start, the name's end) of every `def`/`class` that begins
    its row (after blanks, maybe `async`): what `^([ \\t]*)(?:async[ \\t]+)?(def|class)[ \\t]+(\\w+)`
    finds with `re.M`."""
    out = []
    for m in _HEADER.finditer(text):
        start = m.start()
        row = text.rfind("\n", 0, start) + 1
        lead = _INDENT.match(text, row, start)
        if lead is None or lead.end() != start:
            continue  # not the first word of its row
        out.append((len(lead.group(1).expandtabs(8)), m.group(1), m.group(2), row, m.end()))
    return out


def _word_before(text: str, at: int) -> bool:
    """Whether a word character (as `\\w` reads one) stands right before `at`."""
    if not at:
        return False
    c = text[at - 1]
    return c.isalnum() or c == "_"


def _bare(piece: str) -> frozenset[str]:
    found = _BARE.match(piece)
    return frozenset((found.group(1),)) if found else frozenset()

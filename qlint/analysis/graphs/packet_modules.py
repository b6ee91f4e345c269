"""The modules of the project that QL101/QL102's packet gate reads (`packet_kinds`): what
each binds at module level, read from its text (never parsed) once per content and only as
far as the names asked about need, and which of them are kept between questions.
"""

from __future__ import annotations

import copy
import keyword

from qlint.analysis.graphs import file_keys, kept_answers
from qlint.analysis.graphs.packet_text import ROOT_WORDS, WORD, identifiers, is_word, torch_names
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.text_imports import import_spans, text_imports
from qlint.lazy_patterns import lazy
from qlint.short_digests import content_sha256_hex
from qlint.source import DecodeError, decode_source

__all__ = ["ModuleText", "read_module"]


class ModuleText:
    """What a module's text binds at module level, read once per content, and only as far as
    the names asked about need (most are functions and classes it defines)."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text = identifiers(text)
        self.spans = import_spans(text) if "import" in text else []
        self.torch = torch_names(text, self.spans)
        self.stars = "*" in text and bool(self.spans)
        self._imports: dict[str, str] | None = None
        self._import_text: str | None = None
        self._bindings: dict[str, list[tuple[int, int]]] | None = None
        # Whether the text closes a target list on a row of its own (`_CLOSED_TARGETS`): a
        # search of the whole text, which every name asked of the module would repeat.
        self._closed: bool | None = None
        # Per statement read: the names it uses that the module binds or imports (`words`).
        self._words: dict[tuple[int, int], list[str]] = {}

    def imported(self, name: str) -> str | None:
        """The dotted name `name` is imported as (an import statement spells it, or None)."""
        if self._imports is None:
            if self._import_text is None:
                self._import_text = "\n".join(self.text[start:end] for start, end in self.spans)
            if name not in self._import_text:
                return None
            self._imports = {}
            module = module_name_for(self.path) if _RELATIVE.search(self.text) else None
            for start, end in self.spans:
                self._imports.update(text_imports(self.text[start:end], module, self.path))
        return self._imports.get(name)

    def bindings(self, name: str) -> list[tuple[int, int]]:
        """The module-level statements that may bind `name` (read once a name is assigned)."""
        if self._bindings is None:
            if self._closed is None:
                self._closed = _CLOSED_TARGETS.search(self.text) is not None
            if not self._closed and not may_be_assigned(self.text, name):
                return []
            self._bindings = {}
            _statements(self.text, self._bindings)
        return self._bindings.get(name, [])

    def words(self, span: tuple[int, int]) -> list[str]:
        """The names the statement at `span` uses (not the torch names: anchors already) that
        the module binds or imports, in the order written: read once per statement, which
        binds several names (torch's _dynamo/utils.py: one of 170 KB, read for each name)."""
        words = self._words.get(span)
        if words is None:
            torch = self.torch
            words = self._words[span] = [
                word
                for word in dict.fromkeys(WORD.findall(self.text, span[0], span[1]))
                if word not in torch and word not in ROOT_WORDS and not keyword.iskeyword(word)
                if self.bindings(word) or self.imported(word) is not None
            ]
        return words

    def every_name(self) -> set[str]:
        """Every name the module may bind at module level or import (a star import's reach)."""
        bindings: dict[str, list[tuple[int, int]]] = {}
        _statements(self.text, bindings)
        imports: dict[str, str] = {}
        for start, end in self.spans:
            imports.update(text_imports(self.text[start:end], None, self.path))
        return {*bindings, *imports, *self.torch}

    def defines(self, name: str) -> bool:
        """`def name` or `class name` at column 0."""
        text = self.text
        for word in ("def", "class"):
            spelled = f"{word} {name}"
            at = text.find(spelled)
            while at >= 0:
                end = at + len(spelled)
                row = text.rfind("\n", 0, at) + 1
                if text[row:at] in ("", "async ") and not (end < len(text) and is_word(text[end])):
                    return True
                at = text.find(spelled, end)
        return False


def may_be_assigned(text: str, name: str) -> bool:
    """Whether `name` may be assigned in the text: followed on its row by an `=` (not `==`),
    or after `as`. (Or the text has a target list closed on a row of its own, `(a,\n b) = x`,
    which `ModuleText.bindings` asks once per text: `_CLOSED_TARGETS`.)"""
    size = len(name)
    at = text.find(name)
    while at >= 0:
        end = at + size
        alone = not (at and is_word(text[at - 1])) and not (end < len(text) and is_word(text[end]))
        if alone and (_EQUALS_AFTER.match(text, end) is not None or _AS_BEFORE.search(text, max(0, at - 16), at)):
            return True
        at = text.find(name, end)
    return False


_EQUALS_AFTER = lazy(r"[^\n]*?(?<![=!<>])=(?!=)")
_AS_BEFORE = lazy(r"\bas[ \t]+\Z")
# Led by the newline (a literal the search skips to): a first row cannot close a bracket.
_CLOSED_TARGETS = lazy(r"\n[ \t]*[)\]][ \t]*=(?!=)")


# A row starting at column 0 (led by the newline: a literal the search skips to).
_RELATIVE = lazy(r"from[ \t]+\.")
_HEAD = lazy(r"\n(?:[^\W\d]|@)")
_DEF = lazy(r"(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)")
_ROW_TARGETS = lazy(
    r"\n[ \t]*((?:[(\[]?[ \t]*[^\W\d][\w.]*(?:[ \t]*,[ \t]*[^\W\d][\w.]*)*[ \t]*,?[ \t]*[)\]]?"
    r"[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*)+)",
)
_AS_TARGET = lazy(r"\bas[ \t]+([^\W\d]\w*)")
_NAME = lazy(r"[^\W\d]\w*")


def _statements(text: str, bindings: dict[str, list[tuple[int, int]]]) -> None:
    r"""Split the module-level code into statements and record the names each binds (every
    name assigned on any of its rows: a superset). A statement starts at a row that starts
    at column 0; a row while brackets are still open, after a row ending in `\`, or one that
    binds nothing (an element of a literal written at column 0, as far as this reading can
    tell) continues the one before. Brackets are counted in strings and comments too: an
    extra opening one joins statements, which only adds names."""
    starts = [m.start() + 1 for m in _HEAD.finditer(text)]
    if text[:1].isalpha() or text[:1] in "_@":
        starts.insert(0, 0)
    pieces: list[list] = []  # [start, end, names]
    depth = 0
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        piece = text[start:end]
        first = _NAME.match(text, start)
        head = first.group() if first is not None else "@"
        if head in ("def", "class", "@", "import", "from") or (head == "async" and _DEF.match(text, start)):
            names = None  # binds no name whose value this reading follows
        elif "=" not in piece and " as " not in piece:
            names = set()
        else:
            names = {
                n
                for target_row in _assigning_rows(piece)
                for target in target_row.split("=")[:-1]
                for n in _NAME.findall(target.split(":")[0])  # not the annotation's names
            }
            names.update(_AS_TARGET.findall(piece))
        opened = depth > 0 or text[start - 2 : start] == "\\\n"
        if pieces and (opened or (names is not None and not names)):
            previous = pieces[-1]
            previous[1] = end
            if names:
                previous[2] = (previous[2] or set()) | names
        else:
            pieces.append([start, end, names])
            depth = 0
        depth += piece.count("(") + piece.count("[") + piece.count("{")
        depth -= piece.count(")") + piece.count("]") + piece.count("}")
    for start, end, names in pieces:
        for name in names or ():
            bindings.setdefault(name, []).append((start, end))


def _assigning_rows(piece: str) -> list[str]:
    """The assignment targets (`_ROW_TARGETS`' group) of the rows of `piece` that start with
    some. A match holds no newline but the one before its row, so rows are matched one by
    one, and only those spelling an `=`: the pattern backtracks for ages on a row it cannot
    match (`        None,` in a dict literal: ~0.4 ms), and most rows of a module-level
    literal are such rows (ExecuTorch's QNN quantizer: ~5 ms of a one-file check)."""
    out = []
    for row in piece.split("\n"):
        if "=" in row:
            m = _ROW_TARGETS.match("\n" + row)
            if m is not None:
                out.append(m.group(1))
    return out


def read_module(project, path: str, deps: list) -> ModuleText:
    """The module at `path`, read for its present content (its key is appended to `deps`)."""
    key = file_keys.content_key(project, path)
    deps.append((path, key))
    known = _MODULES.pop(path, None)
    if known is None or known[0] != key:
        while len(_MODULES) >= _KEPT_MODULES:
            least = next(iter(_MODULES))  # the least recently read
            _set_aside(least, _MODULES.pop(least))
        shell = _SHELLS.pop(path, None)
        if shell is not None and shell[0] == key:
            module = shell[1]  # what was read of it before, its text read again
            module.text = identifiers(_text(project, path, key))
        else:
            module = ModuleText(path, _text(project, path, key))
        known = (key, module)
    _MODULES[path] = known  # last: the most recently read
    return known[1]


def _set_aside(path: str, known: tuple[tuple | None, ModuleText]) -> None:
    """Keep what was read of a module whose text is let go (`_SHELLS`): a copy, as a reading
    under way may still hold the module, and read its text."""
    while len(_SHELLS) >= _KEPT_SHELLS:
        del _SHELLS[next(iter(_SHELLS))]
    shell = copy.copy(known[1])
    shell.text = None  # read again, for the same key, when the module is asked again
    _SHELLS[path] = (known[0], shell)


def _text(project, path: str, key: tuple | None) -> str:
    """The module's text. While answers are kept (`kept_answers`), a file's digest is taken
    from the very bytes the text is decoded from: the answer is written down with it."""
    if key is None or key[0] == "overlay" or not kept_answers.keeping():
        return project.text(path) or ""
    try:
        with open(path, "rb") as fh:  # as `ProjectIndex.text` reads it
            data = fh.read()
    except OSError:
        return ""
    file_keys.remember_digest(path, key, content_sha256_hex(data))
    try:
        return decode_source(data)
    except DecodeError:
        return ""


# The modules read most recently, least recent first. What a name of a module is, is kept in
# `packet_kinds._KINDS` for the run; the text a module's next name is read from is kept for
# these only: kept for every module read, a worker held ~9 MiB of torch's texts after 700 of
# its files. 64: read exactly, torch's import cycles take ~540 modules (~420 taken for packets
# at their first repeat), and 32 rebuilt 870 of them (the gate's CPU in a torch -j1 run 0.97 ->
# 0.85 s, peak RSS +2 MiB).
_MODULES: dict[str, tuple[tuple | None, ModuleText]] = {}
_KEPT_MODULES = 64
# The modules let go of `_MODULES`, least recent first, without their texts: what was read of
# them (import statements, torch imports, the statements binding each name, the names each
# statement uses) is kept with the key it was read under, and a module asked again for the
# same key reads only its text again. Torch's import cycles ask 543 modules 785 times, and the
# 242 rebuilt split their texts into statements again: kept so, the gate's CPU in a torch -j1
# QL101/QL102 run fell by a fifth (1.28 -> 1.00 s) for +2 MiB of peak RSS; keeping every text
# instead saved a quarter for +13 MiB.
_SHELLS: dict[str, tuple[tuple | None, ModuleText]] = {}
_KEPT_SHELLS = 4096

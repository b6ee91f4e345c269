"""Whether a module's text can hand QL101/QL102 an `OpOverloadPacket`: their exact gate.

Both rules report only where `Resolver.op_ref` of an expression of the checked module is a
packet: its qualified name is `torch.ops.<ns>.<op>` or `<edge dialect>.<ns>.<op>`, with no
overload after it. That name is built from the chain as written (`torch.ops.aten.relu`,
`exir_ops.edge.aten.relu`), from the module's bindings of a namespace or of an ops root
(`aten = torch.ops.aten`, `from torch.ops import aten as A`, `self.ns = torch.ops.aten`,
`with ... as A`, `A := ...`), and, through `from <module> import name` or a star import,
from what another module of the project binds `name` to (a packet, a collection holding
one, a namespace, a root; directly or through its own imports). Nothing else makes a packet:
a call's result, a subscript, `getattr(torch.ops.aten, name)`, `x.overloadpacket` and
parameters are never resolved to one, and neither is anything in a string or a comment.

So a module can give the rules a packet only if its code (outside comments and strings, as
far as a row tells: `_in_code`) does one of these:
- spells a packet: an ops root (`ops`, `edge`, or a name bound to one) followed by
  `.<ns>.<op>`, or a namespace (a name bound to one) followed by `.<op>`, and then neither
  by another `.<name>` (an overload, or no op at all) nor by a call on the same row (an
  eager call's value is what it returns);
- binds a root or namespace where this reading cannot tell to which name (a statement
  continued from an earlier row): it is let through;
- imports from a project module a name that module binds to one of those
  (`packet_imports`).
"""

from __future__ import annotations

import re
from bisect import bisect_right

from qlint.analysis.identifier_text import normalised
from qlint.analysis.names.text_imports import import_spans, text_imports
from qlint.lazy_patterns import lazy

_TORCH_OPS = "torch.ops"
# The same object: torch binds `torch.ops` by importing `ops` from `torch._ops`.
_TORCH_PRIVATE_OPS = "torch._ops.ops"
_EDGE = "executorch.exir.dialects._ops.ops.edge"
# Under torch.ops but not packets (`op_refs.parse_op`).
_NOT_PACKET_NAMESPACES = frozenset({"higher_order"})
# What a name can be bound to, as far as packets go.
PACKET, NAMESPACE, ROOT = "packet", "namespace", "root"
ROOT_WORDS = {"ops": ROOT, "edge": ROOT}

# What may stand between the links of a dotted chain: blanks, line continuations, newlines
# (inside brackets). A use of an anchor word is the word, then up to three links. A comment
# runs to its row's end (possessive): a comment that could end anywhere lets a banner row of
# `#`s split into exponentially many comments (a check of one 1,900-line pass never ended).
_LINKS = r"(?P<links>(?:(?:[\s\\]|#[^\n]*+)*+\.(?:[\s\\]|#[^\n]*+)*+[^\W\d]\w*+){0,3})"
_COMMENT = lazy(r"#[^\n]*")
_LINK_NAME = lazy(r"[^\W\d]\w*")
_CALLED = lazy(r"[ \t]*\(")
# The chain is assigned to (`ops = _Ops()`, `self.ns: T = ...`), not read.
_STORED = lazy(r"[ \t]*(?::[^=\n]*)?=(?!=)")
_AS = lazy(r"[ \t]+as[ \t]+([^\W\d]\w*)")
# The dotted chain written before the anchor (`torch.` of `torch.ops`): not the statement.
_CHAIN_BEFORE = lazy(r"(?:[^\W\d]\w*[ \t]*\.[ \t]*)*$")
# An assignment's `=` (not `==`, `!=`, `<=`, `>=`, `:=`, `+=`, ...).
_ASSIGN = lazy(r"(?<![=!<>:+\-*/%&|^@])=(?!=)")
_WALRUS = lazy(r"([^\W\d]\w*)[ \t]*:=[\s(]*$")
_TARGET = lazy(r"[^\W\d][\w.]*")
WORD = lazy(r"(?<![.\w])[^\W\d]\w*")
# What follows a use of an anchor word: the word ends there, then its links.
_AFTER_WORD = lazy(r"(?![\w])" + _LINKS)


def _uses_of(word: str, text: str, start: int, end: int):
    """(offset, match of `_AFTER_WORD`) of each use of `word` in `text[start:end]`, as the
    pattern `word + _AFTER_WORD` would find them one after the other (`finditer`): one
    pattern compiled once, not one per anchor word (each ~0.1-0.4 ms to compile, in every
    process: a one-file check asks for two to five words)."""
    size = len(word)
    at = text.find(word, start, end)
    while at >= 0:
        # The tail of a longer name (`_ops` of `torch._ops.ops.aten`) is no use of the word,
        # and its links must not hide the use they hold (`ops`, whose `.aten` binds `aten`).
        m = None if at and is_word(text[at - 1]) else _AFTER_WORD.match(text, at + size, end)
        if m is None:
            at = text.find(word, at + 1, end)
            continue
        yield at, m
        at = text.find(word, m.end(), end)


def _in_code(text: str, at: int) -> bool:
    """Whether offset `at` is code, not a comment or a string, as far as its row tells: a `#`
    or an open quote before it on the row. A row that may start inside a string (a triple
    quote before it on the row, a `\\` ending the row before) counts as code, as a row
    inside a docstring may: the answer is False only where the row shows it."""
    row = text.rfind("\n", 0, at) + 1
    prefix = text[row:at]
    if "#" not in prefix and "'" not in prefix and '"' not in prefix:
        return True
    if '"""' in prefix or "'''" in prefix or text.endswith("\\\n", 0, row) or text.endswith("\\\r\n", 0, row):
        return True
    quote = None
    i, size = 0, len(prefix)
    while i < size:
        c = prefix[i]
        if quote is not None:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#":
            return False
        i += 1
    return quote is None


def import_kind(full: str) -> str | None:
    """What an imported dotted name under an ops root is (None: not under one)."""
    for root in (_TORCH_OPS, _TORCH_PRIVATE_OPS, _EDGE):
        if full == root:
            return ROOT
        if full.startswith(root + "."):
            parts = full[len(root) + 1 :].split(".")
            if len(parts) == 1:
                return NAMESPACE
            if len(parts) == 2 and parts[0] not in _NOT_PACKET_NAMESPACES:
                return PACKET
            return ""  # an overload, or nothing
    return None


def torch_names(text: str, spans: list[tuple[int, int]] | None = None) -> dict[str, str]:
    """The names the text imports from under an ops root, with their kind: read from the
    import statements that spell `ops` or `edge` (`spans`: the text's, when known)."""
    out: dict[str, str] = {}
    if "import" not in text or ("ops" not in text and "edge" not in text):
        return out
    for start, end in import_spans(text) if spans is None else spans:
        statement = text[start:end]
        if "ops" in statement or "edge" in statement:
            for local, full in text_imports(statement, None, ""):
                kind = import_kind(full)
                if kind:
                    out[local] = kind
    return out


def identifiers(text: str) -> str:
    r"""The text as Python reads its rows and identifiers, as every text reader reads it
    (`identifier_text.normalised`: a full-width `a` is `a`, a lone `\r` ends a row), with each
    `\r\n` made `\n` too."""
    text = normalised(text)
    # Deliberately one character shorter per `\r\n`, unlike `normalised`: the gate answers yes
    # or no and keeps offsets into this text only (`packet_modules.ModuleText`), never into the
    # raw one, and its row patterns are written for `\n` alone (`packet_modules._statements`
    # reads a continued row as one ending in `\\\n`, `_assigning_rows` splits at `\n`).
    return text.replace("\r\n", "\n") if "\r" in text else text


# -- one text --------------------------------------------------------------------------------


class Reading:
    """A text as the gate reads it: its import statements, found once (only when a use of a
    root or namespace needs to know whether it stands in one)."""

    def __init__(self, text: str, start: int = 0, end: int | None = None, spans=None):
        self.text = text
        self.start, self.end = start, len(text) if end is None else end
        self._spans = spans

    @property
    def spans(self) -> list[tuple[int, int]]:
        if self._spans is None:
            self._spans = import_spans(self.text) if "import" in self.text else []
        return self._spans


def spells_packet(text: str) -> bool:
    """The text alone can make a packet (what it imports from the project not followed)."""
    global _LAST_SPELLED
    if _LAST_SPELLED is not None and _LAST_SPELLED[0] is text:
        return _LAST_SPELLED[1]
    found = False
    if "ops" in text or "edge" in text:
        read = Reading(identifiers(text))
        anchors = torch_names(read.text, read.spans) if "import" in text else {}
        found = PACKET in anchors.values() or scan(read, {**ROOT_WORDS, **anchors})[0]
    _LAST_SPELLED = (text, found)
    return found


_LAST_SPELLED: tuple[str, bool] | None = None


def scan(read: Reading, anchors: dict[str, str]) -> tuple[bool, dict[str, str]]:
    """Whether the text spells a packet (or binds a root or namespace to a name it cannot
    tell), and the names its uses of `anchors` bind to roots and namespaces."""
    known = dict(anchors)
    bound: dict[str, str] = {}
    todo = list(known.items())
    done: set[tuple[str, str]] = set()
    while todo:
        word, kind = todo.pop()
        if (word, kind) in done:
            continue
        done.add((word, kind))
        for name, bound_kind in _uses(read, word, kind):
            if name is None:
                return True, bound
            if known.get(name) not in (None, bound_kind):
                return True, bound  # bound to a root somewhere, a namespace elsewhere
            known[name] = bound[name] = bound_kind
            todo.append((name, bound_kind))
    return False, bound


def _uses(read: Reading, word: str, kind: str):
    """For each use of `word` (a `kind`) in code outside import statements: (None, None) when
    the use is a packet or binds the word where this reading cannot name the target, else
    (name, kind) for each name it binds to a root or a namespace."""
    text = read.text
    whole = 2 if kind == ROOT else 1  # the links that make a packet
    for at, m in _uses_of(word, text, read.start, read.end):
        links = m.group("links")
        if "#" in links:
            links = _COMMENT.sub("", links)
        count = links.count(".")
        if count > whole:
            continue  # an overload (or an attribute of a packet): no packet
        end = m.end()
        if _CALLED.match(text, end) is not None:
            continue  # an eager call, or a call of the namespace (`torch.ops.load_library(...)`)
        if count == whole:
            if kind == ROOT and _LINK_NAME.search(links).group() in _NOT_PACKET_NAMESPACES:
                continue
            if _in_code(text, at) and not _inside(read.spans, at):
                yield None, None
            continue
        if _STORED.match(text, end) is not None or not _in_code(text, at) or _inside(read.spans, at):
            continue
        # A root or a namespace on its own: the names it is bound to are one too.
        yield from _bindings(text, at, end, NAMESPACE if count == 1 else kind)


def _bindings(code: str, at: int, end: int, kind: str):
    m = _AS.match(code, end)
    if m is not None:
        yield m.group(1), kind
    row = code.rfind("\n", 0, at) + 1
    before = code[row:at]
    before = before[: _CHAIN_BEFORE.search(before).start()]
    walrus = _WALRUS.search(before)
    if walrus is not None:
        yield walrus.group(1), kind
        return
    assigns = list(_ASSIGN.finditer(before))
    if not assigns:
        if not before.strip(" \t([{,\\*"):
            # The statement may have started on an earlier row: its target is not on this one.
            yield None, None
        return
    for piece in re.split(r"[=,;]", before[: assigns[-1].start()]):
        piece = piece.split(":")[0].strip(" \t()[]*")
        if _TARGET.fullmatch(piece):
            yield piece.rpartition(".")[2], kind


def is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    i = bisect_right(spans, (at, _END)) - 1
    return i >= 0 and at < spans[i][1]


_END = float("inf")

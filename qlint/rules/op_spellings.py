"""How the consumer scan (`packet_scan`) and QL102's verdicts recognise an op in a module's text
before parsing it: its packet spelt as an op with no overload after it, one of its overloads,
its qualified name as a string literal (a definition), or one of a module's names as a whole
word. Each is a `search(text)`, asked of text alone."""

from __future__ import annotations

import re

from qlint.analysis.names.op_refs import OpRef
from qlint.analysis.word_search import AnchoredPattern, spells_word


class DefinedOp:
    """`search(text)`: the op's qualified name as a string literal opens it (`"ns::op"` or a
    schema `"ns::op(Tensor x) -> Tensor"`), as `custom_op`, `register_fake` and
    `torch.library.define` spell it."""

    def __init__(self, ref: OpRef):
        self._regex = re.compile(rf"""["']{re.escape(ref.namespace)}::{re.escape(ref.op)}(?=["'(.])""")

    def search(self, text: str) -> bool:
        return self._regex.search(text) is not None


class OverloadSpelling:
    """`search(text)`: one of the op's overloads (`ns.op.default`, `ns.op.Tensor`)."""

    def __init__(self, ref: OpRef):
        pattern = rf"\b{re.escape(ref.namespace)}\s*\.\s*{re.escape(ref.op)}\s*\.\s*[A-Za-z_]\w*"
        # Every match starts at the namespace: tried there only (`word_search`), not at every
        # character of each module the consumer scans search.
        self._regex = AnchoredPattern(pattern, (ref.namespace,)) if ref.namespace else re.compile(pattern)

    def search(self, text: str) -> bool:
        return self._regex.search(text) is not None


class PacketSpelling:
    """`search(text)`: the packet as an op (`aten.permute`, not a tensor's `x.permute(...)`), no
    overload after it. The pattern starts with a literal (a leading `\\b` makes `re` scan 20x
    slower), and the word boundary before it is checked here."""

    def __init__(self, ref: OpRef):
        self.pattern = rf"{re.escape(ref.namespace)}\s*\.\s*{re.escape(ref.op)}\b(?!\s*\.\s*\w)"
        self._regex = re.compile(self.pattern)

    def search(self, text: str) -> bool:
        return any(True for _ in self._spellings(text))

    def count(self, text: str) -> int:
        """How many times `text` spells the packet (what `findall` of the pattern with a
        leading `\\b` counts: a match that fails the boundary holds no start of one that
        passes, since the op ends at a boundary and a namespace is one word)."""
        return sum(1 for _ in self._spellings(text))

    def _spellings(self, text: str):
        for m in self._regex.finditer(text):
            before = text[m.start() - 1] if m.start() else " "
            if not (before.isalnum() or before == "_"):
                yield m


def packet_spellings(ref: OpRef, text: str) -> int:
    """How many times `text` names the packet `ref` (`ns.op`, no overload after it)."""
    return PacketSpelling(ref).count(text)


class AnyName:
    """`search(text)`: one of `names` as a whole word (a regex alternation of a module's many
    names is slow on large texts; most names are not in a given text at all)."""

    def __init__(self, names: set[str]):
        self.names = sorted(names)

    def search(self, text: str) -> bool:
        return any(spells_word(text, n) for n in self.names)


__all__ = ["AnyName", "DefinedOp", "OverloadSpelling", "PacketSpelling", "packet_spellings"]

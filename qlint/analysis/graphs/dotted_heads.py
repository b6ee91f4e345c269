"""Whether a dotted name ending in one of a set of names can start at a name the module
imports: what `helper_gate` asks of an ASCII text before the helper search reads its imports.

Every way from a text to a wrapper through an attribute starts at a name the module imports
(`gu.insert_op(...)`, `bl.GraphBuilder(...)`, `class P(gu.Rewriter)`), and a name after a dot
(`may_call_attribute`) says nothing of what the dotted name starts at: on ExecuTorch 318 of
the 423 files the index's names let through were there for `x.run(...)` (a method of a wrapper
class named `run`), on objects no import names, each then searched import by import.

The dotted name is read backwards from the dot before the name, as `called_names._DOT_NAME`
reads it forwards (on the raw text, strings included): names, dots, and between them blanks,
line continuations and comments (a `#` to its row's end). Reading back over a row break cannot
tell where a comment starts, so there every way the row before could end is followed (all of
it, or before any of its `#`s): the answer may be yes where the search finds nothing, never no
where it finds something. A text read back for too long answers yes. A text that is not ASCII
is read as `helper_gate.read_in_ascii` gives it.
"""

from __future__ import annotations

import re

_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_BLANKS = " \t\f"
# Steps of reading back per match, past which the answer is yes (rows of `#`s, long comments).
_BUDGET = 400


def reaches_from_imports(text: str, pattern: re.Pattern[str], heads: frozenset[str], words: str | None = None) -> bool:
    """Whether a match of `pattern` (led by the dot before the name, as
    `called_names._attribute_pattern` is) may end a dotted name one of whose parts before the
    dot is in `heads`. For ASCII texts whose rows end in `\\n` alone; `words`: the text a `?`
    of `text` may stand for a character of (`helper_gate.read_in_ascii`), read where a name
    stops at one."""
    m = pattern.search(text)
    while m is not None:
        try:
            if _may_hold(text, m.start(), heads, [_BUDGET], words):
                return True
        except _TooLong:
            return True
        # From the next character, not the match's end: a match may run over a comment that
        # holds another dot.
        m = pattern.search(text, m.start() + 1)
    return False


def heads_reaching(text: str, pattern: re.Pattern[str], heads: frozenset[str]) -> frozenset[str] | None:
    """The names of `heads` that a dotted name ending in a match of `pattern` may start at (a
    superset, as `reaches_from_imports` reads back), or None where some reading back ran out of
    its budget (any of them may). A head not among them starts no such dotted name: the helper
    search need not look for attribute paths from it (`imported_helpers._attribute_helpers`)."""
    found: set[str] = set()
    m = pattern.search(text)
    while m is not None:
        try:
            _collect(text, m.start(), heads, [_BUDGET], found)
        except _TooLong:
            return None
        if len(found) == len(heads):
            break
        m = pattern.search(text, m.start() + 1)
    return frozenset(found)


def _collect(text: str, dot: int, heads: frozenset[str], budget: list[int], found: set[str]) -> None:
    """`_may_hold`, every way back: adds to `found` each part of `heads` it passes."""
    for end in _ends_before(text, dot, budget):
        start = end
        while start > 0 and text[start - 1] in _WORD:
            start -= 1
        if start == end:
            continue
        if text[start:end] in heads:
            found.add(text[start:end])
        for before in _ends_before(text, start, budget):
            if text[before - 1] == ".":
                _collect(text, before - 1, heads, budget, found)


def _may_hold(text: str, dot: int, heads: frozenset[str], budget: list[int], words: str | None) -> bool:
    """Whether a part before the dot at `dot`, or one before it in the same dotted name, is in
    `heads` (True once `budget` runs out)."""
    for end in _ends_before(text, dot, budget):
        start = end
        while start > 0 and text[start - 1] in _WORD:
            start -= 1
        if start < end and text[start:end] in heads:
            return True
        if start and text[start - 1] == "?" and words is not None:
            start = _part_start(words, start)
        if start == end:
            continue  # `).run`, `"s".run`: no name stands there
        for before in _ends_before(text, start, budget):
            if text[before - 1] == "." and _may_hold(text, before - 1, heads, budget, words):
                return True
    return False


def _part_start(words: str, start: int) -> int:
    """Where the part holding the name that starts at `start` starts, in the text `words`, as
    the search reads a part (`[A-Za-z_]\\w*`: `aé` is one, `éa` none, and `é` no head's
    start); `start` where none holds it."""
    part = start
    while part > 0 and (words[part - 1].isalnum() or words[part - 1] == "_"):
        part -= 1
    first = words[part]
    return part if first.isascii() and (first.isalpha() or first == "_") else start


def _ends_before(text: str, at: int, budget: list[int]) -> set[int]:
    """Where what stands before `at` may end, past blanks and (over row breaks) continuations,
    comments and empty rows: each position `e` such that only those lie between `e` and `at`.
    Empty at the text's start."""
    _spend(budget)
    i = at
    while i > 0 and text[i - 1] in _BLANKS:
        i -= 1
    if i == 0:
        return set()
    if text[i - 1] != "\n":
        return {i}
    out: set[int] = set()
    row_end = i - 1
    while row_end >= 0:
        _spend(budget)
        row_start = text.rfind("\n", 0, row_end) + 1
        ends = [row_end]
        at_hash = text.find("#", row_start, row_end)
        while at_hash != -1:
            ends.append(at_hash)
            at_hash = text.find("#", at_hash + 1, row_end)
        blank = False
        for end in ends:
            j = end
            while j > row_start and text[j - 1] in _BLANKS + "\\":
                j -= 1
            if j > row_start:
                out.add(j)
            else:
                blank = True
        if not blank or row_start == 0:
            return out
        row_end = row_start - 1
    return out


class _TooLong(Exception):
    """The reading back ran out of its budget."""


def _spend(budget: list[int]) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLong

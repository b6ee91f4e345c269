"""Whether a module's text may call a name: what the helper search needs to ask about imports.

A call of a helper reaches a sink only where the file calls it: `callee_name(call)` is the
helper's name. Asking whether an imported name is a helper reads the module it comes from
(and the ones that one imports from), which on ExecuTorch was most of QL101's check; a name
the file never calls needs no answer. Rows that merely mention such a name hold no matcher
that the target rows and sink rows do not already hold.

Found from the text, not the tree: an occurrence of the name as a whole word followed by
`(`, with only whitespace, comments, line continuations or closing brackets between
(`(helper)(x)`, `helper  # why\\n(x)`), or as the first argument of `partial(` (the helper
search reads `functools.partial(helper, op=...)` as a call of it). Occurrences in strings and
comments that look like calls only answer yes where no was right (a module is read that did not need to be); a
call is never missed. Identifiers outside ASCII are NFKC-normalised by the parser (a
fullwidth `f` calls `f`), so in such a text every name counts as called.
"""

from __future__ import annotations

import collections
import functools
import re
from collections.abc import Callable, Iterator

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.word_trie import alternation
from qlint.analysis.identifier_text import normalised
from qlint.lazy_patterns import lazy

_WORD = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_BETWEEN = frozenset(" \t\f\r\n\\)")
_WORD_OR_DOT = _WORD | {"."}
# What may follow the head of a dotted name: the dot, or blanks and comments before it.
_AFTER_HEAD = frozenset(" \t\f\r\n\\.#")
# A dot and the name after it, with blanks, continuations and comments around the dot.
# A comment runs to the row's end (the look-ahead): one way to match, so a row of `#`s does
# not make the pattern backtrack exponentially.
_DOT_NAME = lazy(r"(?:[ \t\f\r\n\\]|#[^\n]*(?![^\n]))*\.(?:[ \t\f\r\n\\]|#[^\n]*(?![^\n]))*([A-Za-z_]\w*)")


def may_call(text: str, name: str) -> bool:
    """Whether `text` may call `name` (as `name(...)` or `x.name(...)`)."""
    if not text.isascii():
        return True
    end = len(text)
    start = text.find(name)
    while start != -1:
        after = start + len(name)
        if (start == 0 or text[start - 1] not in _WORD) and (after == end or text[after] not in _WORD):
            i = after
            while i < end:
                c = text[i]
                if c == "#":  # a comment runs to the row's end
                    i = text.find("\n", i)
                    if i == -1:
                        break
                elif c not in _BETWEEN:
                    break
                i += 1
            if (i != -1 and i < end and text[i] == "(") or _partial_of(text, start):
                return True
        start = text.find(name, start + 1)
    return False


def attributes_called(text: str, name: str) -> frozenset[tuple[str, ...]]:
    """The attribute paths the text may call on `name` (`gu.insert_op(...)`: `("insert_op",)`;
    `pkg.graph_utils.insert_op(...)`: `("graph_utils", "insert_op")`), also as the first
    argument of `partial(`: what the helper search resolves as functions of an imported module.
    `name` is the head of the dotted name (not `x.name.f(...)`); blanks, line continuations and
    comments may stand around each dot, as in brackets they can.

    Answered once per text and name: a file's import triggers (QL101's, QL102's) and then the
    checks of both rules ask it of every name the file imports."""
    memo = _attribute_memo(text)
    found = memo.get(name)
    if found is None:
        found = memo[name] = frozenset(_attributes_called(normalised(text), name))
    return found


def _attributes_called(text: str, name: str) -> Iterator[tuple[str, ...]]:
    end = len(text)
    start = text.find(name)
    while start != -1:
        after = start + len(name)
        # The character after it first: a dot, a blank or a comment goes on to a dotted name
        # (most occurrences are followed by none, or lie inside a longer word).
        if after < end and text[after] in _AFTER_HEAD and (start == 0 or text[start - 1] not in _WORD_OR_DOT):
            parts = []
            pos = after
            while (m := _DOT_NAME.match(text, pos)) is not None:
                parts.append(m.group(1))
                pos = m.end()
            if parts and (_call_at(text, pos) or _partial_of(text, start)):
                yield tuple(parts)
        start = text.find(name, after)


def _attribute_memo(text: str) -> dict[str, frozenset[tuple[str, ...]]]:
    """`attributes_called` answers about `text`, for the last few texts asked about (by
    identity: the check of a file asks about its text while the helper search reads others)."""
    for known, memo in _ATTRIBUTES:
        if known is text:
            return memo
    memo: dict[str, frozenset[tuple[str, ...]]] = {}
    _ATTRIBUTES.appendleft((text, memo))
    return memo


_ATTRIBUTES: collections.deque[tuple[str, dict[str, frozenset[tuple[str, ...]]]]] = collections.deque(maxlen=4)


def may_call_attribute(text: str, names: frozenset[str]) -> bool:
    """Whether some dotted name of the text may end in one of `names` (`x.insert_op`, `gu .
    insert_op`): where none can, no `attributes_called` path of any head ends in one. Searched
    once for all names, from each dot (a trie of the names: one pattern, no per-name scan)."""
    return _attribute_pattern(names).search(normalised(text)) is not None


def attribute_pattern(names: frozenset[str]) -> re.Pattern[str]:
    """The pattern `may_call_attribute` searches for `names`: a match starts at the dot."""
    return _attribute_pattern(names)


@functools.lru_cache(maxsize=16)
def _attribute_pattern(names: frozenset[str]) -> re.Pattern[str]:
    # The dot and what `_DOT_NAME` allows after it, then the name, not followed by more of an
    # ASCII identifier (a letter outside ASCII after it: a longer name, taken for it all the same).
    after_dot = r"\.(?:[ \t\f\r\n\\]|#[^\n]*(?![^\n]))*"
    return re.compile(after_dot + "(?:" + (alternation(sorted(names)) or "(?!)") + ")(?![A-Za-z0-9_])")


def _call_at(text: str, i: int) -> bool:
    """Whether a call's `(` follows at `i`, past blanks, comments, continuations and `)`."""
    end = len(text)
    while i < end:
        c = text[i]
        if c == "#":
            i = text.find("\n", i)
            if i == -1:
                return False
        elif c == "(":
            return True
        elif c not in _BETWEEN:
            return False
        i += 1
    return False


def _partial_of(text: str, start: int) -> bool:
    """Whether the name at `start` is the first argument of a call of `partial`."""
    i = _skip_blanks_back(text, start)
    if i < 0 or text[i] != "(":
        return False
    i = _skip_blanks_back(text, i)
    return text.startswith("partial", i - 6) and (i < 7 or text[i - 7] not in _WORD)


def _skip_blanks_back(text: str, end: int) -> int:
    i = end - 1
    while i >= 0 and text[i] in " \t\f\r\n\\":
        i -= 1
    return i


def calls_memo(text: str) -> dict[str, bool]:
    """`may_call` answers about `text`, shared by whoever asks about the same text object:
    QL102's import trigger asks before the check, whose `called_in` then reads its answers
    instead of searching the text again."""
    global _LAST
    if _LAST is None or _LAST[0] is not text:
        _LAST = (text, {})
    return _LAST[1]


def called_in(ctx: FileContext) -> Callable[[str], bool]:
    """`may_call` on the file being checked, answered once per name for the rules that ask."""
    called = ctx.cache.get(_CACHE_KEY)
    if called is None:
        # The text, not the context: a closure over `ctx` kept in `ctx.cache` would be a
        # reference cycle that keeps each checked file's tree alive until the cyclic GC runs
        # (ExecuTorch: +1.4 s CPU of collections, and a higher peak).
        text = ctx.text
        memo = calls_memo(text)

        def called(name: str) -> bool:
            if name not in memo:
                memo[name] = may_call(text, name)
            return memo[name]

        ctx.cache[_CACHE_KEY] = called
    return called


_CACHE_KEY = "graphs.may_call"
# The last text asked about and its answers (one file is checked at a time).
_LAST: tuple[str, dict[str, bool]] | None = None

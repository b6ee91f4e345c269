"""Searches of a whole module's text for patterns that start with one of a few words, found
from where those words occur instead of by the regex engine trying every position.

A pattern that begins with `\\b`, or with an alternation of words, gives `re` no literal
prefix to skip ahead with: `search` tries the whole pattern at every character of the text,
about 350 instructions a character. The dead-code check asks two such questions of the
checked module on every edited check with findings (`never_called.DYNAMIC_LOOKUP`,
`dead_code`'s `sys.modules` lookups): 28 M instructions on torch's 80 KB `observer.py`, a
twentieth of the whole `qlint check -`, where `str.find` of the words costs a few thousand.

Exact: every match of such a pattern starts where one of its leading words (`anchors`) starts,
so the pattern tried at those positions in increasing order finds the leftmost match, the one
`search` returns. A match tried at a position sees the text before it (`\\b`, lookbehinds look
at the real preceding character, not at a slice's start).
"""

from __future__ import annotations

import re

from qlint.lazy_patterns import lazy


class AnchoredPattern:
    """`re.compile(pattern, flags)` for `search` alone, where every match starts with one of
    `anchors` (case-sensitive literal text); compiled at its first use."""

    def __init__(self, pattern: str, anchors: tuple[str, ...], flags: int = 0):
        assert anchors and all(anchors), "a match must start with one of the anchors"
        self.pattern = pattern
        self.anchors = anchors
        self._compiled = lazy(pattern, flags)

    def search(self, text: str) -> re.Match[str] | None:
        # The next occurrence of each anchor; the smallest is the next position worth trying.
        ahead = {anchor: text.find(anchor) for anchor in self.anchors}
        while True:
            at = min((i for i in ahead.values() if i != -1), default=-1)
            if at == -1:
                return None
            found = self._compiled.match(text, at)
            if found is not None:
                return found
            for anchor, i in ahead.items():
                if i == at:
                    ahead[anchor] = text.find(anchor, at + 1)

    def in_module(self, ctx) -> bool:
        """Whether the checked module's text (`ctx.text`) holds a match, searched once per check
        (kept in `ctx.cache`): the dead-code check asks for each function holding a finding."""
        key = f"word_search:{self.pattern}"
        found = ctx.cache.get(key)
        if found is None:
            found = ctx.cache[key] = self.search(ctx.text) is not None
        return found


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def spells_word(text: str, word: str) -> bool:
    """`re.search(rf"\\b{re.escape(word)}\\b", text) is not None`, decided at each occurrence
    of `word` (`str.find`) instead of by `re` trying the pattern at every character: a search
    of a module's text for a name as a word (the project scans' callers and spellings) read
    the whole text at ~350 instructions a character wherever the name stood late or only
    inside longer words. Exact for any text: a boundary stands between two characters of
    which one is a word character (`\\w` of a `str` pattern: `str.isalnum()` or `_`), the text's
    ends counting as non-word characters."""
    if not word:
        return re.search(r"\b\b", text) is not None
    size, end = len(word), len(text)
    first, last = _is_word(word[0]), _is_word(word[-1])
    at = text.find(word)
    while at != -1:
        stop = at + size
        if (at > 0 and _is_word(text[at - 1])) != first and (stop < end and _is_word(text[stop])) != last:
            return True
        at = text.find(word, at + 1)
    return False


def ascii_word_count(text: str, word: str, limit: int) -> int:
    """`min(len(re.findall(rf"\\b{re.escape(word)}\\b", text)), limit)` for an ASCII `text` and
    an identifier `word`, counted from `str.find` (an IGNORECASE-free `\\b` pattern has no
    literal prefix either). In ASCII text `\\w` is `[A-Za-z0-9_]`; two bounded occurrences of
    a word cannot overlap (each starts after a non-word character), so each one found is one
    `findall` match."""
    count = 0
    at = text.find(word)
    while at != -1 and count < limit:
        end = at + len(word)
        if (at == 0 or not _is_word(text[at - 1])) and (end == len(text) or not _is_word(text[end])):
            count += 1
        at = text.find(word, at + 1)
    return count

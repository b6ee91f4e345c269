"""One regular expression for a set of words, for texts searched for any of them at once.

A text asked whether it holds any of a few dozen names (the wrapper index's class names, in
every file QL102's import trigger reads) was searched once per name: on ExecuTorch 69
substring scans of each of 3,200 files, 0.6 s of CPU. A pattern whose alternation branches one
character at a time scans the text once, and the regex engine tries at each position only
the branches that can start there (a flat alternation would try every word in turn).
"""

from __future__ import annotations

import functools
import re


def alternation(words: list[str]) -> str:
    """The words (sorted, none empty) as a regex alternation branching one character at a time,
    where more than one way goes on: a run of characters every word below shares, with no word
    ending inside it, is one literal (`Conv1dPattern` alone under `C` is `Conv1dPattern`, not
    `C(?:o(?:n(?:...)))`). The same branches in the same order, so the same matches: but the
    pattern of ExecuTorch's ~800 gate names is a quarter as long (12,000 characters, not
    47,000), and `re`, which took longer to compile the gates' patterns than the gates took to
    search with them (~0.17 s of CPU a run), compiles them in about a fifth of the time."""
    groups: dict[str, list[str]] = {}
    for word in words:
        if word:
            groups.setdefault(word[0], []).append(word[1:])
    out = []
    for first, rests in sorted(groups.items()):
        while "" not in rests and len({r[0] for r in rests}) == 1:
            first += rests[0][0]
            rests = [r[1:] for r in rests]
        longer = [r for r in rests if r]
        branch = re.escape(first)
        if longer:
            branch += "(?:" + alternation(longer) + ")" + ("?" if len(longer) < len(rests) else "")
        out.append(branch)
    return "|".join(out)


@functools.lru_cache(maxsize=16)
def substring_pattern(words: frozenset[str]) -> re.Pattern[str]:
    """A pattern found in a text exactly where one of `words` is a substring of it (never,
    for no word)."""
    return re.compile(alternation(sorted(words)) or "(?!)")


def holds_any(text: str, words: frozenset[str]) -> bool:
    """`any(w in text for w in words)` in one scan of the text (the words none empty)."""
    return substring_pattern(words).search(text) is not None

"""Which function bodies mention one of some words, from the rows the words are on.

The model-flow and calibration analyses pick the bodies to read by the API names their
text holds. Searching each body's text for each word searched a long module over and over
(methods lie inside classes, nested functions inside functions, and most bodies hold no
word, so every word was looked for all the way through each): the rows are found with one
search of the text per word, and a body holds a word exactly when one of its rows does,
since a word holds no line break and a body's text is whole rows.
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from collections.abc import Iterable


def word_rows(text: str, starts: list[int], words: Iterable[str]) -> list[int]:
    """The sorted rows (1-based; `starts` holds each row's offset) on which a word occurs."""
    rows: set[int] = set()
    for word in words:
        at = text.find(word)
        while at != -1:
            rows.add(bisect_right(starts, at))
            at = text.find(word, at + 1)
    return sorted(rows)


_PLAIN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
# From this many names on, one pass over the text for every call's name costs less than a
# search of the text per name.
_MANY = 16


class CalledRows:
    """`word_rows(text, starts, [f"{name}(" for name in names])`, for many names at once.

    A name of ASCII identifier characters stands right before a `(` exactly where it ends
    the run of such characters before that `(` (the run holds no line break: its row is the
    name's). So the runs before each `(` are found in one pass (when a search is asked for
    many names: the text split at its brackets, each piece's run its trailing characters of
    that kind), and a name's rows are those of the runs it ends, found by its reversed
    spelling among the runs' reversed ones, sorted. Other names are searched for as before.
    ExecuTorch's qualcomm test_qnn_delegate.py (465 KB): the 334 test methods its `switchers`
    adds were 334 searches of the whole text, 77 M instructions and 35 ms of CPU; one pass,
    39 M and 3 ms."""

    def __init__(self, text: str, starts: list[int]):
        self.text = text
        self.starts = starts
        self._runs: dict[str, list[int]] | None = None  # run -> the offsets it starts at
        self._reversed: list[str] = []

    def rows(self, names: Iterable[str]) -> list[int]:
        names = list(names)
        if len(names) < _MANY:
            return word_rows(self.text, self.starts, [f"{name}(" for name in names])
        plain = [name for name in names if name and not name.strip(_PLAIN)]  # of those characters only
        other = [f"{name}(" for name in names if not name or name.strip(_PLAIN)]
        rows = set(word_rows(self.text, self.starts, other)) if other else set()
        if self._runs is None:
            runs: dict[str, list[int]] = {}
            at = 0  # where the piece starts
            pieces = self.text.split("(")
            for piece in pieces[:-1]:  # the last one is followed by no bracket
                end = at + len(piece)  # the bracket's offset
                size = len(piece) - len(piece.rstrip(_PLAIN))
                if size:
                    runs.setdefault(piece[-size:], []).append(end - size)
                at = end + 1
            self._runs = runs
            self._reversed = sorted(run[::-1] for run in runs)
        starts, ordered = self.starts, self._reversed
        for name in plain:
            back = name[::-1]
            i = bisect_left(ordered, back)
            while i < len(ordered) and ordered[i].startswith(back):
                rows.update(bisect_right(starts, at) for at in self._runs[ordered[i][::-1]])
                i += 1
        return sorted(rows)


def mentions(node: ast.AST, rows: list[int]) -> bool:
    """Whether the body's text (a module's: all of it; a function's: its rows from `def`
    to its last) holds one of the rows in `rows` (sorted)."""
    if isinstance(node, ast.Module):
        return bool(rows)
    i = bisect_left(rows, node.lineno)
    return i < len(rows) and rows[i] <= node.end_lineno


def holding(texts: list[str], words: list[str]) -> list[bool]:
    """For each of `texts`, whether it holds one of `words` (none of which holds a line
    break, nor is empty): `any(w in t for w in words)` for each, from one search per word of
    the texts joined by line breaks (no word can span two of them)."""
    if not texts:
        return []
    joined = "\n".join(texts)
    ends: list[int] = []
    end = -1
    for text in texts:
        end += len(text) + 1
        ends.append(end)  # the offset of the break after each text (one past the last)
    found = [False] * len(texts)
    for word in words:
        at = joined.find(word)
        while at != -1:
            i = bisect_left(ends, at)
            found[i] = True
            at = joined.find(word, ends[i] + 1)  # the next text: this one is known to hold it
    return found

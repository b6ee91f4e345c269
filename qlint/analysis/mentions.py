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

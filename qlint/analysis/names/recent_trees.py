"""Whole trees the project index parsed for a module's summary a moment ago, kept for the
statements rules ask of that module next.

A summary comes from one parse of the whole module, whose tree is then dropped; the scope
rebuilt from the summary parses each statement a rule asks for on its own, from the text
(`summary._StatementSource`). A function of a module summarised a moment ago was so parsed
twice: on ExecuTorch (-j1), most of the run's 561 statement parses were of a module summarised
shortly before. The newest trees are kept here, bounded by their source bytes (a tree takes
~23 bytes per source byte: 64 KB, ~1.5 MiB; twice that served 13 more statements of 561), and
a statement is taken from one only for the content (digest) it was parsed from, and once: a
second asker parses its own, as every asker did. Statement parses 561 -> 386.
A statement taken from the whole tree is the node a parse of it alone gives (same fields,
same positions: `summary` parses a statement at its own rows and columns).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

BUDGET = 64 * 1024


class RecentTrees:
    def __init__(self, budget: int = BUDGET):
        self.budget = budget
        # path -> (digest, source bytes, the tree, or its statements by location once asked)
        self._kept: dict[str, tuple[str, int, Any]] = {}
        self._size = 0
        self.served = 0  # statements taken instead of parsed, for the benchmarks and tests

    def keep(self, path: str, digest: str, size: int, tree: ast.Module) -> None:
        """The tree of `path` at content `digest` (`size` source bytes), just parsed whole."""
        self._forget(path)
        if size > self.budget:
            return
        self._kept[path] = (digest, size, tree)
        self._size += size
        while self._size > self.budget:
            self._forget(next(iter(self._kept)))  # the oldest

    def statement(self, path: str, digest: str, loc: Any, index: Callable[[ast.Module], dict]) -> ast.stmt | None:
        """The statement at `loc` of the tree kept for `path` at `digest` (None: no such tree,
        or no statement there); `index(tree)` maps a tree's statements by location, once."""
        kept = self._kept.get(path)
        if kept is None or kept[0] != digest:
            return None
        found = kept[2]
        if isinstance(found, ast.Module):
            found = index(found)
            self._kept[path] = (kept[0], kept[1], found)
        stmt = found.pop(loc, None)  # one reader per node, as when each asker parsed its own
        if stmt is not None:
            self.served += 1
        return stmt

    def clear(self) -> None:
        self._kept.clear()
        self._size = 0

    def _forget(self, path: str) -> None:
        kept = self._kept.pop(path, None)
        if kept is not None:
            self._size -= kept[1]


RECENT = RecentTrees()

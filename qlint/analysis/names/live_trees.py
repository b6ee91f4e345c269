"""The whole trees of this process's modules that something still holds, found by path and
content without holding them.

A cold run parses a module for several readers: the engine's check of it, its summary as a
module others import, a caller search that analyses its functions, a project scan; and a
scope rebuilt from a summary parses each statement a rule asks for on its own. Each reader
dropped its tree when done and the next one parsed the text again, even while the first
still held it: on ExecuTorch (-j1) 209 of the 518 statement parses were of a module whose
whole tree was alive at that moment (the checked file's own, held by the engine; a summary's,
held for the caller search or the check that takes it, `tree_handover`).

Every whole parse is registered here, weakly: a tree lives exactly as long as its readers
keep it, and its entry goes with it (the registry adds no memory but an index of its
statements, kept on the tree itself). A reader asks here before it parses, and a statement
of a scope rebuilt from a summary is taken from a live tree of the same content. Content is
compared by the text's length and hash (as an unsaved buffer's content key is), so a tree
is only ever served for the text it was parsed from. Shared nodes are read, never changed
(answers kept on nodes are the same for every reader: `node_memo`).
"""

from __future__ import annotations

import ast
import os
import weakref
from collections.abc import Callable
from typing import Any

from qlint.analysis.names.piecewise_parse import parse_whole_or_in_pieces

_INDEX = "_qlint_statements"  # the statements of a registered tree by location, kept on it


class LiveTrees:
    def __init__(self) -> None:
        # absolute path -> ((length, hash) of the text, a weak reference to its tree)
        self._trees: dict[str, tuple[tuple[int, int], weakref.ref]] = {}
        self.served = 0  # whole trees found instead of parsed, for the benchmarks and tests
        self.statements = 0  # statements found instead of parsed

    def add(self, path: str, text: str, tree: ast.Module) -> None:
        """`tree` was parsed from `text`, the content of `path`."""
        path = os.path.abspath(path)

        def gone(ref: weakref.ref, path: str = path) -> None:
            entry = self._trees.get(path)
            if entry is not None and entry[1] is ref:
                del self._trees[path]

        self._trees[path] = ((len(text), hash(text)), weakref.ref(tree, gone))

    def tree(self, path: str, text: str) -> ast.Module | None:
        """A tree of `path` parsed from exactly `text` that something still holds, or None."""
        found = self._alive(os.path.abspath(path), text)
        if found is not None:
            self.served += 1
        return found

    def statement(self, path: str, text: str, loc: Any, index: Callable[[ast.Module], dict]) -> ast.stmt | None:
        """The statement at `loc` of a live tree of `path` parsed from `text` (None: no such
        tree, or no statement there); `index(tree)` maps a tree's statements by location,
        once per tree."""
        tree = self._alive(os.path.abspath(path), text)
        if tree is None:
            return None
        table = getattr(tree, _INDEX, None)
        if table is None:
            table = index(tree)
            setattr(tree, _INDEX, table)
        stmt = table.get(loc)
        if stmt is not None:
            self.statements += 1
        return stmt

    def _alive(self, path: str, text: str) -> ast.Module | None:
        entry = self._trees.get(path)
        if entry is None or entry[0] != (len(text), hash(text)):
            return None
        return entry[1]()

    def clear(self) -> None:
        self._trees.clear()


def parse(text: str, path: str, parser: Callable[[str, str], ast.Module] | None = None) -> ast.Module:
    """The tree of `text`, the content of `path`: a live one, else parsed (by `parser`; by
    default whole, or in pieces when large, `parse_whole_or_in_pieces`: the same tree as
    `ast.parse` without its whole-module peak) and registered. Raises what the parser raises."""
    found = LIVE.tree(path, text)
    if found is not None:
        return found
    # In pieces: a caller search's parse of ExecuTorch's qualcomm test_qnn_delegate.py (465 KB)
    # for a helper's check peaked at twice its 17 MiB tree, on top of all the worker held.
    tree = (parser or parse_whole_or_in_pieces)(text, path)
    LIVE.add(path, text, tree)
    return tree


LIVE = LiveTrees()

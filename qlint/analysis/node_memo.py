"""Answers kept on the syntax-tree node they are about.

A node does not change while its tree lives, and a helper of another module is analysed
again by every file that calls it: keeping the answer on the node shares it for exactly
as long as the tree, with nothing to invalidate. Answers are shared, so callers must not
change them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TypeVar

_N = TypeVar("_N", bound=ast.AST)
_R = TypeVar("_R")


def kept_on_node(node: _N, attr: str, compute: Callable[[_N], _R]) -> _R:
    """`compute(node)`, computed once and kept on `node` under `attr` (None is not kept)."""
    found = getattr(node, attr, None)
    if found is None:
        found = compute(node)
        setattr(node, attr, found)
    return found


def kept_on_node_by(node: ast.AST, attr: str, key, max_keys: int, compute: Callable[[], _R]) -> _R:
    """`compute()`, kept on `node` under `attr` per `key` (the rows an editor's check asks
    about). At `max_keys` the node's answers are all dropped: its rows moved (an Enter above
    it), and the old keys are not asked again."""
    kept = node.__dict__.get(attr)
    if kept is None:
        kept = node.__dict__[attr] = {}
    found = kept.get(key)
    if found is None:
        if len(kept) >= max_keys:
            kept.clear()
        found = kept[key] = compute()
    return found

"""Answers kept on the syntax-tree node they are about.

A node does not change while its tree lives, and a helper of another module is analysed
again by every file that calls it: keeping the answer on the node shares it for exactly
as long as the tree, with nothing to invalidate. Answers are shared, so callers must not
change them.

An answer must hold neither its own node nor one above it (the statement or module it is
in): the node would refer to itself through its own `__dict__`, and its tree would outlive
every reader until the cyclic collector ran, which the checks pause (`gc_pause`) and a
command-line run then starts rarely (`file_checks._GC_THRESHOLDS`). Nodes below it are fine:
a tree refers to its children only. An answer needing its own node holds it weakly
(`tree_walk.Parents`) or leaves it out (`packet_sites._site_nodes`). The suite checks
every answer computed (`WITNESS`, set by `tests/kept_answer_cycles.py`); a check of the
three trees at f17c9c76 left no tree to the collector.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TypeVar

_N = TypeVar("_N", bound=ast.AST)
_R = TypeVar("_R")

# Told of every answer computed, before it is kept: `WITNESS(node, attr, answer)`. None in a
# run: the tests set it to the check that the answer holds no cycle through its node.
WITNESS: Callable[[ast.AST, str, object], None] | None = None


def kept_on_node(node: _N, attr: str, compute: Callable[[_N], _R]) -> _R:
    """`compute(node)`, computed once and kept on `node` under `attr` (None is not kept)."""
    found = getattr(node, attr, None)
    if found is None:
        found = compute(node)
        if WITNESS is not None:
            WITNESS(node, attr, found)
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
        found = compute()
        if WITNESS is not None:
            WITNESS(node, attr, (key, found))
        kept[key] = found
    return found

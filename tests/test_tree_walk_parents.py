"""`tree_walk.parents`: every node's parent, kept on the walked node without a cycle."""

from __future__ import annotations

import ast
import gc
import weakref

import pytest

from qlint.analysis import tree_walk

# CPython makes one instance of each context and operator for every tree: no one parent.
_SHARED = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)
SOURCE = "def f(a):\n    if a:\n        return g(a.b[0])\n    return None\n"


def test_every_child_finds_its_parent_the_root_included():
    func = ast.parse(SOURCE).body[0]
    parents = tree_walk.parents(func)
    for node in ast.walk(func):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SHARED):
                continue
            assert parents.get(id(child)) is node
            assert parents[id(child)] is node
    assert parents.get(id(func)) is None
    with pytest.raises(KeyError):
        parents[id(func)]
    assert tree_walk.parents(func) is parents  # kept on the node


def test_the_map_kept_on_a_function_does_not_hold_it_in_a_cycle():
    # A cycle would keep the function's subtree alive after its module is dropped, until
    # the collector runs.
    module = ast.parse(SOURCE)
    func = module.body[0]
    tree_walk.parents(func)
    gone = weakref.ref(func)
    gc.disable()
    try:
        del module, func
        assert gone() is None
    finally:
        gc.enable()

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


def test_the_map_is_the_walk_of_every_child_in_its_order_tokens_included():
    # What the map was built as before its own loop: the same entries in the same order, a
    # shared token's entry the last parent `ast.walk` meets (nothing may read it, but nothing
    # that does sees a change either).
    source = SOURCE + "x = [i + 1 for i in range(3) if not i < 2 and i or -i]\nclass C(B):\n    y: int = 1\n"
    for root in (ast.parse(source), ast.parse(source).body[0]):
        expected = {id(c): p for p in ast.walk(root) if p is not root for c in ast.iter_child_nodes(p)}
        built = tree_walk.Parents(root)._below
        assert list(built.items()) == list(expected.items())

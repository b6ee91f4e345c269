"""`tree_walk`'s questions about one name under a node, and a statement's first row, which
several rules and analyses used to answer with copies of their own."""

from __future__ import annotations

import ast

from qlint.analysis.tree_walk import binds_name, first_row, mentions_name

SOURCE = """\
x = model(y)
del z
for a, (b, *c) in pairs:
    pass
obj.attr = value
print(w)


@decorator
@other(1)
def f(p):
    return p
"""


def _stmts():
    return ast.parse(SOURCE).body


def test_a_name_read_or_bound_is_mentioned_an_attribute_is_not():
    assign, delete, loop, store, call, _ = _stmts()
    assert mentions_name(loop, "pairs") and mentions_name(loop, "c")
    assert all(mentions_name(assign, n) for n in ("x", "model", "y"))
    assert mentions_name(delete, "z")
    assert mentions_name(store, "obj") and mentions_name(store, "value")
    assert not mentions_name(store, "attr")  # an attribute is no name
    assert mentions_name(call, "print") and mentions_name(call, "w") and not mentions_name(call, "x")


def test_only_a_store_or_a_delete_binds():
    assign, delete, loop, store, call, func = _stmts()
    assert binds_name(assign, "x") and not binds_name(assign, "model") and not binds_name(assign, "y")
    assert binds_name(delete, "z")
    assert all(binds_name(loop, n) for n in ("a", "b", "c")) and not binds_name(loop, "pairs")
    assert not binds_name(store, "obj")  # an attribute stored leaves the name bound as it was
    assert not binds_name(call, "w")
    assert not binds_name(func, "p")  # a parameter is an `arg`, not a name stored; the return reads it


def test_a_decorated_definition_starts_at_its_first_decorator():
    *simple, func = _stmts()
    assert [first_row(s) for s in simple] == [1, 2, 3, 5, 6]
    assert func.lineno == 11 and first_row(func) == 9

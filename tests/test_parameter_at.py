"""scope.parameter_at: the parameter a call's argument binds, as Python binds it.

A keyword naming a positional-only parameter binds nothing (a TypeError, or an entry of
`**kwargs`); neither does a position or keyword that only `*args` or `**kwargs` takes. The
first `skip` parameters (`self`) are bound by no argument of the call, whether or not they are
positional-only, and skipping them never hides a parameter a keyword can bind.
"""

from __future__ import annotations

import ast

import pytest

from qlint.analysis.names.scope import parameter_at


def _args(signature: str) -> ast.arguments:
    return ast.parse(f"def f({signature}): pass").body[0].args


@pytest.mark.parametrize(
    ("signature", "skip", "position", "keyword", "bound"),
    [
        ("a, /, b, *, c", 0, 0, None, "a"),
        ("a, /, b, *, c", 0, 1, None, "b"),
        ("a, /, b, *, c", 0, 2, None, None),  # `c` is keyword-only
        ("a, /, b, *, c", 0, None, "a", None),  # positional-only: binds nothing
        ("a, /, b, *, c", 0, None, "b", "b"),
        ("a, /, b, *, c", 0, None, "c", "c"),
        ("a, /, b, *, c", 0, None, "d", None),
        ("a, /, b, **kw", 0, None, "a", None),  # lands in `**kw`
        ("*args, **kwargs", 0, 0, None, None),
        ("*args, **kwargs", 0, None, "x", None),
        ("a, *args", 0, 1, None, None),  # taken by `*args`
        ("self, x, y", 1, 0, None, "x"),
        ("self, x, y", 1, None, "y", "y"),
        ("self, x, y", 1, None, "self", None),
        ("self, /, x, y", 1, 0, None, "x"),
        ("self, /, x, y", 1, None, "x", "x"),
        ("self, /, x, y", 1, None, "self", None),
        ("self, a, /, x", 1, 0, None, "a"),
        ("self, a, /, x", 1, None, "a", None),
        ("self, a, /, x", 1, None, "x", "x"),
        ("cls, self, /, x", 2, 0, None, "x"),
        ("cls, self, /, x", 2, None, "x", "x"),
    ],
)
def test_the_parameter_an_argument_binds(signature, skip, position, keyword, bound):
    assert parameter_at(_args(signature), skip, position, keyword) == bound


def test_the_answers_are_pythons():
    # Each keyword answer above, as the interpreter binds it (no `**kwargs` to catch it).
    def f(a, /, b, *, c):
        return locals()

    with pytest.raises(TypeError):
        f(a=1, b=2, c=3)
    assert f(1, b=2, c=3) == {"a": 1, "b": 2, "c": 3}

    class M:
        def __init__(self, /, x, y):
            self.seen = (x, y)

    assert M(x=1, y=2).seen == (1, 2)

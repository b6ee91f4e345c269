"""`tree_walk.contains_any_id`: the answer of `any(id(n) in ids for n in ast.walk(node))` for ids
of nodes that are not tokens, without the generator chain (`changed_after_build` asks it of
the statements after a model's build, for every call handing a model to a helper)."""

from __future__ import annotations

import ast
import inspect

from qlint.analysis import tree_walk
from qlint.analysis.flow import loop_aliases

# Every kind of node a body holds: decorators, defaults, annotations, comprehensions, f-strings,
# `match` patterns, `with` items, starred and keyword arguments, slices, lambdas, walrus.
SOURCE = """
@deco(arg=lambda x: x + 1)
async def f(a: int = g(1), *args: "T", k=h(), **kw) -> list[int]:
    async with ctx(a) as (b, c), other():
        r = [m(i) for i in range(n(3)) if p(i)]
        s = {q(k): v async for k, v in items()}
    for x, y in zip(a, b):
        del x[y:z(1)]
        t = f"{w(x)!r:>{width()}}"
    match cmd(a):
        case {"k": [1, *rest]} if guard(rest):
            return (yield from gen(rest))
        case Point(x=0, y=yy) as pt:
            raise Err(pt) from cause(yy)
    while (n := size(a)) > 0:
        a -= dec(n)
    try:
        pass
    except (E1, E2) as e:
        assert check(e), msg(e)
    else:
        global_var: dict[str, int] = {}
    return await done(a[1:2, ::3], *args, **kw)


class C(Base, metaclass=meta(1)):
    attr = field(default_factory=list)
"""


def _nodes(node: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(node) if not isinstance(n, tree_walk._TOKENS)]


def _trees() -> list[ast.Module]:
    # A real module of the analysis besides the sample: the one `contains_any_id` serves.
    return [ast.parse(SOURCE), ast.parse(inspect.getsource(loop_aliases))]


def test_every_node_under_a_statement_is_found_and_no_node_of_another():
    for tree in _trees():
        statements = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
        everything = _nodes(tree)
        assert len(statements) > 15
        for stmt in statements:
            under = {id(n) for n in _nodes(stmt)}
            for node in everything:
                assert tree_walk.contains_any_id(stmt, {id(node)}) is (id(node) in under)


def test_several_ids_and_none():
    tree = ast.parse(SOURCE)
    func, cls = tree.body
    inside = [n for n in _nodes(func) if isinstance(n, ast.Call)]
    outside = [n for n in _nodes(cls) if isinstance(n, ast.Call)]
    assert inside and outside
    assert tree_walk.contains_any_id(func, frozenset({id(outside[0]), id(inside[-1])}))
    assert not tree_walk.contains_any_id(func, frozenset(id(n) for n in outside))
    assert not tree_walk.contains_any_id(func, frozenset())
    assert tree_walk.contains_any_id(func, {id(func)})  # the node itself, as `ast.walk` yields it first

"""Factories of models written as data: `pytest.mark.parametrize` values, and dicts or lists of
lambdas, functions or classes that build a model when called (`MODELS[name]()`,
`for name, make in MODELS.items(): model = make()`).

Only literals of this module (or of the function) are read, and only when every element is
something the interpreter can follow: a lambda, a function of this module, or a class it
resolves. One element it cannot follow makes the whole collection unknown, so a finding
never rests on a guess about which element runs.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.flow.changed_tables import keyed
from qlint.analysis.names.resolver import Resolver, dotted_parts

_PARAMETRIZE = ("pytest.mark.parametrize", "_pytest.mark.parametrize")


def parametrize_values(func: ast.AST, param: str, resolver: Resolver) -> list[ast.expr] | None:
    """The values `@pytest.mark.parametrize` gives parameter `param` of `func`, if written here."""
    for deco in getattr(func, "decorator_list", ()):
        if not (isinstance(deco, ast.Call) and len(deco.args) >= 2 and resolver.qualname(deco.func) in _PARAMETRIZE):
            continue
        names = deco.args[0]
        if isinstance(names, ast.Constant) and isinstance(names.value, str):
            listed = [n.strip() for n in names.value.split(",") if n.strip()]
        elif isinstance(names, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in names.elts):
            listed = [e.value for e in names.elts]
        else:
            continue
        if param not in listed or any(kw.arg == "indirect" for kw in deco.keywords):
            continue  # `indirect=...`: the values go to fixtures, and the parameter gets what they return
        rows = _literal(deco.args[1], resolver)
        if rows is None:
            return None
        position, values = listed.index(param), []
        for row in rows:
            row = _unwrap_param(row)
            if len(listed) > 1:
                if not isinstance(row, (ast.Tuple, ast.List)) or len(row.elts) != len(listed):
                    return None
                row = row.elts[position]
            values.append(row)
        return values
    return None


def callables(
    expr: ast.expr, resolver: Resolver, follows: Callable[[ast.expr], bool], key: ast.expr | None = None
) -> list[ast.expr] | None:
    """The elements of a dict (its values) or list of callables `expr` names; None if any is not
    one. With `key`, a lookup's: only the element a constant key picks (`changed_tables.keyed`)."""
    if key is None:
        items = _literal(expr, resolver, values=True)
    else:
        table = _table(expr, resolver)
        items = keyed(table, key) if table is not None else None
    if not items:
        return None
    items = [_unwrap_param(i) for i in items]
    return items if all(_is_callable(i, follows) for i in items) else None


def factory_calls(values: list[ast.expr], follows: Callable[[ast.expr], bool]) -> bool:
    """Parametrize values that are all callables (`lambda: Net()`, `build_net`, `Net`)."""
    return bool(values) and all(_is_callable(v, follows) for v in values)


def lambda_body(fn: ast.Lambda) -> ast.expr | None:
    """The body of a lambda without parameters; with them, what it builds depends on the call."""
    args = fn.args
    if args.args or args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg:
        return None
    return fn.body


def _is_callable(expr: ast.expr, follows: Callable[[ast.expr], bool]) -> bool:
    if isinstance(expr, ast.Lambda):
        return lambda_body(expr) is not None
    return dotted_parts(expr) is not None and follows(expr)


def _literal(expr: ast.expr, resolver: Resolver, values: bool = False) -> list[ast.expr] | None:
    """A list/tuple literal's elements (a dict's values with `values`), written in this module."""
    node = _table(expr, resolver)
    if isinstance(node, (ast.List, ast.Tuple)):
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return None
        return list(node.elts)
    if values and isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return None
        return list(node.values)
    return None


def _table(expr: ast.expr, resolver: Resolver) -> ast.List | ast.Tuple | ast.Dict | None:
    """The list, tuple or dict literal `expr` is or names, written in this module."""
    located = resolver.value_of(expr) if not isinstance(expr, (ast.List, ast.Tuple, ast.Dict)) else None
    node = expr if located is None else located.node
    if located is not None and located.scope is not resolver.scope:
        return None  # names in another module's literal resolve there, not here
    return node if isinstance(node, (ast.List, ast.Tuple, ast.Dict)) else None


def _unwrap_param(node: ast.expr) -> ast.expr:
    """`pytest.param(value, id=...)` -> value."""
    if (
        isinstance(node, ast.Call)
        and (dotted_parts(node.func) or [""])[-1] == "param"
        and node.args
        and not any(isinstance(a, ast.Starred) for a in node.args)
    ):
        return node.args[0] if len(node.args) == 1 else ast.Tuple(list(node.args), ast.Load())
    return node

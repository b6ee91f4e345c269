"""Shapes of calls the sink rules and the helper search share: a call's callee name and
arguments, `functools.partial(f, ...)` as the call of `f` it binds, and whether a node spans
one of the rows a text search found (a prefilter before any resolution).
"""

from __future__ import annotations

import ast
from bisect import bisect_left

from qlint.analysis.names.resolver import Resolver


def spans_any(node: ast.AST, rows: list[int]) -> bool:
    """Whether the node's rows include one of the sorted `rows`."""
    i = bisect_left(rows, node.lineno)
    return i < len(rows) and rows[i] <= node.end_lineno


def callee_name(node: ast.Call) -> str | None:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def bound_call(call: ast.Call, resolver: Resolver) -> ast.Call | None:
    """`functools.partial(f, *args, **kwargs)` as the call of `f` it stands for: what it binds
    is passed at every call of the partial object (first, in the order written)."""
    name = callee_name(call)
    if not call.args or (name != "partial" and resolver.scope.imports.get(name or "") != "functools.partial"):
        return None  # asked of every call on the rows read: resolve only what can be it
    if resolver.qualname(call.func) != "functools.partial":
        return None
    bound = ast.Call(func=call.args[0], args=call.args[1:], keywords=call.keywords)
    return ast.copy_location(bound, call)


def call_arguments(call: ast.Call) -> list[ast.expr]:
    """Positional and keyword argument expressions of a call."""
    return [*call.args, *(kw.value for kw in call.keywords)]

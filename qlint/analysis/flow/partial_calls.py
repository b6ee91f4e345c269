"""Calls through a local name bound once to `functools.partial(helper, ...)` (issue 14).

`prep = functools.partial(set_mode, train=True); prep(model)` runs `set_mode(model,
train=True)`: the partial's arguments first, then the call's, its keywords overridden by the
call's. The walk reads such a call as that call of the helper (`spelled`), written at the
call's position so that what reports it names the call as written; the helper is then followed
as any other (`helper_calls`): its summary's switches, captures and flags at this call.

Only a name the function binds once, by `name = functools.partial(f, ...)` with `f` a name or
a dotted name, and arguments each a constant or a name (read again at the call: a name is the
value it has there, as it had at the binding while nothing rebinds it in between, which the
single binding of the partial does not show, so names rebound in the function are refused
too); no `*args`/`**kwargs` on either side. Anything else stays an unknown callable.
"""

from __future__ import annotations

import ast

from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.node_memo import kept_on_node

_PARTIAL = "functools.partial"
_KEY = "_qlint_partial_calls"
_SPELLED = "_qlint_spelled_partial"  # on the calls `spelled` makes


def partial_call(sem, node: ast.Call) -> ast.Call | None:
    """The helper call `node` makes through a `functools.partial` bound to its name, or None."""
    func = node.func
    if getattr(node, _SPELLED, False):
        return None  # a partial of a partial (which may be itself): not followed
    values = sem.resolver.local.get(func.id) if isinstance(func, ast.Name) else None
    if not values or len(values) != 1:
        return None
    bound = values[0]
    if not isinstance(bound, ast.Call) or not bound.args or not isinstance(bound.args[0], (ast.Name, ast.Attribute)):
        return None
    spelled_as = dotted_parts(bound.func)
    if not spelled_as or spelled_as[-1] != "partial" or sem.walk.qualname(bound.func) != _PARTIAL:
        return None  # (the name first: most locals bound to a call are no partial)
    given = [*bound.args[1:], *(kw.value for kw in bound.keywords)]
    for expr in given:
        if isinstance(expr, ast.Starred) or not isinstance(expr, (ast.Constant, ast.Name)):
            return None
        if isinstance(expr, ast.Name) and len(sem.resolver.local.get(expr.id) or ()) > 1:
            return None  # rebound in the function: its value at the call may not be the partial's
    if any(kw.arg is None for kw in (*bound.keywords, *node.keywords)):
        return None
    if any(isinstance(a, ast.Starred) for a in node.args):
        return None
    # One spelling per call, kept on it: a loop's body is walked twice, and what is recorded
    # at the call (its captures, its site) is keyed by the node.
    return kept_on_node(node, _KEY, lambda call: spelled(call, bound))


def spelled(node: ast.Call, bound: ast.Call) -> ast.Call:
    """`f(*partial args, *call args, **partial keywords | call keywords)` at `node`'s position."""
    keywords = {kw.arg: kw for kw in bound.keywords}
    keywords.update((kw.arg, kw) for kw in node.keywords)
    call = ast.Call(func=bound.args[0], args=[*bound.args[1:], *node.args], keywords=list(keywords.values()))
    setattr(call, _SPELLED, True)
    return ast.copy_location(call, node)


__all__ = ["partial_call", "spelled"]

"""Uses of a helper in its own module that no call the model flow read accounts for.

The flow reads the calls in function bodies (`FunctionFlow.calls`); a helper named in a lambda
(`run(lambda: quantize(Net()))`), a comprehension or handed on as a callback (`run(quantize)`)
passes models the flow never saw. Such a use is a caller that cannot be classified, as one in
another module is (`project_callers`): the helper is judged as if its callers were unknown
(issue 14, item 7), even when its other callers pass eval-mode models.

A function nested in another one is found by its name too: it can leave the function that
defines it only through a load of that name, so any load that is not a call the flow read
(a callback, a return, a store, a lambda) is such a use. Loads of the name in other bodies
count as well: a local of the same name there cannot be told apart cheaply, and erring
towards "unknown callers" keeps the helper judged on its own.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_values import FunctionFlow
from qlint.analysis.names.functions import bodies

_NAMES = frozenset({ast.Name})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def unread_use(ctx, flows: list[FunctionFlow], func: ast.AST) -> bool:
    """The module-level or nested function `func` is named in its module other than as a call
    the flow read (a method: False, its uses are not found by name)."""
    name = getattr(func, "name", None)
    if name is None:
        return False
    key = ("unread_use", id(func))
    known = ctx.cache.get(key)
    if known is not None:
        return known
    found = False
    every = bodies(ctx.tree, ctx.scope, ctx.cache)
    nested = ctx.scope.functions.get(name) is not func and in_function(ctx, func)
    if ctx.scope.functions.get(name) is func or nested:
        read = {id(site.ref) for flow in flows for site in flow.calls if site.callee is func}
        for body in every:
            if name in body.local and not nested:
                continue  # a local of the same name
            if any(n.id == name and type(n.ctx) is ast.Load and id(n) not in read for n in body.nodes(kinds=_NAMES)):
                found = True
                break
    ctx.cache[key] = found
    return found


def in_function(ctx, func: ast.AST) -> bool:
    """`func` is defined in a function's body (not a class's, nor the module's)."""
    for body in bodies(ctx.tree, ctx.scope, ctx.cache):
        if isinstance(body.node, _FUNCS) and any(s is func for s in body.stmts):
            return True
    return False


__all__ = ["in_function", "unread_use"]

"""Uses of a helper in its own module that no call the model flow read accounts for.

The flow reads the calls in function bodies (`FunctionFlow.calls`); a helper named in a lambda
(`run(lambda: quantize(Net()))`) or handed on as a callback (`run(quantize)`)
passes models the flow never saw. Such a use is a caller that cannot be classified, as one in
another module is (`project_callers`): the helper is judged as if its callers were unknown
(issue 14, item 7), even when its other callers pass eval-mode models.

A function nested in another one is found by its name too: it can leave the function that
defines it only through a load of that name, so any load that is not a call the flow read
(a callback, a return, a store, a lambda) is such a use. Only that function's bodies are
read; in the functions it holds, a local of the same name is not told apart (erring
towards "unknown callers" keeps the helper judged on its own).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.mentions import word_rows
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
    outer = enclosing(ctx, func) if ctx.scope.functions.get(name) is not func else None
    if outer is not None:
        # Only the function that defines it (and what it holds) can name it.
        every = [b for b in every if outer.lineno <= getattr(b.node, "lineno", 0) <= outer.end_lineno]
    if ctx.scope.functions.get(name) is func or outer is not None:
        read = {id(site.ref) for flow in flows for site in flow.calls if site.callee is func}
        # Only the statements on rows spelling the name can hold a load of it, in an ASCII
        # text: elsewhere an identifier is read NFKC-normalised, and another spelling may name it.
        rows = frozenset(word_rows(ctx.text, ctx.lines.starts, (name,))) if ctx.text.isascii() else None
        for body in every:
            if name in body.local and outer is None:
                continue  # a local of the same name
            named = body.nodes(rows, _NAMES)
            if any(n.id == name and type(n.ctx) is ast.Load and id(n) not in read for n in named):
                found = True
                break
    ctx.cache[key] = found
    return found


def enclosing(ctx, func: ast.AST) -> ast.AST | None:
    """The function whose body defines `func` (None: a class's or the module's)."""
    for body in bodies(ctx.tree, ctx.scope, ctx.cache):
        if isinstance(body.node, _FUNCS) and any(s is func for s in body.stmts):
            return body.node
    return None


__all__ = ["enclosing", "unread_use"]

"""Uses of a helper in its own module that no call the model flow read accounts for.

The flow reads the calls in function bodies (`FunctionFlow.calls`); a helper named in a lambda
(`run(lambda: quantize(Net()))`), a comprehension or handed on as a callback (`run(quantize)`)
passes models the flow never saw. Such a use is a caller that cannot be classified, as one in
another module is (`project_callers`): the helper is judged as if its callers were unknown
(issue 14, item 7), even when its other callers pass eval-mode models.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_values import FunctionFlow
from qlint.analysis.names.functions import bodies

_NAMES = frozenset({ast.Name})


def unread_use(ctx, flows: list[FunctionFlow], func: ast.AST) -> bool:
    """The module-level function `func` is named in its module other than as a call the flow read."""
    name = getattr(func, "name", None)
    if name is None or ctx.scope.functions.get(name) is not func:
        return False  # a method or a nested function: its uses are not found by name
    key = ("unread_use", id(func))
    known = ctx.cache.get(key)
    if known is not None:
        return known
    read = {id(site.ref) for flow in flows for site in flow.calls if site.callee is func}
    found = False
    for body in bodies(ctx.tree, ctx.scope, ctx.cache):
        if name in body.local:
            continue  # a local of the same name
        if any(n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in read for n in body.nodes(kinds=_NAMES)):
            found = True
            break
    ctx.cache[key] = found
    return found


__all__ = ["unread_use"]

"""The walk's contexts for `model_interp`: the `with` blocks a call runs in (their names, and
`pytest.raises`-like blocks that expect an error), and what a `try` statement's handlers tell
(one catching the error a refused `.eval()`/`.train()` raises).

`walk` is the function's walk (`model_interp.Interpreter`, not imported: it imports this).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.binding_walk import bind_unknown
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import EXPECTS_ERROR
from qlint.analysis.flow.reflective_switches import SWITCHES
from qlint.analysis.names.resolver import dotted_parts

_RAISES = frozenset({"raises", "assertRaises", "assertRaisesRegex"})
_CATCHES = frozenset({"NotImplementedError", "RuntimeError", "Exception", "BaseException"})


def with_block(walk, s, env: Env) -> Env | None:
    pushed = 0
    for item in s.items:
        walk.expr(item.context_expr, env)
        ctx_expr = item.context_expr
        func = ctx_expr.func if isinstance(ctx_expr, ast.Call) else ctx_expr
        name = EXPECTS_ERROR if _is_raises(func) else walk.qualname(func)
        if name:
            walk.contexts.append(name)
            pushed += 1
        if item.optional_vars is not None:
            bind_unknown(walk, item.optional_vars, ctx_expr, env)
    try:
        return walk.block(s.body, env)
    finally:
        del walk.contexts[len(walk.contexts) - pushed :]


def _is_raises(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr in _RAISES) or (
        isinstance(func, ast.Name) and func.id in _RAISES
    )


def catches_not_implemented(handler: ast.ExceptHandler) -> bool:
    if _raises_again(handler):
        return False  # logs and raises (`raise QuantizationError(...) from e`): the switch still fails
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((dotted_parts(t) or [""])[-1] in _CATCHES for t in types)


def _raises_again(handler: ast.ExceptHandler) -> bool:
    """The handler ends in a `raise` that nothing in it can step around (no `return`,
    `break` or `continue` anywhere in it), of anything but a test's skip."""
    last = handler.body[-1] if handler.body else None
    if not isinstance(last, ast.Raise):
        return False
    raised = last.exc.func if isinstance(last.exc, ast.Call) else last.exc
    if raised is not None and "skip" in ".".join(dotted_parts(raised) or ()).lower():
        return False  # `raise unittest.SkipTest(...)`: a test that expects the refusal skips
    return not any(isinstance(n, (ast.Return, ast.Break, ast.Continue)) for n in ast.walk(handler))


def refused_switch(s: ast.Try) -> bool:
    """`try: model = model.eval()` (or `.train(...)`) alone, `except NotImplementedError:` by
    name: the handler runs only when the receiver is an exported graph, which refuses the switch
    (torch 2.13) and whose mode was fixed when it was captured. A broader handler (`Exception`)
    or a longer body could also catch something else, so they keep the path without the switch."""
    if len(s.body) != 1 or not isinstance(s.body[0], (ast.Expr, ast.Assign)):
        return False
    call = s.body[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in SWITCHES):
        return False
    if dotted_parts(call.func.value) is None:  # `load(m).eval()`: the call before it can raise too
        return False
    for handler in s.handlers:
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(t is not None and (dotted_parts(t) or [""])[-1] == "NotImplementedError" for t in types):
            return True
    return False

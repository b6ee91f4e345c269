"""A helper's `.train(flag)` on its own parameter, called with a constant for it (issue 14):

    def set_mode(m, training):
        m.train(training)

    set_mode(model, False)          # the model is in eval mode at the capture that follows

Read on torch 2.13 from the exported graph's `batch_norm` and `dropout`: the helper's switch
runs with the value the call passes. The helper's summary holds an "unknown" mode for the
switch (`library_calls.method_call`: `.train(flag)`); a call passing a literal bool for that
parameter (or a name its function binds once, to one; or leaving a literal default) knows it,
and reads the switch as `.train(True)` / `.train(False)`. Anything else keeps the unknown mode,
as do a parameter the helper rebinds, a flag of a function written inside the helper (its own
parameter, whatever its name), and a call that may pass it through `*args`/`**kwargs`.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.dead_branches import defaults, rebound
from qlint.analysis.flow.enclosing_names import assigned_once
from qlint.analysis.flow.model_torch_nn import given_mode
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.node_memo import kept_on_node
from qlint.value_classes import replace

_KEY = "_qlint_carried_flags"  # on the helper's def: id(flag argument) -> the parameter it names
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_DEFS, ast.Lambda, ast.ClassDef)


def carried_mode(fact, callee: ast.AST, written: dict, ended: bool, caller: ast.AST | None):
    """`fact` of the helper `callee`, with its `.train(<parameter>)` switch read with the value the
    call passes (`written`: parameter index -> the argument written there; `ended`: the call
    has `*args`/`**kwargs`; `caller`: the function making the call)."""
    node = fact.node
    if fact.state != "unknown" or type(node) is not ast.Call or not isinstance(callee, _DEFS):
        return fact
    flag = _flag(node)
    name = kept_on_node(callee, _KEY, _own_flags).get(id(flag)) if flag is not None else None
    if name is None or rebound(callee, name):
        return fact
    index = next(i for i, a in enumerate(parameter_args(callee, star=False)) if a.arg == name)
    if index in written:
        value = _bool(written[index], caller)
    else:
        value = None if ended else _bool(defaults(callee).get(name), None)
    return fact if value is None else replace(fact, state="train" if value else "eval")


def _flag(call: ast.Call) -> ast.expr | None:
    """The one flag of a `.train(...)` call (`mode=` as keyword), or None."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "train"):
        return None
    given = given_mode(call.args, call.keywords)
    return given[0] if given else None


def _bool(expr: ast.expr | None, caller: ast.AST | None) -> bool | None:
    if isinstance(expr, ast.Name) and caller is not None:
        expr = assigned_once(caller, expr.id)
    return expr.value if isinstance(expr, ast.Constant) and isinstance(expr.value, bool) else None


def _own_flags(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[int, str]:
    """The flags of `.train(...)` calls in `func`'s own scope that name one of its parameters."""
    params = {a.arg for a in parameter_args(func, star=False)}
    out: dict[int, str] = {}
    todo: list[ast.AST] = list(func.body)
    while todo:
        node = todo.pop()
        if isinstance(node, _SCOPES):
            continue
        flag = _flag(node) if type(node) is ast.Call else None
        if isinstance(flag, ast.Name) and flag.id in params:
            out[id(flag)] = flag.id
        todo.extend(ast.iter_child_nodes(node))
    return out


__all__ = ["carried_mode"]

"""A train-mode PTQ capture whose prepared graph is moved to eval before anything runs it.

`move_exported_model_to_eval(prepared)` rewrites the graph's dropout and batch-norm ops to
their eval forms, and so does `prepared.eval()` once `allow_exported_model_train_eval(prepared)`
has patched it (gorillatracker's `pt2e_quantization`: allow, then a `calibrate` helper whose
first statement is `model.eval()`). Moved before the first calibration batch, the prepared
graph calibrates as an eval-mode capture would: the capture's mode no longer matters.

Read narrowly, in the function holding the capture, on top-level statements only: the capture
binds one name (or sits inside the prepare call), nothing names it again before it reaches
`prepare_pt2e` (a run of the train-mode graph would update batch-norm statistics), the prepare
call's result is bound to one name, and the first statement after it naming that name is
the move (`move_exported_model_to_eval(p)`), or `allow_exported_model_train_eval(p)` followed
by `p.eval()` or by a call of a module-level function of this module whose first statement
evals the parameter `p` is passed for. Every PTQ prepare the capture reaches must be so.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_apis import api_kind, classify_call
from qlint.analysis.flow.model_flow import Capture, FunctionFlow, capture_holder
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import function_assigns
from qlint.analysis.tree_walk import mentions_name
from qlint.rules.base import FileContext

_BODIES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)


def evaled_before_calibration(ctx: FileContext, cap: Capture, flows: list[FunctionFlow]) -> bool:
    sinks = cap.flows("ptq")
    holder = capture_holder(flows, cap)
    if not sinks or cap.inner is not None or holder is None or not isinstance(holder.node, _BODIES):
        return False  # a helper's capture: what the helper does with the graph is not read here
    body = holder.node.body
    qualname = Resolver(ctx.scope, ctx.project, ctx.optable, function_assigns(holder.node)).qualname
    at = _index_of(body, cap.call)
    if at is None:
        return False
    for sink in sinks:
        if sink.path != ctx.path or api_kind(sink.node, qualname) != "prepare":
            return False  # a recipe, or a prepare in another module
        where = _index_of(body, sink.node)
        if where is None or not _reaches_untouched(body, at, where, cap.call):
            return False
        prepared = _bound_name(body[where], sink.node)
        if prepared is None or not _moved_first(ctx, body[where + 1 :], prepared, qualname):
            return False
    return True


def _index_of(body: list[ast.stmt], node: ast.AST) -> int | None:
    return next((i for i, stmt in enumerate(body) if any(n is node for n in ast.walk(stmt))), None)


def _reaches_untouched(body: list[ast.stmt], at: int, where: int, call: ast.Call) -> bool:
    """The captured graph goes to the prepare call with nothing running it on the way."""
    if at == where:
        return True  # `prepare_pt2e(export(m, x).module(), q)`
    captured = _bound_name(body[at], call)
    if captured is None or at > where:
        return False
    return not any(mentions_name(stmt, captured) for stmt in body[at + 1 : where])


def _bound_name(stmt: ast.stmt, call: ast.AST) -> str | None:
    """The one name `stmt` binds to the value holding `call` (`gm = export(...).module()`)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    return stmt.targets[0].id if any(n is call for n in ast.walk(stmt.value)) else None


def _moved_first(ctx: FileContext, rest: list[ast.stmt], name: str, qualname) -> bool:
    naming = [stmt for stmt in rest if mentions_name(stmt, name)]
    if not naming:
        return False
    first = naming[0]
    if _library_call(first, name, qualname, "move") == "eval":
        return True
    if _library_call(first, name, qualname, "allow_train_eval") is None or len(naming) < 2:
        return False
    second = naming[1]
    return _evals(second, name) or _helper_evals_first(ctx, second, name)


def _library_call(stmt: ast.stmt, name: str, qualname, kind: str) -> str | None:
    """The mode it moves to ("eval", "train"; "" for an allow) when `stmt` is `api(name)` (or
    `name = api(name)`) with `api` of that kind; None otherwise."""
    call = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    if isinstance(stmt, ast.Assign) and _bound_name(stmt, call) != name:
        return None
    if not isinstance(call, ast.Call) or len(call.args) != 1 or call.keywords:
        return None
    arg = call.args[0]
    if not (isinstance(arg, ast.Name) and arg.id == name):
        return None
    api = classify_call(qualname(call.func), call.func)
    if api is None or api.kind != kind:
        return None
    return "train" if api.name.endswith("_train") else "eval" if api.name.endswith("_eval") else ""


def _evals(stmt: ast.stmt, name: str) -> bool:
    """`name.eval()` as a statement of its own."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return (
        isinstance(call, ast.Call)
        and not call.args
        and not call.keywords
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "eval"
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == name
    )


def _helper_evals_first(ctx: FileContext, stmt: ast.stmt, name: str) -> bool:
    """`calibrate(name, data)` with `calibrate` a module-level function of this module whose
    first statement is `.eval()` of the parameter `name` is passed for."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return False
    func = ctx.scope.functions.get(call.func.id)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func.decorator_list:
        return False
    if any(isinstance(a, ast.Starred) for a in call.args) or func.args.posonlyargs:
        return False
    positions = [i for i, a in enumerate(call.args) if isinstance(a, ast.Name) and a.id == name]
    keywords = [kw.arg for kw in call.keywords if isinstance(kw.value, ast.Name) and kw.value.id == name]
    params = [a.arg for a in func.args.args]
    given = [params[i] for i in positions if i < len(params)] + [k for k in keywords if k in params]
    if len(given) != 1 or len(positions) + len(keywords) != 1:
        return False  # passed twice, into `*args`/`**kwargs`, or not at all
    first = func.body[1] if _docstring(func) and len(func.body) > 1 else func.body[0]
    return _evals(first, given[0])


def _docstring(func: ast.AST) -> bool:
    head = func.body[0]
    return isinstance(head, ast.Expr) and isinstance(head.value, ast.Constant) and isinstance(head.value.value, str)


__all__ = ["evaled_before_calibration"]

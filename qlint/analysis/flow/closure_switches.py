"""A function written in another that switches a name of the enclosing function, called there
(QL203; voyager-compiler's QA script):

    model = prepare_pt2e(model, quantizer, ...)      # under `if args.pt2e:`
    def run_eval():
        model.eval()                                  # the enclosing function's `model`
        ...
    if not args.do_train:
        eval_metric = run_eval()

A function reads a name it does not bind from the function it is written in, at the time it
runs: `run_eval()` switches whatever `model` holds at that call. The helper has no parameter
for it, so the calls that hand a graph over (`handed_switches`) never saw it.

Read narrowly: the switch is an expression statement or an assignment's value among the
function's own top-level statements, before any top-level `return` or `raise` (a switch a path
through an earlier `if ...: return` skips still raises on the paths that reach it), on a name
the function does not bind and that the function it is called from binds (`enclosing_names`: the
nearest enclosing function binding it, no `global`/`nonlocal` of it). The value is the caller's
binding of the name at the call; a call from any other function (a sibling written in the same
function, the module) is not read.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.enclosing_names import binding_scope, bindings
from qlint.analysis.node_memo import kept_on_node

_SWITCHES = frozenset({"eval", "train"})
_ENDS = (ast.Return, ast.Raise)
_KEPT = "_qlint_closure_switches"


def closure_switches(scope, callee: ast.AST, caller: ast.AST) -> list[tuple[str, ast.Call]]:
    """(name, switch) for each unconditional `<name>.eval()`/`.train(...)` of `callee` on a
    free name that `caller`, the function calling it, binds (`scope`: the module's)."""
    if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)) or callee.decorator_list:
        return []
    return [
        (name, call)
        for name, call in kept_on_node(callee, _KEPT, _top_level_switches)
        if not bindings(callee, name) and binding_scope(scope, callee, None, name) is caller
    ]


def _top_level_switches(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[tuple[str, ast.Call], ...]:
    """`<name>.eval()`/`.train(...)` as an expression statement or an assignment's value among
    `func`'s own top-level statements, up to the first `return`/`raise` (kept on `func`: asked at
    every call of it)."""
    found = []
    for stmt in func.body:
        if isinstance(stmt, _ENDS):
            break
        value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
            continue
        receiver = value.func.value
        if value.func.attr in _SWITCHES and isinstance(receiver, ast.Name):
            found.append((receiver.id, value))
    return tuple(found)


__all__ = ["closure_switches"]

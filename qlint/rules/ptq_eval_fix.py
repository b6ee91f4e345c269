"""QL201's fix: put the captured model in eval mode, and say honestly how safe that is.

`.eval()` changes the object it is called on, so where that object comes from decides:

- built in this function from a class qlint resolves (a class of the module, or one
  imported, such as `torch.nn.Sequential`), with no parameter or `self` handed to the
  constructor: nobody else holds it, so `model.eval()` is **safe**;
- an exported, prepared or converted GraphModule (a re-export of `ep.module()`): `.eval()`
  raises NotImplementedError on torch 2.13, so the fix calls torchao's
  `move_exported_model_to_eval(gm)` instead (safe when the graph was made in this function);
- anything else is **unsafe**: a parameter is the caller's object (evaluating it changes
  the caller's model too), a helper's result may be shared, and a value that may be a
  GraphModule on some path would raise there.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_flow import CONSTRUCTED, GRAPH_KINDS, Capture, FunctionFlow
from qlint.diagnostic import Applicability, Fix
from qlint.rules.base import FileContext
from qlint.rules.capture_common import insert_mode_call, line_insertion
from qlint.rules.pt2e_helpers import pt2e_helper

HELPER = "move_exported_model_to_eval"


def is_graph(cap: Capture) -> bool:
    """The captured model is an exported, prepared or converted GraphModule on every path."""
    kinds = {o.kind for o in cap.origins}
    return bool(kinds) and kinds <= GRAPH_KINDS


def eval_fix(ctx: FileContext, cap: Capture, flows: list[FunctionFlow]) -> Fix | None:
    function = next((f for f in flows if cap in f.captures), None)
    kinds = {o.kind for o in cap.origins}
    if is_graph(cap):
        return graph_fix(ctx, cap, function)
    fix = insert_mode_call(ctx, cap, "eval")
    if fix is None or fix.applicability is not Applicability.SAFE:
        return fix
    if function is not None and not kinds & GRAPH_KINDS and built_here(ctx, cap, function):
        return fix
    return Fix(Applicability.UNSAFE, fix.message, fix.edits)


def built_here(ctx: FileContext, cap: Capture, function: FunctionFlow) -> bool:
    """Every object the capture may see was constructed in `function`, by a resolvable class,
    from arguments that hand it nothing of the caller's."""
    if not cap.origins:
        return False
    inside = {id(n) for n in ast.walk(function.node)}
    callers = {*function.params, "self", "cls"}
    for origin in cap.origins:
        node = origin.node
        if origin.kind != CONSTRUCTED or id(node) not in inside or not isinstance(node, ast.Call):
            return False
        if not _resolvable(ctx, node.func):
            return False
        passed = [*node.args, *(k.value for k in node.keywords)]
        if any(isinstance(n, ast.Name) and n.id in callers for a in passed for n in ast.walk(a)):
            return False  # a wrapper of the caller's module: `.eval()` reaches into it
    return all(fact.origin is None or fact.origin.kind == CONSTRUCTED for fact in cap.modes)


def _resolvable(ctx: FileContext, func: ast.expr) -> bool:
    head = func
    while isinstance(head, ast.Attribute):
        head = head.value
    if not isinstance(head, ast.Name):
        return False
    if isinstance(func, ast.Name) and func.id in ctx.scope.classes:
        return True
    return head.id in ctx.scope.imports


def graph_fix(ctx: FileContext, cap: Capture, function: FunctionFlow | None, helper: str = HELPER) -> Fix | None:
    """`helper(gm)` before the capture (QL202 passes `move_exported_model_to_train`)."""
    model = cap.model
    if model is None or not cap.fixable or (cap.flows("ptq") and cap.flows("qat")):
        return None
    if not isinstance(model, (ast.Name, ast.Attribute)):
        return Fix(Applicability.DISPLAY_ONLY, f"Call `{helper}(...)` on the GraphModule before capturing it again")
    src = ctx.source_of(model)
    name, import_edits = pt2e_helper(ctx, helper)
    edit = line_insertion(ctx, cap.stmt, f"{name}({src})") if name is not None else None
    if edit is None:
        return Fix(Applicability.DISPLAY_ONLY, f"Call `{helper}({src})` before the capture")
    inside = {id(n) for n in ast.walk(function.node)} if function is not None else set()
    local = isinstance(model, ast.Name) and all(id(o.node) in inside for o in cap.origins)
    applicability = Applicability.SAFE if local else Applicability.UNSAFE
    return Fix(applicability, f"Call `{helper}({src})` before the capture", (edit, *import_edits))

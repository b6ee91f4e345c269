"""QL202's fix: put the captured model in train mode, and say honestly how safe that is.

`.train()` changes the object it is called on, and it stays changed after the capture:

- built in this function from a class qlint resolves, with nothing of the caller's handed
  to the constructor, and not used again after the capture: nobody else sees the change,
  so `model.train()` is **safe** (the rule of QL201's fix, `ptq_eval_fix.built_here`);
- an exported, prepared or converted GraphModule captured again: `.train()` raises
  NotImplementedError on torch 2.13, so the fix calls torchao's
  `move_exported_model_to_train(gm)` instead, safe on the same terms;
- **unsafe** otherwise: a parameter is the caller's object, which would leave in train mode
  (its batch norm updating running statistics in the caller's later forward passes); a model
  the function runs or hands on after the capture (eager reference outputs, a return) now
  does so in train mode; `self.model` may be a property; a value that may be a GraphModule
  on some path would raise there;
- **display-only** where no edit can be placed (a capture in an `elif` test, a graph given
  inline), and none at all where one capture feeds PTQ and QAT (no mode is right for both).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_flow import GRAPH_KINDS, Capture, FunctionFlow
from qlint.diagnostic import Applicability, Fix
from qlint.rules.base import FileContext
from qlint.rules.capture_common import insert_mode_call
from qlint.rules.ptq_eval_fix import built_here, graph_fix, is_graph

HELPER = "move_exported_model_to_train"


def train_fix(ctx: FileContext, cap: Capture, flows: list[FunctionFlow]) -> Fix | None:
    function = next((f for f in flows if cap in f.captures), None)
    if is_graph(cap):
        fix = graph_fix(ctx, cap, function, HELPER)
    else:
        fix = insert_mode_call(ctx, cap, "train")
        if fix is not None and fix.applicability is Applicability.SAFE:
            kinds = {o.kind for o in cap.origins}
            if function is None or kinds & GRAPH_KINDS or not built_here(ctx, cap, function):
                fix = Fix(Applicability.UNSAFE, fix.message, fix.edits)
    if fix is not None and fix.applicability is Applicability.SAFE and _used_after(cap, function):
        fix = Fix(Applicability.UNSAFE, fix.message, fix.edits)
    return fix


def _used_after(cap: Capture, function: FunctionFlow | None) -> bool:
    """The model's name is read after the capture statement: that code now sees train mode."""
    model = cap.model
    if function is None or not isinstance(model, ast.Name):
        return True
    end = cap.stmt.end_lineno or cap.stmt.lineno
    return any(
        isinstance(n, ast.Name) and n.id == model.id and isinstance(n.ctx, ast.Load) and n.lineno > end
        for n in ast.walk(function.node)
    )

"""Whether the callers of a helper vouch for the mode of the model it captures.

A helper that captures its parameter without `eval()` relies on its callers. When every
caller in the project, in its own module or in others (`project_callers`), passes an
eval-mode model or one whose mode cannot change the graph, the capture is right and is not
reported. One caller that cannot be classified (a model from a loader, a loop item, its own
parameter, a use of the helper that is not a plain call) keeps the report: the helper is then
judged as if its callers were unknown (issue 14, item 7). A helper nobody calls is not
vouched for either: it is there for callers qlint cannot see.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_flow import PARAM, Capture, FunctionFlow, ModeFact, caller_facts
from qlint.analysis.flow.project_callers import project_callers
from qlint.rules.base import FileContext
from qlint.rules.capture_content import changed_after_build


def vouched_by_callers(ctx: FileContext, cap: Capture, flow: str, flows: list[FunctionFlow]) -> bool:
    """Every path to the capture starts at a caller that passes a harmless model, and at least
    one path goes through the helper's parameter."""
    facts = cap.modes_for(flow)
    through_callers = False
    for fact in facts:
        if fact.state == "eval":
            continue
        origin = fact.origin
        if fact.state != "unset" or origin is None or origin.kind != PARAM or origin.index is None:
            return False
        if not _callers_harmless(ctx, flows, origin.node, origin.index):
            return False
        through_callers = True
    return through_callers


def _callers_harmless(ctx: FileContext, flows: list[FunctionFlow], func: ast.AST, index: int) -> bool:
    same = caller_facts(flows, func, index) or []
    others = project_callers(ctx, func, index)
    if others is None or not (same or others):
        return False
    for call, fact in same:
        holder = next((f for f in flows if any(n is call for n in ast.walk(f.node))), None)
        if not _harmless(fact, flows, call, holder):
            return False
    return all(_harmless(f, list(c.flows), c.call, c.flow) for c in others for f in c.facts)


def _harmless(fact: ModeFact, flows: list[FunctionFlow], call: ast.Call, holder: FunctionFlow | None) -> bool:
    """An eval-mode model, or a construction known in full with nothing mode-dependent, not
    given parts between its construction and this call."""
    if fact.state == "eval":
        return True
    built = fact.origin.built if fact.origin is not None else None
    if built is None:
        return False
    content = built.content()
    if content.dependent or not content.complete:
        return False
    return not changed_after_build(flows, [built], frozenset({id(call)}), holder)


__all__ = ["vouched_by_callers"]

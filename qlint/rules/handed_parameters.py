"""A caller's own parameter that it puts in the bundle it hands a helper
(`def export(model): quantize_run(Artifact(data={"forward": model}))`): what its callers
passed reaches the helper when nothing was added to it or stored in it on the way
(`caller_verdicts` then asks those callers, as for a parameter handed on whole)."""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_flow import PARAM, FunctionFlow, ModeFact
from qlint.rules.capture_content import changed_after_build


def taking(call: ast.Call, top: ModeFact) -> frozenset[int]:
    """The calls that take the caller's parameter on its way to the helper: the helper's call
    and the construction of the bundle that holds it (`Artifact(model=model)`)."""
    node = top.origin.node if top.origin is not None else None
    return frozenset({id(call), id(node)}) if isinstance(node, ast.Call) else frozenset({id(call)})


def kept(flows: list[FunctionFlow], holder: FunctionFlow, fact: ModeFact, points: frozenset[int]) -> bool:
    """`fact` is a parameter of `holder` that reaches the calls `points` holding what the
    function's callers put in it: nothing is added to it or stored in it on the way
    (`model.bn = nn.BatchNorm1d(4)`, `model.add_module(...)`, a call it is handed to), as for a
    construction (`capture_content.changed_after_build`)."""
    origin = fact.origin
    if fact.state != "unset" or origin is None or origin.kind != PARAM or origin.node is not holder.node:
        return False
    index = origin.index
    if index is None or index >= len(holder.params):
        return False
    return not changed_after_build(flows, [], points, holder, holder.params[index])


__all__ = ["kept", "taking"]

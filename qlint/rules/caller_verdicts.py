"""Whether the callers of a helper vouch for the mode of the model it captures.

A helper that captures its parameter without `eval()` relies on its callers. When every
caller in the project, in its own module or in others (`project_callers`), passes an
eval-mode model or one whose mode cannot change the graph, the capture is right and is not
reported. One caller that cannot be classified (a model from a loader, a loop item, its own
parameter, a use of the helper that is not a plain call) keeps the report: the helper is then
judged as if its callers were unknown (issue 14, item 7). A helper nobody calls is not
vouched for either: it is there for callers qlint cannot see, unless it is a plain function
of a test module that nothing names (dead code: nothing can call it).
"""

from __future__ import annotations

import ast
import os
import re

from qlint.analysis.flow.call_paths import on_params, vouched_on_every_path
from qlint.analysis.flow.call_sites import Site, calls_all_known, checked_home
from qlint.analysis.flow.model_flow import PARAM, Capture, FunctionFlow, ModeFact, caller_facts, compatible
from qlint.analysis.flow.project_callers import each_project_call, project_callers
from qlint.analysis.flow.unread_uses import unread_use
from qlint.rules.base import FileContext
from qlint.rules.capture_content import changed_after_build


def vouched_by_callers(ctx: FileContext, cap: Capture, flow: str, flows: list[FunctionFlow]) -> bool:
    """Every path to the capture starts at a caller that passes a harmless model, and at least
    one path goes through the helper's parameter; or the helper is dead code of a test module."""
    facts = cap.modes_for(flow)
    helpers = set()
    for fact in facts:
        if fact.state == "eval":
            continue
        origin = fact.origin
        if fact.state != "unset" or origin is None or origin.kind != PARAM or origin.index is None:
            return False
        helpers.add((origin.node, origin.index))
    if len(helpers) == 1 and _dead_test_helper(ctx, flows, *next(iter(helpers))):
        return True
    return bool(helpers) and all(_callers_harmless(ctx, flows, func, index) for func, index in helpers)


def branch_ruled_out(ctx: FileContext, cap: Capture, flow: str, flows: list[FunctionFlow]) -> bool:
    """The prepare calls the capture reaches lie in branches on the helper's parameters, and
    every call path into the helper either rules them out by its arguments or passes a
    harmless model (`call_paths`).

    For QL201 (`flow` "ptq") the modes at stake are those that are not eval, and a model in
    eval mode (or one with nothing mode-dependent) is harmless. For QL202 ("qat") the
    mirror: the eval-mode facts are at stake, and only a model whose mode cannot change the
    graph is harmless; the helper set eval itself, so in practice only the callers' flags
    (`is_qat=False`) can rule its QAT branch out."""
    sinks = cap.flows(flow)
    if not any(s.guard for s in sinks):
        return False
    holder = next((f for f in flows if any(c is cap for c in f.captures)), None)
    if holder is None or not any(on_params(holder, s.guard) for s in sinks):
        return False  # nothing a caller's argument could decide: the verdict above stands
    at_stake = (lambda f: f.state != "eval") if flow == "ptq" else (lambda f: f.state == "eval")
    paths = [
        (fact, [s.guard for s in sinks if compatible(fact.guard, s.guard)])
        for fact in cap.modes_for(flow)
        if at_stake(fact)
    ]

    def harmless(fact: ModeFact, site: Site) -> bool:
        if flow != "ptq" and fact.state == "eval":
            return False
        return _harmless(fact, site.home.flows(), site.site.call, site.holder)

    return vouched_on_every_path(ctx, checked_home(ctx), holder, paths, harmless)


def _dead_test_helper(ctx: FileContext, flows: list[FunctionFlow], func: ast.AST, index: int) -> bool:
    """A plain function of a test module that nothing in the project names: it never runs
    (pytest calls only `test*` functions and fixtures, which are decorated). A helper of a
    library module is there for callers outside the project and stays reported."""
    name = os.path.basename(ctx.path)
    if not (name.startswith("test_") or name.endswith("_test.py")):
        return False
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func.decorator_list:
        return False
    if func.name.startswith("test") or ctx.scope.functions.get(func.name) is not func:
        return False
    named = [
        n
        for n in ast.walk(ctx.tree)
        if (isinstance(n, ast.Name) and n.id == func.name) or (isinstance(n, ast.Attribute) and n.attr == func.name)
    ]
    if named or len(re.findall(rf"\b{re.escape(func.name)}\b", ctx.text)) > 1:
        return False  # named in its own module (a call, a callback, `__all__`, a string)
    return project_callers(ctx, func, index) == []


def _callers_harmless(ctx: FileContext, flows: list[FunctionFlow], func: ast.AST, index: int) -> bool:
    if unread_use(ctx, flows, func):
        return False
    same = caller_facts(flows, func, index, lambda f: calls_all_known(ctx, f)) or []
    for call, fact in same:
        holder = next((f for f in flows if any(n is call for n in ast.walk(f.node))), None)
        if not _harmless(fact, flows, call, holder):
            return False
    called = bool(same)
    # Module by module: the first caller that passes a risky model (or a use that cannot be
    # read) decides, and the modules after it are not analysed.
    for found in each_project_call(ctx, func, index):
        if found is None or not all(_harmless(f, list(found.flows), found.call, found.flow) for f in found.facts):
            return False
        called = True
    return called


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


__all__ = ["branch_ruled_out", "vouched_by_callers"]

"""QL202 through a helper's callers: the QAT graph of an eval-mode capture, returned to them.

A helper that captures `Net().eval()` for QAT and returns the prepared graph leaves what
happens to that graph to its callers (Autoware's `_prepare` and `_build_prepared_model`).
`move_exported_model_to_train` on it restores training batch norm and dropout (checked on
torch 2.13 and torchao 0.18), and `move_exported_model_to_eval` or `convert_pt2e` before any
run means it is only rebuilt to be converted or evaluated: after either move the graph no
longer behaves as the mode it was captured in, which is what QL202 already accepts when these
steps follow the capture in its own function.

Quiet only when every step is seen: the helper is a module-level function (or a method of a
top-level class, whose calls `call_sites.each_site` finds), each QAT graph of the capture is
bound once and returned by every `return` (whole, or at one position of the tuple it returns),
and used before that only in ways that neither run it nor hand it on
(`neutral_graph_uses.neutral_use`); every use of the helper in the project is a call the caller
search reads (`unread_use`, `each_project_call`; none at all is no vouching); and each call
binds the graph to a name of its caller that is moved (or converted) before any use a path
from the call reaches could train it: the order test QL202 also asks of a move in the
capturing function (`moved_graphs.moved_first`). A run (`model(x)`), a copy that is not
converted, a store, a return or a rebinding before the move keeps the report.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.call_sites import Site, checked_home, each_site
from qlint.analysis.flow.method_references import owner_class
from qlint.analysis.flow.model_flow import Capture, FunctionFlow, capture_holder
from qlint.analysis.flow.project_callers import KeptCalls, each_project_call
from qlint.analysis.flow.unread_uses import unread_use
from qlint.analysis.tree_walk import own_nodes, parents
from qlint.rules.base import FileContext
from qlint.rules.caller_verdicts import holding_flow
from qlint.rules.moved_graphs import moved_first
from qlint.rules.neutral_graph_uses import neutral_uses


def returned_and_moved(ctx: FileContext, cap: Capture, flows: list[FunctionFlow]) -> bool:
    """The capture's QAT graphs are returned by the helper holding it, and every caller in the
    project moves what it gets (to train or to eval) or converts it before running it."""
    holder = capture_holder(flows, cap)
    func = holder.node if holder is not None else None
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if ctx.scope.functions.get(func.name) is not func:
        return owner_class(ctx, func) is not None and _method_callers_move(ctx, func, cap)
    sinks = [s.node for s in cap.flows("qat")]
    position = _returned_at(func, sinks)
    if position is None or unread_use(ctx, flows, func):
        return False
    called = False
    for site in (c for f in flows for c in f.calls if c.callee is func):
        caller = holding_flow(flows, site.call)
        if caller is None or not _moves_result(ctx, caller, site.call, position):
            return False
        called = True
    for found in each_project_call(ctx, func, 0):
        if found is None or isinstance(found, KeptCalls) or found.module is None:
            return False
        if not _moves_result(found.module[0], found.flow, found.call, position):
            return False
        called = True
    return called


def _method_callers_move(ctx: FileContext, func: ast.AST, cap: Capture) -> bool:
    """The same for a method of a top-level class (`self._prepare(q)` in its other methods):
    its calls are those `call_sites.each_site` finds, in its module and the project's others
    (`self.<method>` in the class and its subclasses, `Builder(q).prepare()`, ...), every one
    read (a use that is not such a call keeps the report)."""
    position = _returned_at(func, [s.node for s in cap.flows("qat")])
    if position is None:
        return False
    called = False
    for site in each_site(ctx, checked_home(ctx), func):
        if not isinstance(site, Site) or not _moves_result(site.home.ctx, site.holder, site.site.call, position):
            return False
        called = True
    return called


def _returned_at(func: ast.AST, sinks: list[ast.AST]) -> int | None:
    """The position the prepared graphs `sinks` are returned at by every return of `func`
    (-1: returned whole), when nothing else in it runs or hands them on; None otherwise."""
    if not sinks or not func.body or not isinstance(func.body[-1], ast.Return):
        return None  # a path that falls off the end returns None
    nodes = own_nodes(func)
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in nodes):
        return None
    returns = [n for n in nodes if isinstance(n, ast.Return)]
    up = parents(func)
    names: dict[str, ast.stmt] = {}
    for sink in sinks:
        stmt = up.get(id(sink))
        if isinstance(stmt, ast.Assign) and stmt.value is sink and _one_name(stmt.targets) is not None:
            names[stmt.targets[0].id] = stmt
        elif not (isinstance(stmt, ast.Return) and stmt.value is sink):
            return None
    found = set()
    for ret in returns:
        value = ret.value
        items = value.elts if isinstance(value, ast.Tuple) else None
        spots = [(-1, value)] if items is None else list(enumerate(items))
        hits = [i for i, e in spots if e in sinks or (isinstance(e, ast.Name) and e.id in names)]
        if len(hits) != 1:
            return None
        found.add(hits[0])
    if len(found) != 1:
        return None
    position = found.pop()
    for name, stmt in names.items():
        if not neutral_uses(func, name, stmt, up, _returned):
            return None
    return position


def _returned(node: ast.Name, up) -> bool:
    """`return prepared` or `return prepared, quantizer`."""
    parent = up.get(id(node))
    if isinstance(parent, ast.Tuple) and type(node.ctx) is ast.Load:
        parent = up.get(id(parent))
    return isinstance(parent, ast.Return)


def _one_name(targets: list[ast.expr]) -> str | None:
    return targets[0].id if len(targets) == 1 and isinstance(targets[0], ast.Name) else None


def _moves_result(home: FileContext, caller: FunctionFlow, call: ast.Call, position: int) -> bool:
    """The caller binds what `call` returns (its item `position`) to a name, and moves or
    converts it before any use that could run it or hand it on (`moved_graphs.moved_first`)."""
    body = caller.node
    if not isinstance(body, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        return False
    up = parents(body)
    stmt = up.get(id(call))
    if not isinstance(stmt, ast.Assign) or stmt.value is not call or len(stmt.targets) != 1:
        return False
    target = stmt.targets[0]
    if position >= 0:
        items = target.elts if isinstance(target, (ast.Tuple, ast.List)) else None
        if items is None or position >= len(items) or any(isinstance(e, ast.Starred) for e in items):
            return False
        target = items[position]
    if not isinstance(target, ast.Name):
        return False
    return moved_first(home, body, target.id, stmt) is True


__all__ = ["returned_and_moved"]

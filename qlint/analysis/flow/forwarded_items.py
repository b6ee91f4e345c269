"""A tuple a helper hands back whole from another helper's call (QL203).

`def g(m, x, is_qat): return f(m, x, is_qat)`, where `f` returns `export_model, m`: the caller
of `g` unpacks `e, _ = g(...)` as it would `f(...)`. The call's elements (`helper_calls`'
`_unpack`, in `g`'s terms) become the elements `g`'s return builds, and the conditions `f`'s
elements hold a graph under (`return_item_graphs`) become conditions on `g`'s names, as
`arm_graphs.forwarded` does for a whole value: `g(m, x, False)` then rules out the arm `f`
hands the graph back on, as `f(m, x, False)` does.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.dead_branches import open_ended
from qlint.analysis.flow.forwarded_kwargs import contradicted_at
from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.maybe_graphs import in_caller_terms, on_self
from qlint.analysis.flow.model_values import PARAM, anchored


def hand_back(sem, node: ast.Call, callee: FunctionFlow, written: dict, given: dict, foreign: bool) -> None:
    """`return f(...)`, `f` (`callee`) building a tuple on every return: record the call's
    elements as this return's (`FunctionFlow.return_items`), with the graphs each holds
    under conditions on this function's names (`return_item_graphs`)."""
    stmts = sem.walk.stmt_stack
    if not stmts or type(stmts[-1]) is not ast.Return or stmts[-1].value is not node:
        return
    items = sem.unpacked.get(id(node))
    if items is None:
        return
    index = len(sem.flow.returns)
    sem.flow.return_items[index] = items
    graphs = callee.return_item_graphs
    if not graphs:
        return
    ended, same_self, here, func = open_ended(node), on_self(node), frozenset(sem.walk.guards), sem.walk.func
    found: list[set] = [set() for _ in items]
    for i in range(len(callee.returns)):
        per = graphs.get(i)
        for position, paths in enumerate(found):
            if per is None:  # a return naming no graph's conditions: what it holds, on every path
                item = items[position]
                paths.update((o, here) for o in (item.origins if item is not None else ()))
                continue
            for origin, guard in per[position]:
                if guard and contradicted_at(guard, callee.node, written, sem.resolver, callee.resolver, ended, node):
                    continue
                mine = in_caller_terms(guard, callee.node, written, same_self, node, func, callee.resolver) | here
                if origin.kind == PARAM and origin.node is callee.node:
                    mine_origins = given[origin.index].origins if origin.index in given else ()
                else:
                    mine_origins = (anchored(origin, node, callee.path) if foreign else origin,)
                paths.update((o, mine) for o in mine_origins)
    if any(found):
        sem.flow.return_item_graphs[index] = tuple(frozenset(p) for p in found)
        if any(g for p in found for _, g in p):
            sem.flow.copies = True  # its callers' arguments may rule an element's graph out


__all__ = ["hand_back"]

"""A node of a pass's own graph given a packet as its new target (QL102, through
`self_traced_graphs`).

`n.target = torch.ops.aten.view` turns the node `n` into a call of the packet, as an insertion
would: pytorch-shir's simplifier rewrites a permute that moves no data into a view of its own
graph. When `n` can only be a node of the graph the pass was handed (the loop variable of
`for n in gm.graph.nodes`, of a local bound only to `gm.graph`, or of `list(...)` or
`reversed(...)` of those), the node is in that graph, and what the graph meets next is the
pass's callers' question, as for the pass's insertions (`graph_parameter_pass`).
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.graph_objects import name_stores, only_bound_to
from qlint.analysis.names.functions import Body
from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.tree_walk import own_nodes, parents

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_WRAPPERS = frozenset({"list", "reversed", "tuple"})


def retargeting_pass(ctx: FileContext, body: Body | None, expr: ast.expr) -> ast.AST | None:
    """The module-level function `body` when `expr` is the value of `<node>.target = expr`,
    the node a loop variable over its first parameter's graph's nodes (above)."""
    if body is None or not isinstance(body.node, _FUNCS):
        return None
    func = body.node
    if ctx.scope.functions.get(func.name) is not func:
        return None
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    stmt = parents(func).get(id(expr))
    if not params or not isinstance(stmt, ast.Assign) or stmt.value is not expr or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if not (isinstance(target, ast.Attribute) and target.attr == "target" and isinstance(target.value, ast.Name)):
        return None
    nodes = own_nodes(list(ast.iter_child_nodes(func)))
    graph, node = params[0], target.value.id
    if name_stores(nodes, graph) != []:
        return None  # the parameter bound anew: another graph
    stored = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    aliases = {a for a in stored if only_bound_to(func, nodes, a, [graph, "graph"])}
    stores = name_stores(nodes, node)
    above = parents(func)
    loops = [above.get(id(s)) for s in stores or ()]
    if not loops or not all(isinstance(b, (ast.For, ast.AsyncFor)) and b.target in stores for b in loops):
        return None
    return func if all(_graph_nodes(b.iter, graph, aliases) for b in loops) else None


def _graph_nodes(expr: ast.expr, graph: str, aliases: set[str]) -> bool:
    """`gm.graph.nodes`, `g.nodes` (g bound only to `gm.graph`), or `list(...)`/`reversed(...)`
    of one of them."""
    while (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id in _WRAPPERS
        and len(expr.args) == 1
        and not expr.keywords
    ):
        expr = expr.args[0]
    parts = dotted_parts(expr)
    return parts == [graph, "graph", "nodes"] or (
        parts is not None and len(parts) == 2 and parts[0] in aliases and parts[1] == "nodes"
    )


__all__ = ["retargeting_pass"]

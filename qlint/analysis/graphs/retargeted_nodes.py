"""A node of a pass's own graph given a packet as its new target (QL102, through
`self_traced_graphs`).

`n.target = torch.ops.aten.view` turns the node `n` into a call of the packet, as an insertion
would: pytorch-shir's simplifier rewrites a permute that moves no data into a view of its own
graph. When `n` can only be a node of the graph the pass was handed (the loop variable of
`for n in gm.graph.nodes`, or an argument of it: `param_graph_nodes`), the node is in that
graph, and what the graph meets next is the pass's callers' question, as for the pass's
insertions (`graph_parameter_pass`).
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.param_graph_nodes import param_graph_node
from qlint.analysis.names.functions import Body, module_function
from qlint.analysis.tree_walk import parents


def retargeting_pass(ctx: FileContext, body: Body | None, expr: ast.expr) -> ast.AST | None:
    """The module-level function `body` when `expr` is the value of `<node>.target = expr`,
    the node one of its first parameter's graph (above)."""
    func = module_function(body, ctx.scope)
    if func is None:
        return None
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    stmt = parents(func).get(id(expr))
    if not params or not isinstance(stmt, ast.Assign) or stmt.value is not expr or len(stmt.targets) != 1:
        return None
    target = stmt.targets[0]
    if not (isinstance(target, ast.Attribute) and target.attr == "target"):
        return None
    return func if param_graph_node(func, target.value) else None


__all__ = ["retargeting_pass"]

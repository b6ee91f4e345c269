"""Which expressions of a pass are nodes of the graph its first parameter holds (QL101, QL102,
through `retargeted_nodes` and `self_traced_graphs`).

`for n in gm.graph.nodes` (or over `g.nodes`, `g` bound only to `gm.graph`, or over `list(...)`,
`reversed(...)` of those) binds `n` to nodes of that graph, and an FX node's arguments are
nodes of its own graph (or constants, which nothing matches or retargets): `n.args[0]`,
`n.args[0].args[1]` are nodes of the same graph. pytorch-shir's tiny-YOLO instruction selector
walks its graph so and hands `n`, `n.args[0]` and `n.args[0].args[0]` to the matchers of
`isel_utils`. A loop variable bound any other way too (another loop, an assignment), or the
parameter bound anew, and the node may be another graph's.
"""

from __future__ import annotations

import ast

from qlint.analysis.graphs.graph_objects import name_stores, only_bound_to
from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.tree_walk import own_nodes, parents

_WRAPPERS = frozenset({"list", "reversed", "tuple"})


def param_graph_node(func: ast.FunctionDef | ast.AsyncFunctionDef, expr: ast.expr) -> bool:
    """`expr`, in `func`'s own body, is a node of its first parameter's graph (above)."""
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    while (
        isinstance(expr, ast.Subscript)
        and isinstance(expr.value, ast.Attribute)
        and expr.value.attr == "args"
        and isinstance(expr.slice, ast.Constant)
        and isinstance(expr.slice.value, int)
    ):
        expr = expr.value.value
    if not params or not isinstance(expr, ast.Name):
        return False
    nodes = own_nodes(list(ast.iter_child_nodes(func)))
    graph = params[0]
    if name_stores(nodes, graph) != []:
        return False  # the parameter bound anew: another graph
    stores = name_stores(nodes, expr.id)
    above = parents(func)
    loops = [above.get(id(s)) for s in stores or ()]
    if not loops or not all(isinstance(b, (ast.For, ast.AsyncFor)) and b.target in stores for b in loops):
        return False
    return all(_graph_nodes(func, nodes, b.iter, graph) for b in loops)


def _graph_nodes(func: ast.AST, nodes: list[ast.AST], expr: ast.expr, graph: str) -> bool:
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
    if parts is None:
        return False
    if parts == [graph, "graph", "nodes"]:
        return True
    return len(parts) == 2 and parts[1] == "nodes" and only_bound_to(func, nodes, parts[0], [graph, "graph"])


__all__ = ["param_graph_node"]

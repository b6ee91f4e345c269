"""Packets matched or inserted in a graph the same function has just stripped of its
overloads (QL101, QL102).

`strip_overloads(gm)` rewrites every node's target to its packet: a backend that lowers an
AOT graph to TorchScript runs it, then rewrites the nodes TorchScript cannot script
(BladeDISC's Dynamo backend turns `prims.div` into `aten.div`, `aten.view` into
`aten.reshape`) by comparing and setting packets, and scripts the graph. On that graph the
packet is the form every node has: a comparison with it matches, and a node set to it is
like every other.

Only a graph the function strips itself, unconditionally, before the match or insertion:
`strip_overloads(gm)` (or the project's own strip loop, written there or in a helper it calls:
`strip_loops`) is a statement of the same statement list as the one holding the loop
over `gm.graph.nodes` (or the `gm.graph.call_function(...)`), earlier; from the strip to
the end of that loop (or call) `gm` is only read through its graph's nodes and methods
(`gm.graph.nodes`, `gm.graph.erase_node(n)`), never handed on; the function never binds `gm`
anew; and it spells no overload at all (a node it sets to an overload would not equal the
packet, and one it expects somewhere makes the graph's form unclear).
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.call_statements import statement_lists
from qlint.analysis.graphs.overload_spellings import function_nodes, writes_an_overload
from qlint.analysis.graphs.strip_loops import strip_helper, strip_loop
from qlint.analysis.names.functions import Body
from qlint.analysis.names.resolver import Resolver, dotted_parts

_STRIP = "strip_overloads"
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOOPS = (ast.For, ast.AsyncFor)
_INSERTS = frozenset({"call_function", "create_node"})


def matched_after_strip(ctx: FileContext, body: Body | None, row: int) -> bool:
    """Whether the matcher at `row` sits in a loop over the nodes of a graph module the
    function `body` stripped of its overloads just before (above)."""
    func = _function(ctx, body)
    if func is None:
        return False
    for loop in _loops(func):
        if loop.lineno <= row <= (loop.end_lineno or row):
            graph = _looped_graph(loop)
            if graph is not None and _stripped_before(ctx, body, func, graph, loop):
                return True
    return False


def inserted_after_strip(ctx: FileContext, body: Body | None, packet: ast.expr) -> bool:
    """Whether `packet` is set as the target of the node a loop over a stripped graph module's
    nodes holds (`node.target = packet`), or inserted into that graph
    (`gm.graph.call_function(packet, ...)`), after the function `body` stripped it (above)."""
    func = _function(ctx, body)
    if func is None:
        return False
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and node.value is packet and len(node.targets) == 1:
            target = node.targets[0]
            if not (isinstance(target, ast.Attribute) and target.attr == "target"):
                return False
            if not isinstance(target.value, ast.Name):
                return False
            loop = _innermost_loop(func, node)
            if loop is None or not (isinstance(loop.target, ast.Name) and loop.target.id == target.value.id):
                return False
            graph = _looped_graph(loop)
            return graph is not None and _stripped_before(ctx, body, func, graph, loop)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _INSERTS
            and any(a is packet for a in node.args)
        ):
            parts = dotted_parts(node.func.value)
            if parts is None or len(parts) != 2 or parts[1] != "graph":
                return False
            return _stripped_before(ctx, body, func, parts[0], node)
    return False


def _function(ctx: FileContext, body: Body | None) -> ast.AST | None:
    if (
        (_STRIP not in ctx.words and "overloadpacket" not in ctx.words)
        or body is None
        or not isinstance(body.node, _FUNCS)
    ):
        return None
    return body.node


def _loops(func: ast.AST) -> list[ast.For | ast.AsyncFor]:
    return [n for n in function_nodes(func) if isinstance(n, _LOOPS)]


def _innermost_loop(func: ast.AST, node: ast.AST) -> ast.For | ast.AsyncFor | None:
    inner = None
    for loop in _loops(func):
        if any(n is node for n in ast.walk(loop)) and (inner is None or loop.lineno >= inner.lineno):
            inner = loop
    return inner


def _looped_graph(loop: ast.For | ast.AsyncFor) -> str | None:
    """`gm` in `for n in gm.graph.nodes` (or `list(gm.graph.nodes)`)."""
    it = loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "list" and len(it.args) == 1:
        it = it.args[0]
    parts = dotted_parts(it)
    return parts[0] if parts is not None and parts[1:] == ["graph", "nodes"] else None


def _stripped_before(ctx: FileContext, body: Body, func: ast.AST, graph: str, anchor: ast.AST) -> bool:
    """Whether a statement stripping `graph` (`strips_graph`) precedes `anchor` in a statement list
    that holds it, `graph` never bound in the function, read from the strip to the end of
    `anchor` only through `graph.graph.<attribute>`, and no overload spelled."""
    if _binds(func, graph) or writes_an_overload(ctx, body, func):
        return False
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
    functions = {**ctx.scope.functions, **{s.name: s for s in func.body if isinstance(s, _FUNCS)}}
    for stmts in statement_lists(func):
        for index, stmt in enumerate(stmts):
            if not strips_graph(stmt, graph, resolver, functions):
                continue
            for later in stmts[index + 1 :]:
                if any(n is anchor for n in ast.walk(later)):
                    return _read_through_graph(func, graph, stmt, anchor)
    return False


def strips_graph(stmt: ast.stmt, graph: str, resolver: Resolver, functions: dict) -> bool:
    """torch's `strip_overloads(graph)`, the project's own strip loop over `graph`'s nodes, or
    a call of a helper whose body is such a loop (`strip_loops`)."""
    if strip_loop(stmt, graph):
        return True
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    if call.keywords or len(call.args) != 1 or not (isinstance(call.args[0], ast.Name) and call.args[0].id == graph):
        return False
    if isinstance(call.func, ast.Name) and strip_helper(functions.get(call.func.id)):
        return True
    return (resolver.qualname(call.func) or "").split(".")[-1] == _STRIP


def _read_through_graph(func: ast.AST, graph: str, strip: ast.stmt, anchor: ast.AST) -> bool:
    """Every use of `graph` from the end of the strip to the end of `anchor` reads a node
    list or calls a method of its graph (`graph.graph.nodes`, `graph.graph.erase_node(n)`):
    handed on, bare or as `graph.graph`, the module could come back with nodes of any form."""
    start = (strip.end_lineno or strip.lineno, strip.end_col_offset or 0)
    end = (anchor.end_lineno or anchor.lineno, anchor.end_col_offset or 0)
    nodes = function_nodes(func)
    parents = {child: node for node in nodes for child in ast.iter_child_nodes(node)}
    for node in nodes:
        if not (isinstance(node, ast.Name) and node.id == graph and start <= (node.lineno, node.col_offset) < end):
            continue
        parent = parents.get(node)
        if not (isinstance(parent, ast.Attribute) and parent.attr == "graph"):
            return False
        if not isinstance(parents.get(parent), ast.Attribute):
            return False
    return True


def _binds(func: ast.AST, name: str) -> bool:
    for node in function_nodes(func):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
    return False

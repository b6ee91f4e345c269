"""An insertion made only where a node of the same graph carries Dynamo's `grapharg` meta (QL102).

Dynamo writes `node.meta["grapharg"]` on the placeholders of the graph it hands a
`torch.compile` backend (`OutputGraph`, `VariableBuilder`) and deletes it when the compile is
over; nothing else writes the key (AOT autograd's and torch.export's placeholders carry none:
checked on torch 2.13). Code that inserts a node only under a test that such a node holds the
key therefore inserts into Dynamo's output graph, or, run on any other graph, inserts nothing
(TensorRT's `replace_symint_with_sym_size`, which runs after AOT export). Dynamo's graph records
a packet the user's code called as that packet and holds torch-level calls no ATen matcher
knows: whatever keys on overloads traces it first (AOT autograd, export, `make_fx`), and the
trace dispatches the packet to its overload. Either way no matcher keyed on an overload meets
the inserted packet.

Only a test the insertion cannot run without counts: the insertion sits in the body of `if T:`
(never its `else:`), where T is `"grapharg" in n.meta`, `n.meta.get("grapharg")` (or `is not
None`), or a name bound from `n.meta.get("grapharg")` / `n.meta["grapharg"]` just before in the
same block and tested for truth or `is not None`; or an `and` one side of which is. `n` must be
the variable of an enclosing loop over `G.nodes` (or `list(G.nodes)`, `reversed(G.nodes)`), and
the insertion a direct `G.call_function(...)` / `G.create_node(...)` on the same `G`: a node of
another graph says nothing of the graph the packet goes into.
"""

from __future__ import annotations

import ast

from qlint.analysis.names.functions import Body
from qlint.analysis.tree_walk import block_spans

_KEY = "grapharg"
_INSERTS = frozenset({"call_function", "create_node"})
_NODE_LISTS = frozenset({"list", "reversed", "tuple"})


def inserted_under_dynamo_meta(body: Body | None, node: ast.expr) -> bool:
    """Whether the packet `node`, inserted directly into a graph `G`, is inserted only where a
    node of `G` that an enclosing loop walks carries Dynamo's `grapharg` meta."""
    if body is None or not isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    graph = _inserting_graph(body.node, node)
    if graph is None:
        return False
    loops: dict[str, str] = {}  # loop variable -> the graph whose nodes it walks
    return _guarded(body.node.body, node.lineno, graph, loops)


def _guarded(block: list[ast.stmt], row: int, graph: str, loops: dict[str, str]) -> bool:
    """Walk down the statements holding `row`, noting loops over a graph's nodes, to an `if`
    whose body holds the row and whose test needs the meta on a node of `graph`."""
    for i, stmt in enumerate(block):
        if not (stmt.lineno <= row <= (stmt.end_lineno or stmt.lineno)):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False  # runs when called, not under the tests around it
        # A loop variable written earlier in the block may hold a node of another graph now.
        loops = {name: walked for name, walked in loops.items() if name not in _stored(block[:i])}
        if isinstance(stmt, ast.If) and block_spans(stmt.body, row):
            if _needs_meta(stmt.test, block[:i], graph, loops):
                return True
            return _guarded(stmt.body, row, graph, loops)
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and block_spans(stmt.body, row):
            walked = walked_graph(stmt)
            # The loop's names hold its items now; a plain name over `G.nodes` holds G's nodes.
            inner = {name: g for name, g in loops.items() if name not in _stored([stmt.target])}
            if walked is not None and isinstance(stmt.target, ast.Name):
                inner[stmt.target.id] = walked
            return _guarded(stmt.body, row, graph, inner)
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner_block = getattr(stmt, field, None)
            if isinstance(inner_block, list) and block_spans(inner_block, row):
                if isinstance(stmt, ast.If):
                    return False  # the `else:` of a test: it runs when the test fails
                blocks = [h.body for h in inner_block] if field == "handlers" else [inner_block]
                return any(block_spans(b, row) and _guarded(b, row, graph, loops) for b in blocks)
        return False
    return False


def _stored(nodes: list[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _needs_meta(test: ast.expr, earlier: list[ast.stmt], graph: str, loops: dict[str, str]) -> bool:
    """Whether `test` holds only when a loop node of `graph` carries the key."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_needs_meta(value, earlier, graph, loops) for value in test.values)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, right = test.ops[0], test.comparators[0]
        if isinstance(op, ast.In) and _is_key(test.left):
            return _meta_of_loop_node(right, graph, loops)
        if isinstance(op, ast.IsNot) and isinstance(right, ast.Constant) and right.value is None:
            test = test.left  # `X is not None`: as `X` for a value that is None when absent
        else:
            return False
    if _meta_lookup(test, graph, loops):
        return True
    return isinstance(test, ast.Name) and _bound_to_lookup(test.id, earlier, graph, loops)


def _bound_to_lookup(name: str, earlier: list[ast.stmt], graph: str, loops: dict[str, str]) -> bool:
    """`name` was last bound in this block by a lookup of the key on a loop node's meta, and
    nothing after that binding writes it."""
    for k in range(len(earlier) - 1, -1, -1):
        stmt = earlier[k]
        if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(stmt)):
            single = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            return single and _meta_lookup(stmt.value, graph, loops)
    return False


def _meta_lookup(expr: ast.expr, graph: str, loops: dict[str, str]) -> bool:
    """`n.meta.get("grapharg"[, None])` or `n.meta["grapharg"]` for a loop node `n` of `graph`."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "get":
        default_none = len(expr.args) == 1 or (
            len(expr.args) == 2 and isinstance(expr.args[1], ast.Constant) and expr.args[1].value is None
        )
        return (
            default_none
            and not expr.keywords
            and _is_key(expr.args[0])
            and _meta_of_loop_node(expr.func.value, graph, loops)
        )
    if isinstance(expr, ast.Subscript):
        return _is_key(expr.slice) and _meta_of_loop_node(expr.value, graph, loops)
    return False


def _is_key(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value == _KEY


def _meta_of_loop_node(expr: ast.expr, graph: str, loops: dict[str, str]) -> bool:
    """`n.meta` for a variable `n` of an enclosing loop over the nodes of `graph`."""
    return (
        isinstance(expr, ast.Attribute)
        and expr.attr == "meta"
        and isinstance(expr.value, ast.Name)
        and loops.get(expr.value.id) == graph
    )


def walked_graph(loop: ast.For | ast.AsyncFor) -> str | None:
    """`G` of a loop over `G.nodes`, `list(G.nodes)` or `reversed(G.nodes)` (as written)."""
    it = loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in _NODE_LISTS and len(it.args) == 1:
        it = it.args[0]
    if isinstance(it, ast.Attribute) and it.attr == "nodes":
        return ast.unparse(it.value)
    return None


def _inserting_graph(func: ast.AST, node: ast.expr) -> str | None:
    """`G` of the direct insertion `G.call_function(node, ...)` / `G.create_node(..., node, ...)`
    whose arguments hold the packet (as written)."""
    for call in ast.walk(func):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _INSERTS):
            continue
        if any(arg is node for arg in call.args) or any(kw.value is node for kw in call.keywords):
            return ast.unparse(call.func.value)
    return None

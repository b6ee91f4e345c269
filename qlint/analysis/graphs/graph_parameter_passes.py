"""A pass inserting into the graph of its own first parameter (`gm.graph.call_function(op,
...)`): a module-level function (`graph_parameter_pass`) or one nested in a function, which
calls it there alone (`nested_pass`). What the callers do with that graph next decides what
the inserted node meets (`stripped_later.stripped_after`, `compiled_next.compiled_after`,
`dynamo_graph_passes`).
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.call_statements import statement_lists
from qlint.analysis.names.functions import Body, bodies, module_function
from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.statement_walk import target_names
from qlint.analysis.tree_walk import walk

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def graph_parameter_pass(ctx: FileContext, body: Body | None, expr: ast.expr) -> ast.AST | None:
    """The module-level function `body` when the insertion at `expr` is made into its first
    parameter's graph: `gm.graph.call_function(op, ...)`, `gm.call_function(...)`, or the same
    on a local bound once to `gm.graph`, the parameter never bound anew. What its callers do
    with that graph next decides what the inserted node meets (`stripped_after`,
    `compiled_next.compiled_after`)."""
    func = module_function(body, ctx.scope)
    if func is None:
        return None
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    return func if params and _inserts_into(func, params[0], expr) else None


def nested_pass(ctx: FileContext, body: Body | None, expr: ast.expr) -> ast.AST | None:
    """The function that `body` is a statement of, when `body` is a function inserting into
    its first parameter's graph (as `graph_parameter_pass` asks of a module's function)."""
    if body is None or not isinstance(body.node, _FUNCS) or body.node.decorator_list:
        return None
    func = body.node
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if not params or not _inserts_into(func, params[0], expr):
        return None
    for owner in bodies(ctx.tree, ctx.scope, ctx.cache):
        if isinstance(owner.node, _FUNCS) and any(func in stmts for stmts in statement_lists(owner.node)):
            return owner.node
    return None


_WALK = "_qlint_graph_parameter_walk"


def inserts_into_parameter(func: ast.AST, param: str, expr: ast.expr) -> bool:
    """Whether the insertion at `expr` is made into the graph of `func`'s parameter `param`
    (`param.graph.call_function(op, ...)`, `param.call_function(...)`, or the same on a local
    bound once to `param.graph`), `param` never bound anew in `func`."""
    return _inserts_into(func, param, expr)


def _inserts_into(func: ast.AST, param: str, expr: ast.expr) -> bool:
    # One walk of the function, its bindings read once: asked of every reported insertion,
    # and kept on the function, which an editor's next check reuses while it is unchanged.
    nodes = kept_on_node(func, _WALK, _walk_below)
    # The receiver first: a method's insertion into the graph of a module it is handed
    # (`model.graph.call_function(...)`, asked as `self`'s) is settled without the bindings.
    call = next((n for n in nodes if isinstance(n, ast.Call) and any(a is expr for a in n.args)), None)
    parts = dotted_parts(call.func.value) if call is not None and isinstance(call.func, ast.Attribute) else None
    if parts is None:
        return False
    if parts not in ([param], [param, "graph"]) and not any(
        isinstance(n, ast.Assign) and dotted_parts(n.value) == [param, "graph"] and parts[0] in _bound(n) for n in nodes
    ):
        return False  # neither the parameter's graph nor a local bound to it
    bound = [(node, _bound(node)) for node in nodes]
    aliases = {param}
    for node, targets in bound:
        for target in targets:
            if target == param:
                return False
            value = node.value if isinstance(node, ast.Assign) else None
            if dotted_parts(value) == [param, "graph"] and isinstance(node, ast.Assign) and len(node.targets) == 1:
                aliases.add(target)
    for alias in aliases - {param}:
        if sum(1 for _, targets in bound for t in targets if t == alias) != 1:
            return False
    return parts in ([param], [param, "graph"]) or parts[0] in aliases - {param}


def _walk_below(func: ast.AST) -> list[ast.AST]:
    """`walk(func)` without `func` itself, which is no call or binding: a list kept on the
    node that held the node would make it a reference cycle, which outlives its tree until
    a collection."""
    nodes = walk(func)
    del nodes[0]
    return nodes


def _bound(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in node.items]
    else:
        return []
    return [name for t in targets if t is not None for name in target_names(t)]

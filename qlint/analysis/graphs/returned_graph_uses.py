"""Packets matched in, or inserted into, a graph a function of the project returned stripped
(QL101, QL102).

SHARK's eager runner binds `fx_graph = import_with_fx(model, x, mlir_type="fx")` and hands it
to `compiled_graph(gm, ...)`, which loops over `gm.graph.nodes` keyed on packets: the importer
has stripped that graph to packets before returning it (`stripped_returns`), so the packets
match. Two shapes are followed, in the module of the matcher or insertion:

- in the same body: a name bound once, to the call of such a function, before the loop over
  its graph's nodes (or the insertion into its graph), never bound anew;
- through a parameter: the function holding the loop (or insertion) works on its parameter's
  graph, never binds the parameter anew, and every use of its name in the module is a call
  handing it such a name (bound once in the calling body, before the call) or such a call;
  a public function named in another module of the project may be called there with
  anything, and is left out.

A graph read from `gm.graph` counts when the local is bound once, to that graph alone.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.stripped_later import named_elsewhere
from qlint.analysis.graphs.stripped_returns import called_function, returns_stripped
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.statement_walk import target_names
from qlint.analysis.tree_walk import name_loads, own_nodes

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOOPS = (ast.For, ast.AsyncFor)
_INSERTS = frozenset({"call_function", "create_node"})


def matched_on_stripped_return(ctx: FileContext, body: Body | None, row: int) -> bool:
    """Whether the matcher at `row` sits in a loop over the nodes of a graph module that a
    function of the project returned stripped to packets."""
    if body is None:
        return False
    nodes = _own_nodes(ctx, body.node)
    for loop in nodes:
        if isinstance(loop, _LOOPS) and loop.lineno <= row <= (loop.end_lineno or loop.lineno):
            graph = _graph_module(nodes, _nodes_receiver(loop.iter))
            if graph is not None and _stripped_value(ctx, body, nodes, graph, loop.lineno):
                return True
    return False


def inserted_on_stripped_return(ctx: FileContext, body: Body | None, packet: ast.expr) -> bool:
    """Whether `packet` is inserted (`gm.graph.call_function(packet, ...)`) into a graph
    module that a function of the project returned stripped to packets."""
    if body is None:
        body = bodies(ctx.tree, ctx.scope, ctx.cache)[0]  # the module's own statements
    nodes = _own_nodes(ctx, body.node)
    for call in nodes:
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in _INSERTS
            and any(a is packet for a in call.args)
        ):
            graph = _graph_module(nodes, dotted_parts(call.func.value))
            return graph is not None and _stripped_value(ctx, body, nodes, graph, call.lineno)
    return False


def _nodes_receiver(it: ast.expr) -> list[str] | None:
    """`gm.graph` of `gm.graph.nodes` (also in `list(...)`), `g` of `g.nodes`."""
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("list", "tuple"):
        if len(it.args) != 1 or it.keywords:
            return None
        it = it.args[0]
    parts = dotted_parts(it)
    return parts[:-1] if parts and parts[-1] == "nodes" else None


def _graph_module(nodes: list[ast.AST], graph: list[str] | None) -> str | None:
    """The graph module's name for a graph spelled `gm.graph`, or `g` bound once to it."""
    if graph is None:
        return None
    if len(graph) == 2 and graph[1] == "graph":
        return graph[0]
    if len(graph) != 1:
        return None
    bound = _bindings(nodes, graph[0])
    if len(bound) != 1 or not isinstance(bound[0], ast.Assign) or len(bound[0].targets) != 1:
        return None
    parts = dotted_parts(bound[0].value)
    return parts[0] if parts is not None and len(parts) == 2 and parts[1] == "graph" else None


def _stripped_value(ctx: FileContext, body: Body, nodes: list[ast.AST], name: str, row: int) -> bool:
    """Whether `name`, where it is read at `row` of `body`, holds a graph a function of the
    project returned stripped: bound once there, to such a call, before `row`; or the
    parameter of a function every call of which hands it such a graph."""
    func = body.node
    params = [a.arg for a in parameter_args(func, star=False)] if isinstance(func, _FUNCS) else []
    if name in params and not _module_function(ctx, func):
        return False  # a method's or decorated function's calls are not all seen here
    if _declared_global(ctx, name):
        return False
    bound = _bindings(nodes, name)
    if name in params:
        if bound:
            return False
        memo = ctx.cache.setdefault(_CALLS_MEMO, {})
        key = (id(func), name)
        if key not in memo:
            memo[key] = _every_call_hands_stripped(ctx, body, params.index(name), name)
        return memo[key]
    return len(bound) == 1 and bound[0].lineno < row and _assigned_stripped_call(ctx, body, bound[0])


def _assigned_stripped_call(ctx: FileContext, body: Body, stmt: ast.AST) -> bool:
    """`name = f(...)`, `f` a function of the project that returns its graph stripped."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    return isinstance(stmt.value, ast.Call) and _stripped_call(ctx, body, stmt.value)


def _stripped_call(ctx: FileContext, body: Body, call: ast.Call) -> bool:
    found = called_function(ctx, ctx, body, call)
    return found is not None and returns_stripped(ctx, found[0], found[1])


def _every_call_hands_stripped(ctx: FileContext, body: Body, index: int, param: str) -> bool:
    """Whether every use of the module function `body` in the module is a call handing its
    parameter `param` (at `index`) a graph a function of the project returned stripped."""
    func = body.node
    if not _module_function(ctx, func):
        return False
    calls = shadowed = 0
    for caller in bodies(ctx.tree, ctx.scope, ctx.cache):
        nodes = _own_nodes(ctx, caller.node)
        uses = [n for n in nodes if isinstance(n, ast.Name) and n.id == func.name and isinstance(n.ctx, ast.Load)]
        if not uses:
            continue
        if isinstance(caller.node, _FUNCS) and func.name in caller.local:
            shadowed += len(uses)  # a local of that name (SHARK's `compiled_graph` builds a dict so named)
            continue
        parents = {id(child): node for node in nodes for child in ast.iter_child_nodes(node)}
        for use in uses:
            call = parents.get(id(use))
            if not (isinstance(call, ast.Call) and call.func is use):
                return False  # handed on: called with what, not known
            arg = _argument(call, index, param)
            if arg is None:
                return False
            if isinstance(arg, ast.Call):
                held = _stripped_call(ctx, caller, arg)
            elif isinstance(arg, ast.Name) and not _declared_global(ctx, arg.id):
                bound = _bindings(nodes, arg.id)
                own = parameter_args(caller.node, star=False) if isinstance(caller.node, _FUNCS) else []
                held = (
                    len(bound) == 1
                    and bound[0].lineno < call.lineno
                    and arg.id not in {a.arg for a in own}
                    and _assigned_stripped_call(ctx, caller, bound[0])
                )
            else:
                held = False
            if not held:
                return False
            calls += 1
    # Uses no body holds as its own code (a decorator, a default value) are not calls seen here.
    if calls == 0 or calls + shadowed != len(name_loads(ctx.tree, func.name)):
        return False
    return func.name.startswith("_") or not named_elsewhere(ctx, func.name)


def _module_function(ctx: FileContext, func: ast.AST) -> bool:
    """An undecorated function of the module's own scope: the only kind whose every call
    `_every_call_hands_stripped` reads (asked first: most insertions are made in methods)."""
    return not func.decorator_list and ctx.scope.functions.get(func.name) is func


def _own_nodes(ctx: FileContext, owner: ast.AST) -> list[ast.AST]:
    """`own_nodes` of a body, kept on it: every finding of a body asks for them, and an
    editor's next check reuses the unchanged functions' nodes (`statement_reuse`)."""
    return kept_on_node(owner, _NODES_KEPT, own_nodes)


def _argument(call: ast.Call, index: int, param: str) -> ast.expr | None:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if index < len(call.args):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == param), None)


def _bindings(nodes: list[ast.AST], name: str) -> list[ast.AST]:
    """The statements (and other nodes) of a body that bind `name`."""
    return [node for node in nodes if name in _bound_names(node)]


def _bound_names(node: ast.AST) -> set[str]:
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
    elif isinstance(node, ast.comprehension):
        targets = [node.target]
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        return {a.asname or a.name.partition(".")[0] for a in node.names}
    elif isinstance(node, (*_FUNCS, ast.ClassDef, ast.ExceptHandler)):
        return {node.name} if node.name else set()
    else:
        return set()
    # An item stored on the value (`gm.meta[k] = v`) leaves it the same graph module; an
    # attribute stored on it (`gm.graph = other`) may replace the graph the loop walks.
    replaced = {t.value.id for t in targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)}
    return {name for t in targets for name in target_names(t)} | replaced


def _declared_global(ctx: FileContext, name: str) -> bool:
    """A function that rebinds the module's `name` (`global name`, or an enclosing function's
    with `nonlocal name`) may change it at any time."""
    if "global" not in ctx.text and "nonlocal" not in ctx.text:
        return False
    declared = ctx.cache.get(_DECLARED)
    if declared is None:
        declared = ctx.cache[_DECLARED] = frozenset(
            n for node in ast.walk(ctx.tree) if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names
        )
    return name in declared


_DECLARED = "returned_graph_uses.declared"
_NODES_KEPT = "_qlint_returned_graph_uses_nodes"
_CALLS_MEMO = "returned_graph_uses.calls"

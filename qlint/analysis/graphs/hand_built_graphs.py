"""Graphs a function builds by hand and keeps to itself, or feeds only to passes that run on
Dynamo's output graph (QL101, QL102).

A test of a Dynamo-graph pass builds the graph the pass expects by hand
(`gm = GraphModule(root, Graph())`, then `gm.graph.call_function(...)`): Dynamo's graph
records a packet the user's code called as that packet, and creates some nodes as packets
itself (`torch.ops.streams.record_stream`), so the test inserts the packet, runs the pass and
looks for the packet the pass set. Nothing traces such a graph: its nodes carry what the
function put there and what the pass made of it, so a packet inserted or matched there is
the form the graph holds.

Only a graph the function both builds and keeps counts: every binding of its name is a
construction of an empty `Graph`, a `GraphModule` around one, or the result of such a pass on
it; every other use runs it, calls its own methods, walks or prints its nodes. Handed to any
other function (a pass that runs on exported or ATen graphs, an export, a re-trace), stored,
aliased or returned, the graph is not the function's alone, and the finding stands.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import aot_backends, dynamo_graph_passes
from qlint.analysis.graphs.project_texts import read_module
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import Parents, walk_kinds
from qlint.analysis.tree_walk import parents as tree_parents

_GRAPHS = frozenset({"torch.fx.Graph", "torch.fx.graph.Graph"})
_MODULES = frozenset({"torch.fx.GraphModule", "torch.fx.graph_module.GraphModule"})
# Builtins that read a graph's nodes and keep nothing of them.
_READERS = frozenset({"len", "list", "tuple", "set", "str", "repr", "print", "iter", "enumerate", "sorted"})
_INSERTS = frozenset({"call_function", "create_node"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CACHE_KEY = "graphs.hand_built"
# `tree_walk.walk_kinds` of these: the walks QL102 makes of an inserting function per finding.
_CALLS = frozenset({ast.Call})
_ATTRIBUTES = frozenset({ast.Attribute})


def inserted_into_kept_graph(ctx: FileContext, body: Body | None, packet: ast.expr, op: str) -> bool:
    """Whether `packet` is an argument of `<g>.call_function(...)`/`create_node(...)` (or of
    `<gm>.graph.<that>`) on a graph the function `body` builds by hand and keeps (above). Not
    when the function spells an overload of the op `op`: it expects that form somewhere."""
    call = insertion_of(body, packet)
    if call is None:
        return False
    parts = dotted_parts(call.func.value)
    # The walk for an overload's spelling last: most insertions are into a graph the function
    # was handed (`model.graph`), which `kept_graph` rules out at its first step.
    return (
        bool(parts)
        and parts[1:] in ([], ["graph"])
        and kept_graph(ctx, body, parts[0])
        and not spells_overload(body.node, op)
    )


def insertion_of(body: Body | None, packet: ast.expr) -> ast.Call | None:
    """The `<receiver>.call_function(...)`/`create_node(...)` in the function `body` that
    `packet` is an argument of (positional or keyword); None out of a function."""
    if body is None or not isinstance(body.node, _FUNCS):
        return None
    for node in kept_on_node(body.node, _CALLS_KEPT, _calls):
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr in _INSERTS
            and any(a is packet for a in (*node.args, *(k.value for k in node.keywords)))
        ):
            return node
    return None


def _calls(func: ast.AST) -> list[ast.AST]:
    return walk_kinds(func, _CALLS)


# Every reported insertion asks for its function's calls (twice: `self_built_graphs` too);
# kept on the function, which an editor's next check reuses while it is unchanged.
_CALLS_KEPT = "_qlint_hand_built_calls"


def matched_on_kept_graph(ctx: FileContext, body: Body | None, row: int) -> bool:
    """Whether the matcher at `row` sits in a loop (or comprehension) over the nodes of a graph
    the function `body` builds by hand and keeps (`for n in gm.graph.nodes`, `g.nodes`)."""
    if body is None or not isinstance(body.node, _FUNCS):
        return False
    for node in ast.walk(body.node):
        if isinstance(node, (ast.For, ast.AsyncFor)) and node.lineno <= row <= (node.end_lineno or row):
            iters = [node.iter]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            if not node.lineno <= row <= (node.end_lineno or row):
                continue
            iters = [g.iter for g in node.generators]
        else:
            continue
        for it in iters:
            parts = dotted_parts(it)
            if parts and parts[1:] in (["nodes"], ["graph", "nodes"]) and kept_graph(ctx, body, parts[0]):
                return True
    return False


def spells_overload(node: ast.AST, op: str) -> bool:
    """Whether `node` spells an attribute of an attribute named `op` (`...quantize.Tensor`)."""
    return any(isinstance(n.value, ast.Attribute) and n.value.attr == op for n in walk_kinds(node, _ATTRIBUTES))


def kept_graph(ctx: FileContext, body: Body, name: str) -> bool:
    """Whether the local `name` of the function `body` is a graph it builds by hand and keeps."""
    memo = ctx.cache.setdefault(_CACHE_KEY, {})
    key = (id(body.node), name)
    if key not in memo:
        memo[key] = (body.node, _kept(ctx, body, name, frozenset()))
    return memo[key][1]


def _kept(ctx: FileContext, body: Body, name: str, seen: frozenset[str]) -> bool:
    func = body.node
    if name in seen:
        return True  # asked while its own uses are read: that answer decides
    if name in {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}:
        return False
    seen = seen | {name}
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
    imports = aot_backends.function_imports(ctx, body)
    parents = tree_parents(func)
    built = False
    for node in ast.walk(func):
        if not isinstance(node, ast.Name) or node.id != name:
            continue
        if isinstance(node.ctx, ast.Store):
            stmt = parents.get(id(node))
            if not (isinstance(stmt, ast.Assign) and stmt.targets == [node]):
                return False  # a loop target, a tuple, `with ... as`: not read
            if _built(stmt.value, resolver, body, ctx, seen):
                built = True
            elif not _dynamo_pass_on(ctx, stmt.value, name, resolver, imports):
                return False
        elif isinstance(node.ctx, ast.Del) or not _kept_use(ctx, body, node, parents, seen, resolver, imports):
            return False
    return built


def _built(value: ast.expr, resolver: Resolver, body: Body, ctx: FileContext, seen: frozenset[str]) -> bool:
    """`Graph()`, or `GraphModule(root, <Graph() or a graph built so>)`."""
    if not isinstance(value, ast.Call):
        return False
    name = resolver.qualname(value.func)
    if name in _GRAPHS:
        return not value.args and not value.keywords
    if name not in _MODULES:
        return False
    graph = module_graph(value)
    if isinstance(graph, ast.Name):
        return _kept(ctx, body, graph.id, seen)
    return graph is not None and _built(graph, resolver, body, ctx, seen)


def module_graph(call: ast.Call) -> ast.expr | None:
    """The graph argument of `GraphModule(root, graph)`."""
    return call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "graph"), None)


def _kept_use(
    ctx: FileContext,
    body: Body,
    node: ast.Name,
    parents: Parents,
    seen: frozenset[str],
    resolver: Resolver,
    imports: dict[str, str],
) -> bool:
    name = node.id
    parent = parents.get(id(node))
    if isinstance(parent, ast.Call) and parent.func is node:
        return True  # run eagerly
    if isinstance(parent, ast.Call):
        # Handed to a Dynamo-graph pass whose result is the graph again (or unused), or
        # wrapped as the graph of a module that is itself kept.
        stmt = parents.get(id(parent))
        if isinstance(stmt, ast.Assign) and stmt.value is parent:
            targets = stmt.targets
            if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                return False
            if resolver.qualname(parent.func) in _MODULES:
                return _kept(ctx, body, targets[0].id, seen)
            return targets[0].id == name and _dynamo_pass_on(ctx, parent, name, resolver, imports)
        if isinstance(stmt, ast.Expr):
            return _dynamo_pass_on(ctx, parent, name, resolver, imports)
        return False
    if not isinstance(parent, ast.Attribute):
        return False
    # `gm.graph.call_function(...)`, `gm.recompile()`, `for n in gm.graph.nodes`,
    # `len(g.nodes)`, `f"{gm.graph}"`: the chain's top, and what holds it.
    top = parent
    while isinstance(parents.get(id(top)), ast.Attribute):
        top = parents[id(top)]
    holder = parents.get(id(top))
    if isinstance(holder, ast.Call):
        if holder.func is top:
            return True
        return isinstance(holder.func, ast.Name) and holder.func.id in _READERS and top in holder.args
    if isinstance(holder, (ast.For, ast.AsyncFor, ast.comprehension)):
        return holder.iter is top
    return isinstance(holder, (ast.FormattedValue, ast.Compare))


def _dynamo_pass_on(ctx: FileContext, value: ast.expr, name: str, resolver: Resolver, imports: dict[str, str]) -> bool:
    """`p(name)` with `p` a function a backend of the project runs on Dynamo's output graph."""
    if not (
        isinstance(value, ast.Call)
        and len(value.args) == 1
        and not value.keywords
        and isinstance(value.args[0], ast.Name)
        and value.args[0].id == name
    ):
        return False
    parts = dotted_parts(value.func)
    if not parts:
        return False
    qualname = resolver.qualname(value.func)
    if qualname is None and parts[0] in imports:
        qualname = ".".join((imports[parts[0]], *parts[1:]))
    if qualname is None or "." not in qualname:
        return False
    module, _, func = qualname.rpartition(".")
    return _runs_on_dynamo_graph(ctx, module, func)


def _runs_on_dynamo_graph(ctx: FileContext, module: str, func: str) -> bool:
    memo = ctx.cache.setdefault(_CACHE_KEY + ".passes", {})
    if (module, func) not in memo:
        memo[(module, func)] = _read_pass(ctx, module, func)
    return memo[(module, func)]


def _read_pass(ctx: FileContext, module: str, func: str) -> bool:
    path = ctx.project.find_module_in_check(module, ctx.path)
    if path is None:
        return False
    other = ctx if os.path.abspath(path) == os.path.abspath(ctx.path) else read_module(ctx, path)
    if other is None:
        return False
    node = other.scope.functions.get(func)
    if node is None:
        return False
    body = next((b for b in bodies(other.tree, other.scope, other.cache) if b.node is node), None)
    try:
        return dynamo_graph_passes.sees_dynamo_graph(other, body)
    finally:
        # What that question read is what this check's answer depends on.
        ctx.project.hand_over_dependencies(other.path, ctx.path)

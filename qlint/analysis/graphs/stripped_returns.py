"""Functions whose every returned FX graph is one they have just stripped to packets (QL101,
QL102).

SHARK's `import_with_fx` traces a model, strips the graph with its own nested loop, runs its
f16 and GPTQ passes (which insert packets) and, with `mlir_type="fx"`, returns that graph:
whoever matches on what it returns sees packets everywhere (`returned_graph_uses` asks it).

Only a function that strips a graph unconditionally (a statement of its own body:
`strip_overloads(gm)`, the project's strip loop, or a helper made of one, as `stripped_here`
recognises it) and whose every return that can hand back a GraphModule returns that graph,
after the strip. Between the strip and such a return, the graph may only be recompiled or
linted (`gm.recompile()`), cast (`gm = gm.half()`) or handed to a pass of the project that reads it
through its graph alone and spells no overload: anything else (handed to a library, bound
anew, a pass that may set an overload) leaves its form unknown. A return of another name (a
copy made before the strip, another graph), before the strip, or of a call, makes the
function unknown; a return of no graph at all (nothing, a constant, a tuple, a TorchScript
module made by `torch.jit.script`/`trace`) is passed over: none is a GraphModule whose
nodes a caller could match.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.overload_spellings import names_an_overload
from qlint.analysis.graphs.project_texts import read_module
from qlint.analysis.graphs.strip_loops import keeps_module, upkeep
from qlint.analysis.graphs.stripped_here import strips_graph
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.tree_walk import own_nodes, statement_around

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# What a strip is spelled with: a module that spells neither strips no graph of its own.
_STRIP_WORDS = ("overloadpacket", "strip_overloads")
# Values that are no GraphModule: a caller binding one to a name has nothing to match on.
_NO_GRAPH = (ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.Set, ast.JoinedStr)
# TorchScript compilers: what they return has a TorchScript graph, not FX nodes.
_SCRIPTING = frozenset({"torch.jit.script", "torch.jit.trace"})
_CACHE_KEY = "stripped_returns"


def called_function(
    check: FileContext, ctx: FileContext, body: Body, call: ast.Call, stripping: bool = True
) -> tuple[FileContext, ast.AST] | None:
    """The function of the project `call` (made in `body` of the module `ctx`) runs, with the
    module holding it: one nested in the body's function, one of the module, or one imported
    from another module of the project, read for the check of `check` (with `stripping`, only
    when its text can strip a graph)."""
    func = call.func
    if isinstance(func, ast.Name):
        if isinstance(body.node, _FUNCS):
            for stmt in body.node.body:
                if isinstance(stmt, _FUNCS) and stmt.name == func.id:
                    return ctx, stmt
        own = ctx.scope.functions.get(func.id)
        if own is not None and func.id not in body.local:
            return ctx, own
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
    module, _, attr = (resolver.qualname(func) or "").rpartition(".")
    if not module or not attr:
        return None
    path = ctx.project.find_module_in_check(module, ctx.path)
    if path is None or os.path.abspath(path) == os.path.abspath(ctx.path):
        return None
    text = ctx.project.text(path)
    if text is None or (stripping and not any(w in text for w in _STRIP_WORDS)):
        check.project.record_read(check.path, path, check.project.digest(path))  # a strip added there counts
        return None
    other = _module(check, path)
    found = other.scope.functions.get(attr) if other is not None else None
    return (other, found) if found is not None else None


def returns_stripped(check: FileContext, ctx: FileContext, func: ast.AST) -> bool:
    """Whether `func` (a function of the module `ctx`, the one `check` checks or another it
    reads) returns, whenever it returns a graph, the graph it has stripped to packets in its
    own body."""
    if not isinstance(func, _FUNCS) or func.decorator_list or not any(w in ctx.words for w in _STRIP_WORDS):
        return False
    memo = check.cache.setdefault(_CACHE_KEY, {})
    if id(func) not in memo:
        memo[id(func)] = (func, _returns_stripped(check, ctx, func))
    return memo[id(func)][1]


def _returns_stripped(check: FileContext, ctx: FileContext, func: ast.AST) -> bool:
    body = _body_of(ctx, func)
    if body is None:
        return False
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
    functions = {**ctx.scope.functions, **{s.name: s for s in func.body if isinstance(s, _FUNCS)}}
    # The statements of the function's own body (run whatever its branches do) that strip a
    # graph, by the graph's name.
    strips: dict[str, ast.stmt] = {}
    for stmt in func.body:
        graph = _stripped_name(stmt)
        if graph is not None and graph not in strips and strips_graph(stmt, graph, resolver, functions):
            strips[graph] = stmt
    if not strips:
        return False
    nodes = own_nodes(func)
    parents = {id(child): node for node in nodes for child in ast.iter_child_nodes(node)}
    stripped = 0
    for ret in nodes:
        if not isinstance(ret, ast.Return) or ret.value is None or isinstance(ret.value, _NO_GRAPH):
            continue
        value = ret.value
        if _scripted(value, nodes, resolver):
            continue
        if not isinstance(value, ast.Name) or value.id not in strips:
            return False  # another graph, or one made right there: its form is unknown
        strip = strips[value.id]
        if ret.lineno <= (strip.end_lineno or strip.lineno):
            return False  # returned before the strip
        if not _kept_until(check, ctx, body, nodes, parents, value.id, strip, ret):
            return False
        stripped += 1
    return stripped > 0


def _stripped_name(stmt: ast.stmt) -> str | None:
    """The graph a statement could strip: `h(gm)`, or a loop over `gm`'s nodes."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and stmt.value.args:
        first = stmt.value.args[0]
        return first.id if isinstance(first, ast.Name) else None
    if isinstance(stmt, ast.For):
        it = stmt.iter
        if isinstance(it, ast.Call) and it.args:
            it = it.args[0]
        parts = dotted_parts(it)
        return parts[0] if parts else None
    return None


def _scripted(value: ast.expr, nodes: list[ast.AST], resolver: Resolver) -> bool:
    """`torch.jit.script(gm)`, or a name bound only to such calls in the function."""
    if isinstance(value, ast.Call):
        return resolver.qualname(value.func) in _SCRIPTING
    if not isinstance(value, ast.Name):
        return False
    bound = [
        n
        for n in nodes
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With, ast.NamedExpr))
        and any(isinstance(t, ast.Name) and t.id == value.id and isinstance(t.ctx, ast.Store) for t in ast.walk(n))
    ]
    return bool(bound) and all(
        isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.value, ast.Call)
        and resolver.qualname(n.value.func) in _SCRIPTING
        for n in bound
    )


def _kept_until(check, ctx, body, nodes, parents, graph: str, strip: ast.stmt, ret: ast.Return) -> bool:
    """Whether every use of `graph` from the end of the strip to the return (to the end of a
    loop holding the return: it runs again) keeps its nodes packets."""
    start = (strip.end_lineno or strip.lineno, strip.end_col_offset or 0)
    end = (ret.end_lineno or ret.lineno, ret.end_col_offset or 0)
    for loop in nodes:
        if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) and loop.lineno <= ret.lineno <= (loop.end_lineno or 0):
            end = max(end, (loop.end_lineno or loop.lineno, loop.end_col_offset or 0))
    for name in nodes:
        if not (isinstance(name, ast.Name) and name.id == graph and start <= (name.lineno, name.col_offset) < end):
            continue
        if name is ret.value:
            continue
        stmt = statement_around(name, parents)
        if stmt is None:
            return False
        if keeps_module(stmt, graph) or upkeep(stmt, graph):
            continue
        if not _packet_pass_call(check, ctx, body, stmt, name, graph):
            return False
    return True


def _packet_pass_call(
    check: FileContext, ctx: FileContext, body: Body, stmt: ast.stmt, name: ast.Name, graph: str
) -> bool:
    """`p(gm)` as a statement of its own, `gm` its only argument naming the graph, `p` a pass
    of the project that keeps packets (`_keeps_packets`)."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    if not call.args or call.args[0] is not name:
        return False
    others = [*call.args[1:], *(k.value for k in call.keywords)]
    if any(isinstance(n, ast.Name) and n.id == graph for a in others for n in ast.walk(a)):
        return False
    found = called_function(check, ctx, body, call, stripping=False)
    return found is not None and _keeps_packets(*found)


def _keeps_packets(ctx: FileContext, func: ast.AST) -> bool:
    """A pass that reads its first parameter's module only through its graph
    (`gm.graph.nodes`, `gm.graph.call_function(...)`) or recompiles it, never hands it on nor
    binds it anew, and spells no overload (a node it set to one would not be a packet)."""
    if not isinstance(func, _FUNCS) or func.decorator_list:
        return False
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    body = _body_of(ctx, func)
    if not params or body is None:
        return False
    nodes = own_nodes(func)
    parents = {id(child): node for node in nodes for child in ast.iter_child_nodes(node)}
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
    if names_an_overload(resolver, nodes):
        return False
    for node in nodes:
        if isinstance(node, ast.Name) and node.id == params[0]:
            parent = parents.get(id(node))
            if not isinstance(node.ctx, ast.Load) or not isinstance(parent, ast.Attribute):
                return False
            through_graph = parent.attr == "graph" and isinstance(parents.get(id(parent)), ast.Attribute)
            if not (through_graph or parent.attr == "recompile"):
                return False
        elif isinstance(node, (*_FUNCS, ast.Lambda, ast.ClassDef)):
            return False  # code of its own that may see the graph
    return True


def _body_of(ctx: FileContext, func: ast.AST) -> Body | None:
    return next((b for b in bodies(ctx.tree, ctx.scope, ctx.cache) if b.node is func), None)


def _module(check: FileContext, path: str) -> FileContext | None:
    """Another module of the project, read once per check (its content recorded as read)."""
    modules = check.cache.setdefault("stripped_returns.modules", {})
    key = os.path.abspath(path)
    if key not in modules:
        modules[key] = read_module(check, path)
    else:
        check.project.record_read(check.path, path, check.project.digest(path))
    return modules[key]

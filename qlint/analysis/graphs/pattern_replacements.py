"""Packets a subgraph rewrite puts into graphs (QL101, QL102).

`torch.fx.replace_pattern(gm, pattern, replacement)` (and `replace_pattern_with_filters`)
symbolically traces a callable replacement and splices its graph in for each match: a call of
a packet in the replacement (`torch.ops.aten.scaled_dot_product_attention(q, k, v)`) becomes a
node whose target is that packet. ByteIR's torch-frontend rewrites attention patterns of
Dynamo's graph this way, and its next pass matches the packet it put there.

The pattern tells what graph the rewrite runs on, since the subgraph matcher compares targets
exactly: a pattern written with torch functions or tensor methods (`torch.matmul`,
`F.softmax`) matches only a graph that records those (Dynamo's, `symbolic_trace`'s), where
an ATen op is whatever a rewrite inserted; a pattern written with packets matches a graph of
packets. A pattern that spells an overload matches a graph of overloads, where the packet
sits beside nodes that carry overloads: no fact for a packet matcher, but an insertion QL102
reports (`packets_among_overloads`), unless the pattern also calls a packet (then its graph
is one its tracer recorded as called, not known to hold overloads only). A rewrite whose
pattern or replacement is not a function of the module (a graph built elsewhere, a lambda, an
attribute) is not read, but for a plain function of a class body read through the class
(`Fuse.replacement`, SGLang's NPU fusions): a module-level class of the module or one it imports
from the project, the function undecorated or a `staticmethod`, and taking no `self` or `cls`
(torch's tracer hands it every parameter: `self` is left unmatched, and a bound method read
through an instance fails its `FunctionType` assertion).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint.analysis.context import FileContext
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.op_refs import OpRef
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ModuleScope
from qlint.analysis.statement_walk import own_statements

_REWRITES = frozenset(
    {
        "torch.fx.replace_pattern",
        "torch.fx.subgraph_rewriter.replace_pattern",
        "torch.fx.subgraph_rewriter.replace_pattern_with_filters",
    }
)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CACHE_KEY = "pattern-replacements"
_AMONG_KEY = "pattern-replacements.among-overloads"
_NEEDLE = "replace_pattern"


def is_rewrite(qualname: str | None) -> bool:
    """Whether a callee's qualified name is one of torch's subgraph rewrites."""
    return qualname in _REWRITES


def blind_rewrite(ctx: FileContext, stmt: ast.stmt, graph: str, op: str, resolver: Resolver) -> bool:
    """Whether `stmt` is `replace_pattern(graph, pattern, replacement)` (torch's), both functions
    of the module that never name `op`: it matches and puts in other ops only
    (ByteIR's `preprocess_fx_graph` runs two rewrites before it strips the graph's overloads)."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call) or not is_rewrite(resolver.qualname(call.func)) or call.keywords:
        return False
    if len(call.args) != 3 or not isinstance(call.args[0], ast.Name) or call.args[0].id != graph:
        return False
    for arg in call.args[1:]:
        func = ctx.scope.functions.get(arg.id) if isinstance(arg, ast.Name) else None
        if not isinstance(func, _FUNCS):
            return False
        if any(isinstance(node, ast.Attribute) and node.attr == op for node in ast.walk(func)):
            return False
    return True


def rewrites_spelled(text: str) -> bool:
    """Whether a module's text may hold a subgraph rewrite (one the project scan does not keep:
    it spells no insertion)."""
    return _NEEDLE in text


def replaced_packets(ctx: FileContext) -> frozenset[tuple[str, str, str]]:
    """The keys of the packets the module's subgraph rewrites put into graphs that do not carry
    their overloads."""
    if _CACHE_KEY in ctx.cache:
        return ctx.cache[_CACHE_KEY]
    found: set[tuple[str, str, str]] = set()
    for _, (pattern_body, pattern_scope), (replacement_body, replacement_scope) in _rewrites(ctx):
        if any(not r.is_packet for r in op_spellings(ctx, pattern_body, calls_only=False, scope=pattern_scope)):
            continue  # the graph carries overloads
        found |= {r.key for r in op_spellings(ctx, replacement_body, scope=replacement_scope) if r.is_packet}
    ctx.cache[_CACHE_KEY] = frozenset(found)
    return ctx.cache[_CACHE_KEY]


def packets_among_overloads(ctx: FileContext) -> list[tuple[OpRef, ast.expr, ast.Call]]:
    """(packet, where the replacement calls it, the rewrite's call) for each packet a subgraph
    rewrite of the module splices into a graph of overloads (QL102): its pattern spells an
    overload, which the matcher compares exactly, and calls no packet (a pattern that calls
    both matches a graph its tracer recorded as called, whatever it is: not read)."""
    if _AMONG_KEY in ctx.cache:
        return ctx.cache[_AMONG_KEY]
    found: dict[tuple[int, int], tuple[OpRef, ast.expr, ast.Call]] = {}
    for call, (pattern_body, pattern_scope), (replacement_body, replacement_scope) in _rewrites(ctx):
        if replacement_scope is not ctx.scope:
            continue  # written in another module: not where this check's findings lie
        spelled = list(op_spellings(ctx, pattern_body, calls_only=False, scope=pattern_scope))
        called = op_spellings(ctx, pattern_body, scope=pattern_scope)
        if not any(not r.is_packet for r in spelled) or any(r.is_packet for r in called):
            continue
        resolver = Resolver(ctx.scope, ctx.project, ctx.optable, replacement_body.local, replacement_body.class_scope)
        for node in ast.walk(replacement_body.node):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
                ref = resolver.op_ref(node.func)
                if ref is not None and ref.is_packet:
                    found.setdefault((node.func.lineno, node.func.col_offset), (ref, node.func, call))
    ctx.cache[_AMONG_KEY] = list(found.values())
    return ctx.cache[_AMONG_KEY]


def _rewrites(ctx: FileContext) -> Iterator[tuple[ast.Call, _Traced, _Traced]]:
    """(call, pattern, replacement) of each torch subgraph rewrite of the module whose pattern
    and replacement are functions of the module or of a class's body (`_traced_function`), each
    with the scope of the module it is written in."""
    if not rewrites_spelled(ctx.words):
        return
    owned = {id(b.node): b for b in bodies(ctx.tree, ctx.scope, ctx.cache)}
    rows = ctx.lines_containing(_NEEDLE)
    for body in owned.values():
        resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
        for call in body.nodes(rows, frozenset({ast.Call})):
            if not is_rewrite(resolver.qualname(call.func)):
                continue
            pattern, replacement = _argument(call, 1, "pattern"), _argument(call, 2, "replacement")
            pattern_body = _traced_function(ctx, body, pattern, owned, resolver)
            replacement_body = _traced_function(ctx, body, replacement, owned, resolver, traced=False)
            if pattern_body is not None and replacement_body is not None:
                yield call, pattern_body, replacement_body


def _argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    if len(call.args) > index:
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


# A traced function's body, with the scope of the module it is written in.
_Traced = tuple[Body, ModuleScope]


def _traced_function(
    ctx: FileContext, body: Body, expr: ast.expr | None, owned: dict[int, Body], resolver: Resolver, traced: bool = True
) -> _Traced | None:
    """The body of the function `expr` names in the rewriting `body`: a module function (not a
    name of its own: a parameter may hold any callable), or `Cls.name` (`_class_function`); with
    `traced`, also the one a tracer call is handed (`symbolic_trace(pattern)`, a project's own
    tracing wrapper): the pattern's graph is its trace either way."""
    if traced and isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
        expr = expr.args[0]
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        if body.node is not ctx.tree and expr.value.id in body.local:
            return None
        return _class_function(ctx, expr.value.id, expr.attr, owned, resolver)
    if not isinstance(expr, ast.Name) or (body.node is not ctx.tree and expr.id in body.local):
        return None
    body = owned.get(id(ctx.scope.functions.get(expr.id)))
    return (body, ctx.scope) if body is not None and isinstance(body.node, _FUNCS) else None


def _class_function(
    ctx: FileContext, cls: str, name: str, owned: dict[int, Body], resolver: Resolver
) -> _Traced | None:
    """The body of the function `name` of the class body `cls` names, a module-level class of the
    module or one imported from another module of the project, read through the class: a plain
    function (undecorated, or a `staticmethod`) that takes no `self` or `cls`, and that no other
    binding of the class body replaces."""
    scope = ctx.scope
    found = scope.classes.get(cls) if cls not in scope.imports else None
    if found is None:
        qual = resolver.qualname(ast.Name(cls)) if cls in scope.imports else None
        module, _, attr = (qual or "").rpartition(".")
        scope = ctx.project.module_scope(module, ctx.path) if module else None
        if scope is None or scope is ctx.scope or attr in scope.imports or scope.assigns.get(attr):
            return None
        found = scope.classes.get(attr)
    func = found.methods.get(name) if found is not None else None
    if func is None or name in found.assigns or not _plain_function(func, scope):
        return None
    if scope is ctx.scope:
        body = owned.get(id(func))
        return (body, scope) if body is not None else None
    return Body(func, None, found, list(own_statements(func.body))), scope


def _plain_function(func: ast.FunctionDef | ast.AsyncFunctionDef, scope: ModuleScope) -> bool:
    """Whether the class attribute is the function itself, read through the class, and its
    parameters all placeholders the pattern's graph can match."""
    for decorator in func.decorator_list:
        if not (isinstance(decorator, ast.Name) and decorator.id == "staticmethod"):
            return False
        if decorator.id in scope.imports or decorator.id in scope.functions or decorator.id in scope.assigns:
            return False
    params = [*func.args.posonlyargs, *func.args.args]
    return not (params and params[0].arg in ("self", "cls"))


def op_spellings(
    ctx: FileContext, body: Body, calls_only: bool = True, scope: ModuleScope | None = None
) -> Iterator[OpRef]:
    """The ops a function calls (with `calls_only` False, every op it spells: an overload
    written anywhere in a pattern is what its graph carries); `scope`: of the module it is
    written in, when not the context's."""
    resolver = Resolver(scope or ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
    for node in ast.walk(body.node):
        expr = node.func if isinstance(node, ast.Call) else node if not calls_only else None
        if isinstance(expr, (ast.Attribute, ast.Name)):
            ref = resolver.op_ref(expr)
            if ref is not None:
                yield ref


def replaced_through_own_classes(ctx: FileContext, key: tuple[str, str, str]) -> bool:
    """Whether a subgraph rewrite of another module puts the packet `key` into graphs through a
    class of this one: `replace_pattern(gm, Fuse.pattern, Fuse.replacement)`, `Fuse` imported
    from here, its replacement calling the packet (the project scan reads no such module for the
    packet: it does not spell it). Only modules spelling a rewrite and the name of such a class
    are parsed."""
    names = tuple(_classes_calling(ctx, key))
    if not names:
        return False
    from qlint.analysis.graphs.project_texts import parsed_module, texts_spelling

    for path, text, _ in texts_spelling(ctx, names):
        if rewrites_spelled(text):
            module = parsed_module(ctx, path, text)
            if module is not None and key in replaced_packets(module):
                return True
    return False


def _classes_calling(ctx: FileContext, key: tuple[str, str, str]) -> Iterator[str]:
    """The module-level classes of the module with a function a rewrite can read through the
    class (`_plain_function`) that calls the packet `key`."""
    owned = None
    for name, cls in ctx.scope.classes.items():
        for func in cls.methods.values():
            if func.name in cls.assigns or not _plain_function(func, ctx.scope):
                continue
            if owned is None:
                owned = {id(b.node): b for b in bodies(ctx.tree, ctx.scope, ctx.cache)}
            body = owned.get(id(func))
            if body is not None and any(r.key == key and r.is_packet for r in op_spellings(ctx, body)):
                yield name
                break

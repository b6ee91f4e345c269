"""Graphs an object builds node by node on itself (QL102).

A project's own compiler keeps its graph on an object: a `torch.fx.Graph` subclass whose
methods insert nodes into `self` (d-Matrix's `DmxGraph.qdq_node`), or a graph held in an
attribute that the class only ever sets to a fresh `Graph()` (torch's old FX quantization
demo: `self.quantized_graph = Graph()`, filled by pattern handlers through
`quantizer.quantized_graph.create_node(...)`). No tracer makes such a graph: its nodes carry
what the project put there, so a packet inserted there is the form the graph holds.

The attribute form counts only when every binding of the attribute anywhere in the module is
`self.<attr> = Graph()` (or a `GraphModule` around one, or a fresh instance of the module's
own `Graph` subclass) in a method of a class without bases (a base may bind it to anything),
no `setattr` names it, and no other module of the project names it beside an `=`: bound to a
captured graph (an export, `make_fx`, Dynamo's graph, a parameter) even once, the finding
stands. Read through another object (a handler's `quantizer.quantized_graph`), the receiver
must be a parameter and the attribute's name one that torch's own objects do not carry
(`graph`, `gm`, ...), or no other project module may name it at all. A module or class that
spells an overload of the op expects that form somewhere: the finding stands there too.
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.hand_built_graphs import insertion_of, module_graph
from qlint.analysis.graphs.never_called import baseless
from qlint.analysis.graphs.project_texts import texts_naming
from qlint.analysis.names.functions import Body
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.tree_walk import Parents, walk_kinds
from qlint.analysis.tree_walk import parents as tree_parents

_GRAPHS = frozenset({"torch.fx.Graph", "torch.fx.graph.Graph"})
_MODULES = frozenset({"torch.fx.GraphModule", "torch.fx.graph_module.GraphModule"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Attributes torch's own objects carry (a GraphModule's, a Tracer's, an Interpreter's graph):
# read through an object of unknown class, such a name says nothing about who bound it.
_TORCH_ATTRS = frozenset({"graph", "_graph", "gm", "graph_module", "module", "new_graph"})
_CACHE_KEY = "graphs.self_built"
_SPELLED_KEY = "graphs.self_built.spelled"
_NAMES = frozenset({ast.Name})


def inserted_into_own_graph(ctx: FileContext, body: Body | None, packet: ast.expr, op: str) -> bool:
    """Whether `packet` is an argument of `<receiver>.call_function(...)`/`create_node(...)`
    in the method `body`, the receiver being a graph the project builds on an object (above)."""
    call = insertion_of(body, packet)
    if call is None:
        return False
    parts = dotted_parts(call.func.value)
    if not parts:
        return False
    params = [a.arg for a in parameter_args(body.node, star=False)]
    cls = body.class_scope.node if body.class_scope is not None else None
    me = params[0] if cls is not None and params and not _static(body.node) else None
    # The receiver's shape first, then the walk of the method for a rebinding of it.
    if parts == [me]:
        return not _rebound(body.node, parts[0]) and _graph_subclass(ctx, cls) and not _module_spells_overload(ctx, op)
    if parts[0] not in params or len(parts) not in (2, 3) or parts[2:] not in ([], ["graph"]):
        return False
    attr = parts[1]
    if parts[0] != me and attr in _TORCH_ATTRS:
        return False
    if _rebound(body.node, parts[0]):
        return False
    # Read on an object of a class with bases, or of unknown class: who binds it is not seen.
    strict = parts[0] != me or not baseless(cls)
    return _fresh_attribute(ctx, attr, wrapped=len(parts) == 3, strict=strict) and not _module_spells_overload(ctx, op)


def _module_spells_overload(ctx: FileContext, op: str) -> bool:
    """The module spells an overload of `op` somewhere (`hand_built_graphs.spells_overload`),
    asked last and read once per check: a walk of the whole module per insertion cost more
    than the rest of QL102 on torch's observer.py."""
    spelled = ctx.cache.get(_SPELLED_KEY)
    if spelled is None:
        spelled = ctx.cache[_SPELLED_KEY] = frozenset(
            n.value.attr
            for n in ast.walk(ctx.tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute)
        )
    return op in spelled


def _static(func: ast.AST) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in func.decorator_list)


def _rebound(func: ast.AST, name: str) -> bool:
    """The receiver's name is bound again in the method: what it holds there is not known."""
    return any(n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)) for n in walk_kinds(func, _NAMES))


def _graph_subclass(ctx: FileContext, cls: ast.ClassDef | None, seen: frozenset[str] = frozenset()) -> bool:
    """A class whose bases are `torch.fx.Graph` or the module's own subclasses of it."""
    if cls is None or not cls.bases or cls.keywords or cls.name in seen:
        return False
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable)
    for base in cls.bases:
        if resolver.qualname(base) in _GRAPHS:
            continue
        own = ctx.scope.classes.get(base.id) if isinstance(base, ast.Name) else None
        if own is None or not _graph_subclass(ctx, own.node, seen | {cls.name}):
            return False
    return True


def _fresh_attribute(ctx: FileContext, attr: str, wrapped: bool, strict: bool) -> bool:
    memo = ctx.cache.setdefault(_CACHE_KEY, {})
    key = (attr, wrapped, strict)
    if key not in memo:
        memo[key] = _bound_fresh_only(ctx, attr, wrapped) and not _bound_elsewhere(ctx, attr, strict)
    return memo[key]


def _bound_fresh_only(ctx: FileContext, attr: str, wrapped: bool) -> bool:
    """Every binding of `.attr` in the module is `self.attr = <fresh graph>` in a method of a
    baseless class (a `GraphModule` around one when the graph is read as `.attr.graph`)."""
    if re.search(rf"""setattr\s*\([^)]*['"]{re.escape(attr)}['"]""", ctx.words):
        return False
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable)
    fresh = False
    for cls in (n for n in ast.walk(ctx.tree) if isinstance(n, ast.ClassDef)):
        for item in cls.body:
            if isinstance(item, (ast.Assign, ast.AnnAssign)) and _names_attr(item, attr):
                return False  # a class-level default, shadowed or not
    parents = tree_parents(ctx.tree)
    for node in ast.walk(ctx.tree):
        if not (isinstance(node, ast.Attribute) and node.attr == attr and not isinstance(node.ctx, ast.Load)):
            continue
        stmt = parents.get(id(node))
        if not (isinstance(stmt, ast.Assign) and node in stmt.targets and _on_own_object(node, parents)):
            return False  # a tuple or loop target, `del`, `+=`, or another object's attribute
        if not _fresh(ctx, stmt.value, resolver, wrapped):
            return False
        fresh = True
    return fresh


def _names_attr(stmt: ast.stmt, attr: str) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    return any(isinstance(t, ast.Name) and t.id == attr for t in targets)


def _on_own_object(target: ast.Attribute, parents: Parents) -> bool:
    """`self.attr` in a method (not static) of a class without bases."""
    if not isinstance(target.value, ast.Name):
        return False
    func = parents.get(id(target))
    while func is not None and not isinstance(func, _FUNCS):
        func = parents.get(id(func))
    if func is None or _static(func):
        return False
    params = [a.arg for a in parameter_args(func, star=False)]
    cls = parents.get(id(func))
    return bool(params) and params[0] == target.value.id and isinstance(cls, ast.ClassDef) and baseless(cls)


def _fresh(ctx: FileContext, value: ast.expr, resolver: Resolver, wrapped: bool) -> bool:
    """`Graph()`, a fresh instance of the module's own Graph subclass, or (`wrapped`)
    `GraphModule(root, <such a graph>)`."""
    if not isinstance(value, ast.Call):
        return False
    if wrapped:
        if resolver.qualname(value.func) not in _MODULES:
            return False
        graph = module_graph(value)
        return graph is not None and _fresh(ctx, graph, resolver, wrapped=False)
    if value.args or value.keywords:
        return False
    if resolver.qualname(value.func) in _GRAPHS:
        return True
    own = ctx.scope.classes.get(value.func.id) if isinstance(value.func, ast.Name) else None
    return own is not None and _graph_subclass(ctx, own.node)


def _bound_elsewhere(ctx: FileContext, attr: str, strict: bool) -> bool:
    """Another module of the project binds the attribute (`obj.attr = ...`, `setattr`), or,
    `strict` (the graph read through an object of unknown class), names it at all."""
    store = re.compile(rf"""\.\s*{re.escape(attr)}\s*=(?!=)|setattr\s*\([^)]*['"]{re.escape(attr)}['"]""")
    return any(strict or store.search(text) for _, text in texts_naming(ctx, attr))

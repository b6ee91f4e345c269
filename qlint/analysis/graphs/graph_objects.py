"""Objects the project builds around a graph module, whose methods are its passes (QL101, QL102,
through `self_traced_graphs`).

pytorch-shir's quantized-pattern rewriter is a class: `rewrite_quantized_ops(gm)` builds
`QuantOpRewrite(gm)`, whose `__init__` keeps the graph module in `self.gm`, and calls its
`rewrite()`; the methods walk `self.gm.graph`, match nodes and insert `aten.view` and
`aten.pad` packets into it. Such a method works on the graph its object was built with, as a
module-level pass works on its graph parameter: which graphs those are is the question of the
functions that build the object (`self_traced_graphs` asks it of each construction's argument).

A method is read so when its class
- is a top-level class of the module, without base classes (an inherited `__init__` or method
  would be elsewhere), whose methods reach a graph through one attribute only, `self.<attr>`
  (`self.<attr>.graph`), set in `__init__` from one of its parameters, the only store of that
  attribute in the module (`init_fields.init_parameter`);
- never hands `self` on (every `self` its methods read is `self.<name>`), and keeps the graph
  module nowhere else (no `<x>.<y> = self.<attr>`; whether its methods export or re-trace the
  graph is `self_traced_graphs`' question, as for a function);
and every construction of it in the project (`init_fields.constructions`: a use of the class
other than a call, a base class, leaves them unknown) passes a local name for that parameter,
inside a function, and uses the object made only by calling its methods: `Cls(gm).run()`, or
`obj = Cls(gm)` bound once and read only as `obj.method(...)`. An object handed on, stored or
returned may have its attribute rebound, or its graph taken, by code we do not follow.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.init_fields import argument, constructions, init_parameter
from qlint.analysis.names.functions import Body, innermost_body
from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.tree_walk import own_nodes, parents

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CACHE_KEY = "graph-objects"


def method_class(ctx: FileContext, body: Body | None) -> ast.ClassDef | None:
    """The top-level class whose method (a direct one, undecorated) `body` is."""
    if body is None or body.class_scope is None or not isinstance(body.node, _FUNCS) or body.node.decorator_list:
        return None
    cls = body.class_scope.node
    if getattr(ctx.scope.classes.get(cls.name), "node", None) is not cls or body.node not in cls.body:
        return None
    return cls


def held_graph(ctx: FileContext, cls: ast.ClassDef) -> str | None:
    """The attribute through which the methods of `cls` reach their graph, when the class is
    of the shape above (what its constructions pass is not asked here)."""
    key = (_CACHE_KEY, id(cls))
    if key not in ctx.cache:
        ctx.cache[key] = _held_graph(ctx, cls)
    return ctx.cache[key]


def _held_graph(ctx: FileContext, cls: ast.ClassDef) -> str | None:
    if cls.bases or cls.keywords:
        return None
    methods = [s for s in cls.body if isinstance(s, _FUNCS)]
    held: set[str] = set()
    for method in methods:
        params = [a.arg for a in (*method.args.posonlyargs, *method.args.args)]
        if not params or params[0] != "self" or method.decorator_list:
            return None
        nodes = own_nodes(list(ast.iter_child_nodes(method)))
        above = parents(method)
        for node in nodes:
            if isinstance(node, ast.Name) and node.id == "self":
                if not isinstance(node.ctx, ast.Load) or not isinstance(above.get(id(node)), ast.Attribute):
                    return None  # `self` handed on or bound anew: the object may go anywhere
            elif isinstance(node, ast.Attribute) and node.attr == "graph":
                parts = dotted_parts(node.value)
                if parts is not None and len(parts) == 2 and parts[0] == "self":
                    held.add(parts[1])
    if len(held) != 1:
        return None
    (attr,) = held
    if init_parameter(ctx.tree, cls, attr) is None or _kept_elsewhere(cls, attr):
        return None
    return attr


def _kept_elsewhere(cls: ast.ClassDef, attr: str) -> bool:
    """A method stores the graph module somewhere (`x.y = self.gm`, `d[k] = self.gm`)."""
    for node in ast.walk(cls):
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in node.targets)
            and any(dotted_parts(n) == ["self", attr] for n in ast.walk(node.value) if isinstance(n, ast.Attribute))
        ):
            return True
    return False


def inserts_into_held_graph(ctx: FileContext, body: Body | None, expr: ast.expr) -> ast.ClassDef | None:
    """The class whose method `body` makes the insertion at `expr` into the graph its object
    holds: `self.<attr>.graph.call_function(op, ...)`, or the same on a local of the method
    bound only to `self.<attr>.graph`."""
    cls = method_class(ctx, body)
    attr = held_graph(ctx, cls) if cls is not None else None
    if attr is None:
        return None
    nodes = own_nodes(list(ast.iter_child_nodes(body.node)))
    call = next((n for n in nodes if isinstance(n, ast.Call) and any(a is expr for a in n.args)), None)
    if call is None or not isinstance(call.func, ast.Attribute):
        return None
    parts = dotted_parts(call.func.value)
    if parts == ["self", attr, "graph"]:
        return cls
    if parts is None or len(parts) != 1:
        return None
    return cls if only_bound_to(body.node, nodes, parts[0], ["self", attr, "graph"]) else None


def only_bound_to(func: ast.AST, nodes: list[ast.AST], name: str, value: list[str]) -> bool:
    """Every binding of the local `name` among a function's `nodes` is `name = <value>`."""
    stores = name_stores(nodes, name)
    if not stores:
        return False
    above = parents(func)
    for store in stores:
        stmt = above.get(id(store))
        if not (isinstance(stmt, ast.Assign) and stmt.targets == [store] and dotted_parts(stmt.value) == value):
            return False
    return True


def name_stores(nodes: list[ast.AST], name: str) -> list[ast.AST] | None:
    """The `Name` nodes among `nodes` that bind `name` (an assignment's, a loop's, a `with`'s
    target, a walrus); None when a `global` or `nonlocal` statement names it. A store into an
    attribute or an item of it binds nothing."""
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in nodes):
        return None
    return [n for n in nodes if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]


def graph_constructions(ctx: FileContext, cls: ast.ClassDef) -> list[tuple[FileContext, ast.AST, str]] | None:
    """(module, function, local) for each construction of `cls` in the project: the function
    builds the object around the graph module its local holds and only calls the object's
    methods. None when the class is not of the shape above, or a construction is otherwise."""
    attr = held_graph(ctx, cls)
    param = init_parameter(ctx.tree, cls, attr) if attr is not None else None
    made = constructions(ctx, cls) if param is not None else None
    if made is None:
        return None
    found = []
    for module, call in made:
        value = argument(call, param)
        owner = innermost_body(module.tree, module.scope, module.cache, call.lineno)
        if not isinstance(value, ast.Name) or owner is None or not _only_methods_called(owner.node, call):
            return None
        found.append((module, owner.node, value.id))
    return found


def _only_methods_called(func: ast.AST, call: ast.Call) -> bool:
    """The object `call` makes in `func` is used only as the receiver of method calls."""
    above = parents(func)
    parent = above.get(id(call))
    if isinstance(parent, ast.Attribute):
        return _method_call(above, parent)
    if not (
        isinstance(parent, ast.Assign)
        and parent.value is call
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
    ):
        return False
    name = parent.targets[0].id
    nodes = own_nodes(list(ast.iter_child_nodes(func)))
    if name_stores(nodes, name) != [parent.targets[0]]:
        return False
    for node in nodes:
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            use = above.get(id(node))
            if not isinstance(use, ast.Attribute) or not _method_call(above, use):
                return False
    # Nested functions and lambdas reading the object would use it where we do not look.
    own = {id(n) for n in nodes}
    return not any(isinstance(n, ast.Name) and n.id == name and id(n) not in own for n in ast.walk(func))


def _method_call(above, attribute: ast.Attribute) -> bool:
    call = above.get(id(attribute))
    return isinstance(call, ast.Call) and call.func is attribute


__all__ = [
    "graph_constructions",
    "held_graph",
    "inserts_into_held_graph",
    "method_class",
    "name_stores",
    "only_bound_to",
]

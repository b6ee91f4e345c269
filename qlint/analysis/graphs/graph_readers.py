"""Calls that see a graph between a pass and `torch.compile` and can miss no node (`compiled_next`).

Two kinds: logging (`logger.debug(gm.graph)`, `print(...)`, an f-string), and a method of a
project class that only prints the graph or keeps it in a list the project reads only to hand
to `torch.export` (a context that records converted graphs for a later save: export re-traces
each, so what it records is the overload). The method's class is read from the receiver,
`self.<field>` set in `__init__` from a parameter (`init_fields`), through every construction
of the receiver's class: each passes a parameter annotated with the same class, or a
construction of it. Anything else the method does with the graph, or any other reader of the
list, and the call is not known to be harmless.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import init_fields
from qlint.analysis.names.functions import innermost_body
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.tree_walk import parents as tree_parents

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOG = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})
_EXPORTS = frozenset({"torch.export.export", "torch.export._trace._export"})
_PRINTS = frozenset({"print", "str", "repr"})


def logs(call: ast.Call) -> bool:
    """`logger.debug(...)`, `logging.info(...)`, `print(...)`: prints what it is given."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in _PRINTS
    return isinstance(func, ast.Attribute) and func.attr in _LOG and isinstance(func.value, ast.Name)


def harmless_method(ctx: FileContext, owner: ast.ClassDef | None, call: ast.Call, graph: str) -> bool:
    """`self.<field>.<method>(..., graph, ...)` in a method of `owner` (a class of `ctx`'s
    module), the method only printing the graph or keeping it in a list read only by export."""
    func = call.func
    parts = dotted_parts(func.value) if isinstance(func, ast.Attribute) else None
    if owner is None or parts is None or len(parts) != 2 or parts[0] != "self" or call.keywords:
        return False
    positions = [i for i, a in enumerate(call.args) if dotted_name(a) == graph]
    if len(positions) != 1 or any(mentions(a, graph) for i, a in enumerate(call.args) if i != positions[0]):
        return False
    held = _field_class(ctx, owner, parts[1])
    if held is None:
        return False
    method = next((s for s in held.body if isinstance(s, _FUNCS) and s.name == func.attr), None)
    if method is None or method.decorator_list:
        return False
    params = [a.arg for a in (*method.args.posonlyargs, *method.args.args)][1:]
    if positions[0] >= len(params):
        return False
    return _prints_or_keeps(ctx, held, method, params[positions[0]])


def _field_class(ctx: FileContext, owner: ast.ClassDef, field: str) -> ast.ClassDef | None:
    """The class of the module whose instances every construction of `owner` stores in
    `self.<field>` (set from an `__init__` parameter)."""
    param = init_fields.init_parameter(ctx.tree, owner, field)
    if param is None:
        return None
    found = init_fields.constructions(ctx, owner)
    if not found:
        return None
    names = set()
    for other, call in found:
        if other is not ctx:
            return None  # the annotation would be read in another module's scope
        value = init_fields.argument(call, param)
        names.add(_class_named(ctx, value))
    if len(names) != 1:
        return None
    name = names.pop()
    cls = getattr(ctx.scope.classes.get(name), "node", None) if name else None
    return cls if isinstance(cls, ast.ClassDef) else None


def _class_named(ctx: FileContext, value: ast.expr | None) -> str | None:
    """`K(...)`, or a parameter annotated `K`, of the function the value sits in."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return value.func.id
    if not isinstance(value, ast.Name):
        return None
    for func in ast.walk(ctx.tree):
        if isinstance(func, _FUNCS) and func.lineno <= value.lineno <= (func.end_lineno or 0):
            for arg in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs):
                if arg.arg == value.id and isinstance(arg.annotation, ast.Name):
                    inner = _innermost(ctx, value)
                    if inner is func:
                        return arg.annotation.id
    return None


def _innermost(ctx: FileContext, node: ast.AST) -> ast.AST | None:
    body = innermost_body(ctx.tree, ctx.scope, ctx.cache, node.lineno)
    return body.node if body is not None else None


def _prints_or_keeps(ctx: FileContext, cls: ast.ClassDef, method: ast.AST, param: str) -> bool:
    parents = tree_parents(method)
    for node in ast.walk(method):
        if not (isinstance(node, ast.Name) and node.id == param):
            continue
        if not isinstance(node.ctx, ast.Load):
            return False
        top = node
        while isinstance(parents.get(id(top)), ast.Attribute):
            top = parents[id(top)]
        holder = parents.get(id(top))
        if isinstance(holder, ast.FormattedValue):
            continue
        if isinstance(holder, ast.Call) and top in holder.args and logs(holder):
            continue
        if top is node and _kept_in_list(ctx, cls, holder, parents):
            continue
        return False
    return True


def _kept_in_list(ctx: FileContext, cls: ast.ClassDef, element: ast.AST | None, parents) -> bool:
    """`self.<list>.append([graph, ...])` as a statement, the list read only by export."""
    call = parents.get(id(element)) if isinstance(element, (ast.List, ast.Tuple)) else None
    if not (
        isinstance(call, ast.Call)
        and call.args == [element]
        and isinstance(parents.get(id(call)), ast.Expr)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "append"
    ):
        return False
    parts = dotted_parts(call.func.value)
    if parts is None or len(parts) != 2 or parts[0] != "self":
        return False
    return _read_only_by_export(ctx, cls, parts[1])


def _read_only_by_export(ctx: FileContext, cls: ast.ClassDef, field: str) -> bool:
    """Every use of `.<field>` in the project: an append in `cls`, a store of a fresh empty
    list, or a read bound to a local that is only measured or walked by a loop whose item
    goes, element by element, to export. Another module spelling the field may read it."""
    if init_fields.modules_naming(ctx, field):
        return False
    parents = tree_parents(ctx.tree)
    for node in ast.walk(ctx.tree):
        if not (isinstance(node, ast.Attribute) and node.attr == field):
            continue
        holder = parents.get(id(node))
        if not isinstance(node.ctx, ast.Load):
            if not (isinstance(holder, ast.Assign) and isinstance(holder.value, ast.List) and not holder.value.elts):
                return False  # only ever set to a fresh empty list
            continue
        if isinstance(holder, ast.Attribute) and holder.attr == "append" and dotted_parts(node) == ["self", field]:
            if _innermost_class(ctx.tree, node) is cls:
                continue
            return False
        if not (isinstance(holder, ast.Assign) and holder.value is node and len(holder.targets) == 1):
            return False
        target = holder.targets[0]
        func = _innermost(ctx, node)
        if not isinstance(target, ast.Name) or func is None or not _walked_into_export(ctx, func, target.id):
            return False
    return True


def _innermost_class(tree: ast.Module, node: ast.AST) -> ast.ClassDef | None:
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef) and cls.lineno <= node.lineno <= (cls.end_lineno or 0):
            return cls
    return None


def _walked_into_export(ctx: FileContext, func: ast.AST, name: str) -> bool:
    """Each use of the local `name` is `len(name)`, or the loop `for item in name` (also
    zipped with others) whose item is used only as subscripts handed to `torch.export.export`."""
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable)
    parents = tree_parents(func)
    for node in ast.walk(func):
        if not (isinstance(node, ast.Name) and node.id == name) or isinstance(node.ctx, ast.Store):
            continue
        holder = parents.get(id(node))
        if isinstance(holder, ast.Call) and isinstance(holder.func, ast.Name) and holder.func.id == "len":
            continue
        loop, item = _loop_item(holder, node, parents)
        if loop is None or item is None:
            return False
        for use in ast.walk(loop):
            if isinstance(use, ast.Name) and use.id == item and use is not _target_name(loop, item):
                sub = parents.get(id(use))
                call = parents.get(id(sub))
                if not (
                    isinstance(sub, ast.Subscript)
                    and isinstance(call, ast.Call)
                    and sub in call.args
                    and resolver.qualname(call.func) in _EXPORTS
                ):
                    return False
    return True


def _loop_item(holder: ast.AST | None, node: ast.Name, parents) -> tuple[ast.For | None, str | None]:
    """(the `for` walking the list, the name its item is bound to)."""
    if isinstance(holder, ast.For) and holder.iter is node and isinstance(holder.target, ast.Name):
        return holder, holder.target.id
    loop = parents.get(id(holder))
    if (
        isinstance(holder, ast.Call)
        and isinstance(holder.func, ast.Name)
        and holder.func.id == "zip"
        and not holder.keywords
        and isinstance(loop, ast.For)
        and loop.iter is holder
        and isinstance(loop.target, ast.Tuple)
        and len(loop.target.elts) == len(holder.args)
    ):
        element = loop.target.elts[holder.args.index(node)]
        return loop, element.id if isinstance(element, ast.Name) else None
    return None, None


def _target_name(loop: ast.For, item: str) -> ast.Name | None:
    targets = loop.target.elts if isinstance(loop.target, ast.Tuple) else [loop.target]
    return next((t for t in targets if isinstance(t, ast.Name) and t.id == item), None)


def dotted_name(expr: ast.AST) -> str | None:
    """`a.b.c` as written, or None when `expr` is not a dotted name."""
    parts = dotted_parts(expr)
    return ".".join(parts) if parts else None


def mentions(node: ast.AST, graph: str) -> bool:
    """Whether the dotted name `graph` occurs anywhere in `node`."""
    return any(dotted_name(n) == graph for n in ast.walk(node) if isinstance(n, (ast.Name, ast.Attribute)))

"""Calls of a lambda from a table the model class keeps on itself (`self.dispatcher[k](x)`).

ExecuTorch's Qualcomm test model `Index` writes `self.dispatcher = {0: lambda x: x[self.idx0]
+ x[self.idx1], 1: ..., 2: ...}` in `__init__` and runs `self.dispatcher[self.axis](x)` in
`forward`. A call of anything but a name or an attribute may build a module the reading
cannot see, so the model's content was unknown. When the class binds that attribute once,
to a dict, list or tuple literal of lambdas, and only ever calls an item of it, the call runs
one of those lambdas, whose bodies are read with the class (they are written in it).
"""

from __future__ import annotations

import ast

from qlint.analysis.tree_walk import parents as tree_parents

_TABLES = (ast.Dict, ast.List, ast.Tuple)
# Ways to bind or reach an attribute without writing `self.<attr>`.
_GENERIC = frozenset({"setattr", "getattr", "vars", "__dict__", "__setattr__"})


def calls_own_lambda(call: ast.Call, cls_node: ast.ClassDef) -> bool:
    """`call` is `self.<attr>[key](...)` and `<attr>` is such a table of the class."""
    func = call.func
    if not isinstance(func, ast.Subscript) or not _on_self(func.value):
        return False
    return _lambda_table(cls_node, func.value.attr)


def _on_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _lambda_table(cls_node: ast.ClassDef, attr: str) -> bool:
    """The class body binds no `<attr>` of its own, its one store of `self.<attr>` is `=` of a
    literal of lambdas, and every other mention is the callee `self.<attr>[key]`."""
    if any(_binds(stmt, attr) for stmt in cls_node.body):
        return False  # a class attribute the instance may read before (or without) the store
    parents = tree_parents(cls_node)
    stores = 0
    for node in ast.walk(cls_node):
        if isinstance(node, ast.Name) and node.id in _GENERIC:
            return False
        if isinstance(node, ast.Attribute) and node.attr in _GENERIC:
            return False
        if not isinstance(node, ast.Attribute) or node.attr != attr:
            continue
        if not _on_self(node):
            return False  # another object's: its table may be this one
        parent = parents.get(id(node))
        if isinstance(node.ctx, ast.Store):
            stores += 1
            if not (isinstance(parent, ast.Assign) and parent.targets == [node] and _lambdas(parent.value)):
                return False
        elif not (isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Load)):
            return False
        elif not (isinstance(called := parents.get(id(parent)), ast.Call) and called.func is parent):
            return False  # read, kept or handed on: it may be changed elsewhere
    return stores == 1


def _lambdas(value: ast.expr) -> bool:
    if not isinstance(value, _TABLES):
        return False
    items = value.values if isinstance(value, ast.Dict) else value.elts
    if isinstance(value, ast.Dict) and any(k is None for k in value.keys):
        return False  # `**other`
    return bool(items) and all(isinstance(item, ast.Lambda) for item in items)


def _binds(stmt: ast.stmt, attr: str) -> bool:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name == attr
    return any(isinstance(n, ast.Name) and n.id == attr and isinstance(n.ctx, ast.Store) for n in ast.walk(stmt))


__all__ = ["calls_own_lambda"]

"""Decorator factories of the one shape that registers what they decorate:
`def deco(key): def wrapper(cls): registry[key] = cls; return cls; return wrapper`. Read by
the registry walk (`decorator_registries`) and by the test of which project decorators hide
the function they decorate (`pass_through.opaque`), which the walk itself asks."""

from __future__ import annotations

import ast

from qlint.analysis.node_memo import kept_on_node

_WRITES = "_qlint_registry_writes"
_SCOPES = (ast.Global, ast.Nonlocal, ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def registering(func: ast.AST) -> bool:
    """`func` is a decorator factory of the one shape that stores what it decorates into a
    registry and hands it back unchanged."""
    return bool(registry_written(func))


def registry_written(func: ast.AST) -> tuple[str, ...]:
    """(the registry's name,) when `func` is such a factory, else () (kept on the node)."""
    return kept_on_node(func, _WRITES, _writes)


def _writes(func: ast.AST) -> tuple[str, ...]:
    """(the registry's name,) when `func` has the decorator's shape, else ()."""
    params = func.args
    if params.posonlyargs or params.vararg or params.kwarg or params.kwonlyargs or len(params.args) != 1:
        return ()
    key = params.args[0].arg
    body = [s for s in func.body if not _docstring(s)]
    if len(body) != 2 or not isinstance(body[0], ast.FunctionDef) or not isinstance(body[1], ast.Return):
        return ()
    wrapper, ret = body
    if not (isinstance(ret.value, ast.Name) and ret.value.id == wrapper.name) or wrapper.decorator_list:
        return ()
    wparams = wrapper.args
    if wparams.posonlyargs or wparams.vararg or wparams.kwarg or wparams.kwonlyargs or len(wparams.args) != 1:
        return ()
    cls = wparams.args[0].arg
    if cls == key or any(_binds(n, (key, cls)) for n in ast.walk(func)):
        return ()
    stores = []
    for n in ast.walk(wrapper):
        if isinstance(n, ast.Return) and not (isinstance(n.value, ast.Name) and n.value.id == cls):
            return ()  # hands back something else than the class it registers
        if isinstance(n, _SCOPES) and n is not wrapper:
            return ()  # a nested scope or a `global`: what it binds is not read here
        if isinstance(n, ast.Subscript) and not isinstance(n.ctx, ast.Load):
            stores.append(n)
    if len(stores) != 1:
        return ()
    (store,) = stores
    assign = next((s for s in wrapper.body if isinstance(s, ast.Assign) and s.targets == [store]), None)
    if assign is None or not (isinstance(assign.value, ast.Name) and assign.value.id == cls):
        return ()
    if not (isinstance(store.value, ast.Name) and isinstance(store.slice, ast.Name) and store.slice.id == key):
        return ()
    return (store.value.id,)


def _binds(node: ast.AST, names: tuple[str, ...]) -> bool:
    return isinstance(node, ast.Name) and node.id in names and not isinstance(node.ctx, ast.Load)


def _docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)

"""Classes whose every instance is built, and only used as a method receiver, in one module.

A method called on an instance (`quantizer.prepare(m)`) has callers wherever an instance
goes. When the class is named in no other module of the project, no class derives from it,
every construction is bound to a local name (or called on at once: `Wrapper().prepare(m)`)
whose every use is `name.<method>(...)`, and no method hands `self` anywhere, then the
instances never leave their functions: the method's calls are the ones written in this
module, and `call_sites` can read them all. Anything else (an instance passed to a function,
returned, stored, a subclass, a metaclass, a decorator, `self` handed on) means the method
may be called where qlint cannot see.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.flow.project_callers import paths_naming
from qlint.analysis.names.scope import ClassScope, parameter_args

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def confined(ctx: FileContext, cls: ClassScope) -> bool:
    """Instances of the top-level class `cls` of the checked module never leave this module."""
    key = ("confined_instances", id(cls.node))
    found = ctx.cache.get(key)
    if found is None:
        found = ctx.cache[key] = _confined(ctx, cls)
    return found


def _confined(ctx: FileContext, cls: ClassScope) -> bool:
    node = cls.node
    if ctx.scope.classes.get(node.name) is not cls or node.decorator_list or node.keywords:
        return False
    if any(not (isinstance(b, ast.Name) and b.id == "object") for b in node.bases):
        return False  # a base class may keep or hand on `self`
    if not all(_self_stays(m) for m in cls.methods.values()):
        return False
    name = node.name
    parents = _parents(ctx)
    for other in ast.walk(ctx.tree):
        if isinstance(other, ast.ClassDef) and any(name in _names(b) for b in other.bases):
            return False  # a subclass inherits the methods
        loaded = isinstance(other, ast.Name) and other.id == name and isinstance(other.ctx, ast.Load)
        if loaded and not _construction_confined(other, parents):
            return False
    return paths_naming(ctx, name) == []


def _construction_confined(ref: ast.Name, parents: dict[int, ast.AST]) -> bool:
    call = parents.get(id(ref))
    if not isinstance(call, ast.Call) or call.func is not ref:
        return False  # the class itself handed on (`make(Wrapper)`, `Wrapper.prepare`)
    holder = parents.get(id(call))
    if isinstance(holder, ast.Attribute) and _called_method(holder, parents):
        return True  # `Wrapper().prepare(m)`
    if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name)):
        return False
    local = holder.targets[0].id
    func = _enclosing_function(holder, parents)
    if func is None:
        return False  # a module-level instance: any function may use it
    for node in ast.walk(func):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and local in node.names:
            return False
        if isinstance(node, ast.Name) and node.id == local and isinstance(node.ctx, ast.Load):
            attribute = parents.get(id(node))
            if not (isinstance(attribute, ast.Attribute) and _called_method(attribute, parents)):
                return False
    return True


def _called_method(attribute: ast.Attribute, parents: dict[int, ast.AST]) -> bool:
    call = parents.get(id(attribute))
    return isinstance(call, ast.Call) and call.func is attribute


def _self_stays(method: ast.AST) -> bool:
    """`self` is only ever read as `self.<attr>`."""
    if not isinstance(method, _FUNCS):
        return False
    params = parameter_args(method)
    if not params:
        return True  # a static method without parameters holds no `self`
    me = params[0].arg
    attrs = {id(n.value) for n in ast.walk(method) if isinstance(n, ast.Attribute)}
    return not any(
        isinstance(n, ast.Name) and n.id == me and isinstance(n.ctx, ast.Load) and id(n) not in attrs
        for n in ast.walk(method)
    )


def _enclosing_function(node: ast.AST, parents: dict[int, ast.AST]) -> ast.AST | None:
    while node is not None:
        node = parents.get(id(node))
        if isinstance(node, (*_FUNCS, ast.Lambda)):
            return node
        if isinstance(node, ast.ClassDef):
            return None
    return None


def _names(expr: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(expr) if isinstance(n, ast.Attribute)
    }


def _parents(ctx: FileContext) -> dict[int, ast.AST]:
    parents = ctx.cache.get("confined_instances.parents")
    if parents is None:
        parents = ctx.cache["confined_instances.parents"] = {
            id(child): node for node in ast.walk(ctx.tree) for child in ast.iter_child_nodes(node)
        }
    return parents


__all__ = ["confined"]

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
from qlint.analysis.names.functions import bodies
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
    rows = frozenset(i for i, line in enumerate(ctx.text.splitlines(), 1) if name in line)
    for body in bodies(ctx.tree, ctx.scope, ctx.cache):
        loads: set[int] = set()
        accepted: set[int] = set()
        for n in body.nodes(rows):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
                loads.add(id(n))
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _builds(n.func.value, name):
                accepted.add(id(n.func.value.func))  # `Wrapper().prepare(m)`
            elif isinstance(n, ast.Assign) and _builds(n.value, name):
                if not isinstance(body.node, _FUNCS) or not _bound_to_receiver(n, body.node):
                    return False  # a module-level or class-level instance, or one used otherwise
                accepted.add(id(n.value.func))
        if loads - accepted:
            return False  # the class handed on, subclassed, or an instance passed or returned
    return paths_naming(ctx, name) == []


def _builds(expr: ast.AST, name: str) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == name


def _bound_to_receiver(assign: ast.Assign, func: ast.AST) -> bool:
    """`local = Wrapper(...)` where every read of `local` in the function is `local.<m>(...)`."""
    if len(assign.targets) != 1 or not isinstance(assign.targets[0], ast.Name):
        return False
    local = assign.targets[0].id
    receivers: set[int] = set()
    reads: set[int] = set()
    for n in ast.walk(func):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and local in n.names:
            return False
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
            receivers.add(id(n.func.value))
        elif isinstance(n, ast.Name) and n.id == local and isinstance(n.ctx, ast.Load):
            reads.add(id(n))
    return reads <= receivers


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


__all__ = ["confined"]

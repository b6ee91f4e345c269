"""Classes whose every instance is built, and only used as a method receiver, in one module.

A method called on an instance (`quantizer.prepare(m)`) has callers wherever an instance
goes. When the class is named in no other module of the project, every construction is
bound to a local name (or called on at once: `Wrapper().prepare(m)`) whose every use is
`name.<method>(...)`, and no method hands `self` anywhere, then the instances never leave
their functions: the method's calls are the ones written in this module, and `call_sites`
can read them all. Anything else (an instance passed to a function, returned, stored, a
metaclass, a decorator, `self` handed on) means the method may be called where qlint cannot
see.

The class may have bases and subclasses (a `Quantizer` subclass, a shared base of test
quantizers) when the whole family is read (`family_of`): every base is a class of the project
(in this module or another one) whose methods keep `self` too, or a library base known to
call nothing on `self` (`_INERT_BASES`); no base's method calls `self.<name>` for a method a
class below it overrides (the flow reads such a call as the base's own method, not the
override that runs); every subclass in this module is confined itself (its instances call
the inherited methods in this module only), and `super().<m>` is no call the flow reads.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.flow.project_search import paths_naming
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
    family = family_of(ctx, cls)
    if family is None:
        return False  # a base class may keep or hand on `self`, or run an override unseen
    if not all(self_stays(m) for c in family for m in c.methods.values()):
        return False
    subclasses = [c for c in ctx.scope.classes.values() if any(_names(b, node.name) for b in c.node.bases)]
    if not all(confined(ctx, c) for c in subclasses):
        return False
    accepted_bases = {id(b) for c in subclasses for b in c.node.bases if _names(b, node.name)}
    name = node.name
    rows = ctx.lines_containing(name)
    unaccepted: set[int] = set()
    for body in bodies(ctx.tree, ctx.scope, ctx.cache):
        loads: set[int] = set()
        accepted: set[int] = set()
        for n in body.nodes(rows):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
                loads.add(id(n))
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and builds(n.func.value, name):
                accepted.add(id(n.func.value.func))  # `Wrapper().prepare(m)`
            elif isinstance(n, ast.Assign) and builds(n.value, name):
                if not isinstance(body.node, _FUNCS) or not bound_to_receiver(n, body.node):
                    return False  # a module-level or class-level instance, or one used otherwise
                accepted.add(id(n.value.func))
        unaccepted |= loads - accepted - accepted_bases
    from qlint.analysis.flow.closed_registries import registered_loads

    if unaccepted and not unaccepted <= registered_loads(ctx, name, _receiver_only, _named_elsewhere(ctx)):
        return False  # the class handed on, or an instance passed or returned
    return paths_naming(ctx, name) == []


def _named_elsewhere(ctx: FileContext):
    return lambda word: paths_naming(ctx, word) != []


# Library bases whose methods call nothing on `self` (abstract hooks for the caller to call).
_INERT_BASES = frozenset(
    {
        "object",
        "abc.ABC",
        "torchao.quantization.pt2e.quantizer.Quantizer",
        "torchao.quantization.pt2e.quantizer.quantizer.Quantizer",
        "torch.ao.quantization.quantizer.Quantizer",
        "torch.ao.quantization.quantizer.quantizer.Quantizer",
        "torchao.quantization.qat.TwoStepQuantizer",
        "torchao.quantization.qat.two_step_quantizer.TwoStepQuantizer",
        "torchao.quantization.unified.TwoStepQuantizer",
    }
)
_MAX_BASES = 6


def family_of(ctx: FileContext, cls: ClassScope) -> list[ClassScope] | None:
    """`cls` and its bases of the project (None: one is not known, or may run an override
    of a class below it that the flow would not see)."""
    family: list[ClassScope] = []
    below: set[str] = set()  # methods of the classes met so far (below the next base)
    todo = [(cls, ctx.scope, 0)]
    while todo:
        current, scope, depth = todo.pop(0)
        if depth > _MAX_BASES or any(c.node is current.node for c in family):
            return None  # too deep, or a base shared twice (a diamond: the order is not read)
        if current.node.decorator_list or current.node.keywords:
            return None
        if depth and _dispatches(current, below):
            return None
        family.append(current)
        below |= set(current.methods)
        for base in current.node.bases:
            found = _base(ctx, scope, base)
            if found is None:
                return None
            if found is not _INERT:
                todo.append((*found, depth + 1))
    return family


_INERT = object()


def _base(ctx: FileContext, scope, base: ast.expr):
    """(class scope, its module's scope) of a base of the project, `_INERT` for an inert
    library base, None otherwise."""
    if isinstance(base, ast.Name) and base.id in scope.classes and base.id not in scope.imports:
        if scope.assigns.get(base.id):
            return None
        return scope.classes[base.id], scope
    parts = []
    node = base
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    if node.id == "object" and not parts and "object" not in scope.imports:
        return _INERT
    root = scope.imports.get(node.id)
    if root is None:
        return None
    qualname = ".".join([root, *reversed(parts)])
    if qualname in _INERT_BASES:
        return _INERT
    module, _, attr = qualname.rpartition(".")
    other = ctx.project.module_scope(module, ctx.path) if module else None
    found = other.classes.get(attr) if other is not None else None
    if found is None or attr in other.imports or other.assigns.get(attr):
        return None
    return found, other


def _dispatches(cls: ClassScope, names: set[str]) -> bool:
    """A method of `cls` reads `self.<name>` for one of `names` (defined by a class below)."""
    for method in cls.methods.values():
        params = parameter_args(method) if isinstance(method, _FUNCS) else []
        if not params:
            continue
        me = params[0].arg
        for n in ast.walk(method):
            if isinstance(n, ast.Attribute) and n.attr in names and isinstance(n.value, ast.Name) and n.value.id == me:
                return True
    return False


def _names(expr: ast.expr, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name


def builds(expr: ast.AST, name: str) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == name


def bound_to_receiver(assign: ast.Assign, func: ast.AST) -> bool:
    """`local = Wrapper(...)` where every read of `local` in the function is `local.<m>(...)`,
    or `local.<m>` handed to a call (`relay(model, local.capture)`): the bound method holds the
    instance, yet can run only that method, whose every use `call_sites` still reads (one the
    flow did not read as a call of it makes its callers unknown)."""
    if len(assign.targets) != 1 or not isinstance(assign.targets[0], ast.Name):
        return False
    return _receiver_only(assign.targets[0].id, func)


def _receiver_only(local: str, func: ast.AST) -> bool:
    """Every read of `local` in `func` is a method call's receiver (or a bound method handed
    to a call), and no `global`/`nonlocal` lets another scope bind it."""
    receivers: set[int] = set()
    reads: set[int] = set()
    for n in ast.walk(func):
        if isinstance(n, (ast.Global, ast.Nonlocal)) and local in n.names:
            return False
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
                receivers.add(id(n.func.value))
            for a in [*n.args, *(k.value for k in n.keywords)]:
                if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name):
                    receivers.add(id(a.value))  # a bound method handed over
        elif isinstance(n, ast.Name) and n.id == local and isinstance(n.ctx, ast.Load):
            reads.add(id(n))
    return reads <= receivers


def self_stays(method: ast.AST) -> bool:
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


__all__ = ["bound_to_receiver", "builds", "confined", "family_of", "self_stays"]

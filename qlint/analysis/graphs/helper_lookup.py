"""Which function of the project a call runs (`Helper`): a function of the module or one
it imports, a method of the enclosing class or of its bases, a function of an imported module,
a method of a class the call's receiver is built from. Other modules are reached through the
helper search's `module_holding` (`forwarding.Forwarding`), which reads only those whose text
can hold the name.
"""

from __future__ import annotations

import ast
from typing import Protocol

from qlint.analysis.graphs.forwarding_facts import RemoteFunction, RemoteModule
from qlint.analysis.graphs.forwarding_texts import is_torch
from qlint.analysis.graphs.receivers import constructed_class
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import ClassScope, ModuleScope, function_assigns
from qlint.value_classes import value_class

MAX_DEPTH = 4


class ModuleHolder(Protocol):
    """What the lookup asks of the helper search (`forwarding.Forwarding`): the module a name
    is imported from, read only when its text can hold the name, and the project index, once
    a resolver has named it (a lookup without a resolver reads that one)."""

    project: object | None

    def module_holding(
        self, resolver: Resolver | None, module: str, requester: str, name: str, function: bool = False
    ) -> RemoteModule | None: ...


@value_class(frozen=True)
class Helper:
    func: ast.FunctionDef | ast.AsyncFunctionDef | RemoteFunction  # the latter: of another module
    scope: ModuleScope | RemoteModule
    class_scope: ClassScope | None
    bound: bool  # called through an instance or class: the first parameter is not passed


def helper_of_call(fw: ModuleHolder, call: ast.Call, resolver: Resolver, caller=None) -> Helper | None:
    """The function a call runs, when it is one of the project's: `f(...)` for a function of
    the module or imported from another of its modules, `self.m(...)`/`cls.m(...)` for a
    method of the enclosing class or its bases, `gu.f(...)` for a function of a module the
    module imports (`import pkg.graph_utils as gu`, `from pkg import graph_utils as gu`)."""
    func = call.func
    if isinstance(func, ast.Name):
        if func.id in resolver.local:
            return None
        return module_function(fw, resolver, resolver.scope, func.id, 0)
    if not isinstance(func, ast.Attribute):
        return None
    if isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
        if resolver.class_scope is None:
            return None
        return method_of_class(fw, resolver, resolver.scope, resolver.class_scope, func.attr, 0)
    local = resolver.local or (function_assigns(caller) if caller is not None else {})
    built = constructed_class(func.value, local, resolver.class_scope)
    if built is not None:  # `GraphBuilder(graph).insert(op)`, `b.insert(op)`, `self.builder.insert(op)`
        return instance_method(fw, resolver, resolver.scope, built, func.attr)
    parts = dotted_parts(func)
    if parts is None or parts[0] not in resolver.scope.imports or parts[0] in resolver.local:
        return None
    if caller is not None and parts[0] in function_assigns(caller):
        return None  # a parameter or local named like the imported module
    return module_attribute(fw, resolver, resolver.scope, parts, 0)


def instance_method(fw: ModuleHolder, resolver, scope, cls: list[str], name: str) -> Helper | None:
    """The method `name` of the class `cls` (dotted, as the receiver's construction spells
    it) of the module or of another module of the project, as a base would be found."""
    found = base_class(fw, resolver, scope, cls, 0)
    return method_of_class(fw, resolver, found[0], found[1], name, 1) if found is not None else None


def module_attribute(fw: ModuleHolder, resolver, scope, parts: list[str], depth: int) -> Helper | None:
    """`m.f(...)` (`parts`: the callee's dotted name) where `m` names a module of the project
    imported by `scope`: that module's function `f`, as an imported `f` would be found. A name
    the module also defines itself is none of its imports' modules."""
    head = scope.imports.get(parts[0])
    if head is None or parts[0] in scope.functions or parts[0] in scope.classes:
        return None
    full = ".".join([head, *parts[1:]])
    if is_torch(full):
        return None
    module, _, attr = full.rpartition(".")
    if len(parts) > 2 and not _runs_through(fw, resolver, scope, head, parts[1:-1]):
        return None  # `pkg.checks.f` where the package binds `checks` to something else
    other = fw.module_holding(resolver, module, scope.path, attr, function=True)
    if other is None or other is scope:
        return None
    return module_function(fw, resolver, other, attr, depth + 1)


def _runs_through(fw, resolver, scope, head: str, middle: list[str]) -> bool:
    from qlint.analysis.graphs.package_paths import runs_through

    return runs_through(fw, resolver.project if resolver is not None else fw.project, scope, head, middle)


def module_function(fw: ModuleHolder, resolver: Resolver, scope: ModuleScope, name: str, depth: int) -> Helper | None:
    if depth > MAX_DEPTH:
        return None
    if name in scope.functions:
        return Helper(scope.functions[name], scope, None, False)
    full = scope.imports.get(name)
    if full is None or full.startswith("torch."):
        return None
    module, _, attr = full.rpartition(".")
    other = fw.module_holding(resolver, module, scope.path, attr, function=True) if module else None
    if other is None or other is scope:
        return None
    return module_function(fw, resolver, other, attr, depth + 1)


def method_of_class(
    fw: ModuleHolder, resolver: Resolver, scope: ModuleScope, cls: ClassScope, name: str, depth: int
) -> Helper | None:
    if depth > MAX_DEPTH:
        return None
    method = cls.methods.get(name)
    if method is not None:
        if isinstance(method, RemoteFunction):
            static = method.static
        else:
            static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list)
        return Helper(method, scope, cls, not static)
    for base in cls.bases:
        found = base_class(fw, resolver, scope, base, depth)
        if found is not None:
            helper = method_of_class(fw, resolver, found[0], found[1], name, depth + 1)
            if helper is not None:
                return helper
    return None


def base_class(fw: ModuleHolder, resolver: Resolver, scope: ModuleScope, base: ast.expr, depth: int):
    """The class a base names, from the module's own imports (not through the resolver,
    which would parse every module on the way); a base of another module's class is a list
    of names already."""
    parts = base if isinstance(base, list) else dotted_parts(base)
    if not parts:
        return None
    if len(parts) == 1 and parts[0] in scope.classes:
        return scope, scope.classes[parts[0]]
    head = scope.imports.get(parts[0])
    if head is None or depth > MAX_DEPTH:
        return None
    full = ".".join([head, *parts[1:]])
    if full.startswith(("torch.", "builtins.")):
        return None
    if len(parts) > 2 and not _runs_through(fw, resolver, scope, head, parts[1:-1]):
        return None  # `pkg.checks.Base` where the package binds `checks` to something else
    module, _, name = full.rpartition(".")
    other = fw.module_holding(resolver, module, scope.path, name) if module else None
    if other is None or other is scope:
        return None
    if name in other.classes:
        return other, other.classes[name]
    if name in other.imports:  # re-exported, e.g. from a package's __init__
        return base_class(fw, resolver, other, [name], depth + 1)
    return None

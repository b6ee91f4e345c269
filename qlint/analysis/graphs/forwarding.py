"""Helpers that forward a parameter to a sink: `_test_quantizer(m, inputs, q, occurrence)`
passes `occurrence` on to `checkGraphModuleNodes(m, expected_node_occurrence=...)`, and a
project's own `insert(graph, op, args)` passes `op` on to `graph.call_function(op, args)`.

A call of such a helper is a sink (or an insertion) at the positions and keywords of the
forwarded parameters. Helpers are found by resolving the callee: a function of the module,
one imported from another module of the project, or a method of the enclosing class or of
one of its bases (in this module or another one of the project). Forwarding through
helpers of helpers is followed a few levels deep.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ClassScope, ModuleScope, function_assigns, parameter_args

_MAX_DEPTH = 4
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)

# What a sink is: for a call (and the resolver of its body), the argument expressions that
# reach it directly.
DirectSink = Callable[[ast.Call], Iterator[ast.expr]]


@dataclass(frozen=True)
class Helper:
    func: ast.FunctionDef | ast.AsyncFunctionDef
    scope: ModuleScope
    class_scope: ClassScope | None
    bound: bool  # called through an instance or class: the first parameter is not passed


class Forwarding:
    """Which arguments of a call reach a sink through a helper; one per file and sink kind."""

    def __init__(self, direct: DirectSink, resolver_for: Callable[[ModuleScope, ClassScope | None], Resolver]):
        self._direct = direct
        self._resolver_for = resolver_for
        self._params: dict[int, tuple[ast.AST, frozenset[str]]] = {}

    def forwarded_args(self, call: ast.Call, resolver: Resolver) -> list[ast.expr]:
        """The arguments of `call` that a helper forwards to a sink ([] for other calls)."""
        helper = resolve_helper(call, resolver)
        if helper is None:
            return []
        names = self.forwarded_params(helper.func, helper.scope, helper.class_scope, 0)
        if not names:
            return []
        params = [a.arg for a in parameter_args(helper.func, star=False)]
        if helper.bound and params:
            params = params[1:]
        out = [arg for i, arg in enumerate(call.args) if i < len(params) and params[i] in names]
        if any(isinstance(a, ast.Starred) for a in call.args):
            out = []  # positions after a `*args` are unknowable
        out += [kw.value for kw in call.keywords if kw.arg in names]
        return out

    def forwarded_params(self, func, scope: ModuleScope, class_scope: ClassScope | None, depth: int) -> frozenset[str]:
        """Parameters of `func` that reach a sink unchanged (passed as a sink's argument, or
        to a helper that forwards them)."""
        key = id(func)
        if key in self._params:
            return self._params[key][1]
        self._params[key] = (func, frozenset())  # a cycle forwards nothing more
        params = {a.arg for a in parameter_args(func, star=False)}
        # A parameter rebound in the body no longer holds what the caller passed.
        rebound = {n for n, values in function_assigns(func).items() if len(values) > 1}
        params -= rebound
        found: set[str] = set()
        if params and depth <= _MAX_DEPTH:
            resolver = self._resolver_for(scope, class_scope)
            for node in _calls(func):
                args = list(self._direct(node))
                if not args and depth < _MAX_DEPTH:
                    helper = resolve_helper(node, resolver)
                    if helper is not None and helper.func is not func:
                        names = self.forwarded_params(helper.func, helper.scope, helper.class_scope, depth + 1)
                        if names:
                            args = self.forwarded_args(node, resolver)
                found.update(a.id for a in args if isinstance(a, ast.Name) and a.id in params)
        result = frozenset(found)
        self._params[key] = (func, result)
        return result


def _calls(func: ast.AST) -> Iterator[ast.Call]:
    """Calls in a function body, not in nested functions or classes."""
    stack = list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop()
        if isinstance(node, (*_FUNCS, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def resolve_helper(call: ast.Call, resolver: Resolver) -> Helper | None:
    """The function a call runs, when it is one of the project's: `f(...)` for a function of
    the module or imported from another of its modules, `self.m(...)`/`cls.m(...)` for a
    method of the enclosing class or its bases."""
    func = call.func
    if isinstance(func, ast.Name):
        if func.id in resolver.local:
            return None
        return _module_function(resolver, resolver.scope, func.id, 0)
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in ("self", "cls")
        and resolver.class_scope is not None
    ):
        return _method(resolver, resolver.scope, resolver.class_scope, func.attr, 0)
    return None


def _module_function(resolver: Resolver, scope: ModuleScope, name: str, depth: int) -> Helper | None:
    if depth > _MAX_DEPTH:
        return None
    if name in scope.functions:
        return Helper(scope.functions[name], scope, None, False)
    full = scope.imports.get(name)
    if full is None or full.startswith("torch."):
        return None
    module, _, attr = full.rpartition(".")
    other = resolver.project.module_scope(module, scope.path) if module else None
    if other is None or other is scope:
        return None
    return _module_function(resolver, other, attr, depth + 1)


def _method(resolver: Resolver, scope: ModuleScope, cls: ClassScope, name: str, depth: int) -> Helper | None:
    if depth > _MAX_DEPTH:
        return None
    method = cls.methods.get(name)
    if method is not None:
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list)
        return Helper(method, scope, cls, not static)
    for base in cls.bases:
        found = _base_class(resolver, scope, base, depth)
        if found is not None:
            helper = _method(resolver, found[0], found[1], name, depth + 1)
            if helper is not None:
                return helper
    return None


def _base_class(resolver: Resolver, scope: ModuleScope, base: ast.expr, depth: int):
    if isinstance(base, ast.Name) and base.id in scope.classes:
        return scope, scope.classes[base.id]
    full = resolver.for_scope(scope).qualname(base)
    if not full or full.startswith(("torch.", "builtins.")):
        return None
    module, _, name = full.rpartition(".")
    other = resolver.project.module_scope(module, scope.path) if module else None
    if other is None or other is scope or depth > _MAX_DEPTH:
        return None
    if name in other.classes:
        return other, other.classes[name]
    full2 = other.imports.get(name)  # re-exported from a package's __init__
    if full2:
        mod2, _, name2 = full2.rpartition(".")
        third = resolver.project.module_scope(mod2, other.path) if mod2 else None
        if third is not None and name2 in third.classes:
            return third, third.classes[name2]
    return None

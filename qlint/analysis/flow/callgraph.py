"""What runs when a value is called, and everything it calls in turn, across the project.

Rules that judge a callback by what it does (QL301: does this pre-prepare pass decompose?)
need its body, wherever it was written: a function of the same module or imported from
another project module, a lambda, `functools.partial(f, ...)`, an instance of a class with
`__call__` (or an ExecuTorch `ExportPass`/`PassBase` subclass, whose `call` runs), or what a
factory function returns. `CallGraph.walk` then visits those bodies and the project
functions they call, to a bounded depth, each function at most once.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ClassScope, ModuleScope, function_assigns, parameters
from qlint.analysis.tree_walk import own_nodes
from qlint.diagnostic import Range
from qlint.value_classes import field, value_class

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
PARTIALS = frozenset({"functools.partial"})
# Base classes whose instances run `call(graph_module)` when called.
PASS_BASES = frozenset(
    {
        "torch.fx.passes.infra.pass_base.PassBase",
        "executorch.exir.pass_base.PassBase",
        "executorch.exir.pass_base.ExportPass",
        "executorch.exir.pass_base._ExportPassBase",
        "executorch.exir.pass_manager.PassBase",
    }
)
DEFAULT_DEPTH = 4
_MAX_RESOLVE = 8


@value_class(frozen=True)
class Callee:
    """A function body that runs, with the bindings its names resolve through."""

    node: FunctionNode
    scope: ModuleScope
    class_scope: ClassScope | None = None
    # Local bindings of the enclosing functions (a closure sees its factory's locals).
    enclosing: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def path(self) -> str:
        return self.scope.path

    @property
    def name(self) -> str:
        return getattr(self.node, "name", "<lambda>")

    def local(self) -> dict[str, list[ast.expr]]:
        return {**self.enclosing, **function_assigns(self.node)}

    def resolver(self, project: ProjectIndex, optable) -> Resolver:
        return Resolver(self.scope, project, optable, self.local(), self.class_scope)


@value_class(frozen=True)
class Visit:
    """One node of a walked body; `chain` is how it was reached from the root."""

    node: ast.AST
    callee: Callee
    resolver: Resolver
    chain: tuple[Callee, ...]


def node_range(node: ast.AST, path: str, project: ProjectIndex) -> Range:
    """The code-point range of a node in any project file (for related information)."""
    return project.locate(path, node)[0]


class CallGraph:
    def __init__(self, project: ProjectIndex, optable, max_depth: int = DEFAULT_DEPTH):
        self.project = project
        self.optable = optable
        self.max_depth = max_depth
        # (id(class node), id(scope), depth) -> (class node, methods): asked at every `self.x(...)`.
        self._methods: dict[tuple[int, int, int], tuple[ast.AST, dict]] = {}

    # -- what a value runs when called -----------------------------------------------------
    def callables(self, expr: ast.expr, resolver: Resolver, depth: int = 0) -> list[Callee]:
        if depth > _MAX_RESOLVE:
            return []
        if isinstance(expr, ast.Lambda):
            return [Callee(expr, resolver.scope, resolver.class_scope, dict(resolver.local))]
        if isinstance(expr, ast.Call):
            func = resolver.qualname(expr.func)
            if func in PARTIALS and expr.args:
                return self.callables(expr.args[0], resolver, depth + 1)
            target = self.definition(expr.func, resolver)
            if target is None:
                return []
            node, scope, cls = target
            if isinstance(node, ast.ClassDef):
                return self.instance_entries(node, scope)
            return self._returned(Callee(node, scope, cls), depth)
        target = self.definition(expr, resolver)
        if target is not None:
            node, scope, cls = target
            return [] if isinstance(node, ast.ClassDef) else [Callee(node, scope, cls)]
        located = resolver.value_of(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
        if located is not None and located.node is not expr:
            return self.callables(located.node, resolver.for_scope(located.scope), depth + 1)
        return []

    def definition(
        self, expr: ast.expr, resolver: Resolver, functions_only: bool = False
    ) -> tuple[ast.AST, ModuleScope, ClassScope | None] | None:
        """The function or class a name denotes: same module, `self.method`, or a project import.
        `functions_only`: None where it denotes a class (a caller that reads functions only),
        without building the class: another module's class is parsed from its text for that
        (ExecuTorch's 400-line `QnnQuantizer`, 6 ms of an edited file's check, to be turned away)."""
        if isinstance(expr, ast.Name) and expr.id not in resolver.local:
            found = _in_scope(resolver.scope, expr.id, functions_only)
            if found is not None:
                return None if found is _CLASS else found
        if (
            isinstance(expr, ast.Attribute)
            and isinstance(expr.value, ast.Name)
            and expr.value.id in ("self", "cls")
            and resolver.class_scope is not None
        ):
            method = self.methods(resolver.class_scope, resolver.scope).get(expr.attr)
            return (method[0], method[1], resolver.class_scope) if method else None
        qual = resolver.qualname(expr)
        if qual is None:
            return None
        return self._by_qualname(qual, resolver.scope, functions_only)

    def _by_qualname(
        self, qual: str, requester: ModuleScope, functions_only: bool = False
    ) -> tuple[ast.AST, ModuleScope, ClassScope | None] | None:
        parts = qual.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module, rest = ".".join(parts[:cut]), parts[cut:]
            scope = requester if module == requester.module else self.project.module_scope(module, requester.path)
            if scope is None:
                continue
            if len(rest) == 1:
                found = _in_scope(scope, rest[0], functions_only)
                return None if found is _CLASS else found
            if len(rest) == 2 and rest[0] in scope.classes:
                cls = scope.classes[rest[0]]
                method = cls.methods.get(rest[1])
                return (method, scope, cls) if method else None
            return None
        return None

    def _returned(self, factory: Callee, depth: int) -> list[Callee]:
        """A factory call: the callables it returns (closures see its locals), else the factory."""
        if isinstance(factory.node, ast.Lambda):
            return [factory]
        local = factory.local()
        resolver = Resolver(factory.scope, self.project, self.optable, local, factory.class_scope)
        found: list[Callee] = []
        for node in own_nodes(factory.node):
            if isinstance(node, ast.Return) and node.value is not None:
                value = node.value
                if isinstance(value, ast.Name) and value.id not in parameters(factory.node):
                    nested = _nested_def(factory.node, value.id)
                    if nested is not None:
                        found.append(Callee(nested, factory.scope, factory.class_scope, local))
                        continue
                found.extend(self.callables(value, resolver, depth + 1))
        return found or [factory]

    # -- classes ---------------------------------------------------------------------------
    def methods(self, cls: ClassScope, scope: ModuleScope, depth: int = 0) -> dict[str, tuple[ast.AST, ModuleScope]]:
        """Methods of a class including those inherited from project base classes (shared: the
        graph lives for one check, and the walks ask for them at every `self.<method>(...)`)."""
        memo_key = (id(cls.node), id(scope), depth)
        known = self._methods.get(memo_key)
        if known is not None and known[0] is cls.node:
            return known[1]
        merged = self._methods_of(cls, scope, depth)
        self._methods[memo_key] = (cls.node, merged)
        return merged

    def _methods_of(self, cls: ClassScope, scope: ModuleScope, depth: int) -> dict[str, tuple[ast.AST, ModuleScope]]:
        merged: dict[str, tuple[ast.AST, ModuleScope]] = {}
        if depth <= _MAX_RESOLVE:
            resolver = Resolver(scope, self.project, self.optable)
            for base in reversed(cls.bases):
                found = self.definition(base, resolver)
                if found is not None and isinstance(found[0], ast.ClassDef):
                    base_scope = found[1].classes.get(found[0].name) or ClassScope.build(found[0])
                    merged.update(self.methods(base_scope, found[1], depth + 1))
        merged.update({name: (node, scope) for name, node in cls.methods.items()})
        return merged

    def is_pass_class(self, cls: ClassScope, scope: ModuleScope, depth: int = 0) -> bool:
        if depth > _MAX_RESOLVE:
            return False
        resolver = Resolver(scope, self.project, self.optable)
        for base in cls.bases:
            if resolver.qualname(base) in PASS_BASES:
                return True
            found = self.definition(base, resolver)
            if found is not None and isinstance(found[0], ast.ClassDef):
                base_scope = found[1].classes.get(found[0].name) or ClassScope.build(found[0])
                if self.is_pass_class(base_scope, found[1], depth + 1):
                    return True
        return False

    def instance_entries(self, node: ast.ClassDef, scope: ModuleScope) -> list[Callee]:
        """What calling an instance runs: `__call__`, else a pass's `call` (or its `call_*` hooks)."""
        cls = scope.classes.get(node.name) or ClassScope.build(node)
        methods = self.methods(cls, scope)
        if "__call__" in methods:
            names = ["__call__"]
        elif self.is_pass_class(cls, scope):
            own = [n for n in methods if n == "call"]
            names = own or [n for n in methods if n.startswith("call_")]
        else:
            names = []
        return [Callee(methods[n][0], methods[n][1], cls) for n in names]

    # -- walking ---------------------------------------------------------------------------
    def walk(self, roots: list[Callee]) -> Iterator[Visit]:
        """Every node of the roots and of the project functions they call, each body once."""
        seen: set[int] = set()
        stack: list[tuple[Callee, int, tuple[Callee, ...]]] = [(r, 0, (r,)) for r in reversed(roots)]
        while stack:
            callee, depth, chain = stack.pop()
            if id(callee.node) in seen:
                continue
            seen.add(id(callee.node))
            resolver = callee.resolver(self.project, self.optable)
            nested: list[tuple[Callee, int, tuple[Callee, ...]]] = []
            for node in own_nodes(callee.node):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    inner = Callee(node, callee.scope, callee.class_scope, resolver.local)
                    nested.append((inner, depth, (*chain, inner)))
                    continue
                yield Visit(node, callee, resolver, chain)
                if isinstance(node, ast.Call) and depth < self.max_depth:
                    for target in self._call_targets(node.func, resolver):
                        nested.append((target, depth + 1, (*chain, target)))
            stack.extend(reversed(nested))

    def _call_targets(self, func: ast.expr, resolver: Resolver) -> list[Callee]:
        if isinstance(func, ast.Call):  # `Decompose()(gm)`
            return self.callables(func, resolver)
        target = self.definition(func, resolver)
        if target is None:
            return []
        node, scope, cls = target
        if isinstance(node, ast.ClassDef):
            init = self.methods(scope.classes.get(node.name) or ClassScope.build(node), scope).get("__init__")
            return [Callee(init[0], init[1], scope.classes.get(node.name))] if init else []
        return [Callee(node, scope, cls)]


# `_in_scope`'s answer, for a caller that reads functions only, where the name is a class.
_CLASS: tuple = ()


def _in_scope(
    scope: ModuleScope, name: str, functions_only: bool = False
) -> tuple[ast.AST, ModuleScope, ClassScope | None] | None:
    if name in scope.functions:
        return scope.functions[name], scope, None
    if name in scope.classes:
        return _CLASS if functions_only else (scope.classes[name].node, scope, None)
    return None


def _nested_def(func: ast.AST, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in own_nodes(func):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return None


__all__ = ["CallGraph", "Callee", "Visit", "node_range"]

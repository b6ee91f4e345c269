"""Functions the project calls only once it has normalised the graph to packets (QL101, QL102).

A backend that runs `strip_overloads(gm)` (or rewrites `n.target = n.target.overloadpacket`)
and then a pass, or a decorator whose wrapper does so before calling what it wraps, hands that
pass a graph whose every node carries a packet: matching or inserting packets there is right.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.project_scan import normalised_callees, normalising_decorator
from qlint.analysis.names.functions import Body
from qlint.analysis.names.resolver import Resolver


def normalised_before(ctx: FileContext, body: Body) -> bool:
    """Whether the project normalises graphs to packets before calling the function (or the
    class) `body` belongs to."""
    if ctx.module is None:
        return False
    names = set()
    func, owner, decorators = _decorated(body)
    if func is not None and owner is None and ctx.scope.functions.get(func.name) is func:
        names.add(f"{ctx.module}.{func.name}")
    if owner is not None and ctx.scope.classes.get(owner.name) is not None:
        names.add(f"{ctx.module}.{owner.name}")
        if func is not None:
            names.add(f"{ctx.module}.{owner.name}.{func.name}")
    if not names and not decorators:
        return False
    normalised = normalised_callees(ctx)
    return bool(names & normalised) or _normalising_decorator(ctx, decorators, normalised)


def decorated_by_normaliser(ctx: FileContext, body: Body) -> bool:
    """Whether the function (or its class) `body` belongs to is decorated by a decorator of
    the project whose wrapper normalises graphs to packets before calling it, read from the
    decorator's own module alone (no scan of the project's normalisers)."""
    if ctx.module is None:
        return False
    decorators = _decorated(body)[2]
    return bool(decorators) and _normalising_decorator(ctx, decorators, set())


def _decorated(body: Body) -> tuple[ast.AST | None, ast.ClassDef | None, list[ast.expr]]:
    """The function `body` is (None for a class or module body), its class, and the
    decorators of both."""
    func = body.node if isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    owner = body.class_scope.node if body.class_scope is not None else None
    return func, owner, [*(func.decorator_list if func is not None else ()), *(owner.decorator_list if owner else ())]


def _normalising_decorator(ctx: FileContext, decorators: list[ast.expr], normalised: set[str]) -> bool:
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable)
    for deco in decorators:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = resolver.qualname(target)
        if not name:
            continue
        if name in normalised:
            return True
        # A script outside any package (a test next to no `__init__.py`) has no project scan,
        # and a namespace package's module is named by its file alone: the decorator's own
        # module, found as the import resolves, is read instead.
        if normalising_decorator(ctx, name):
            return True
    return False

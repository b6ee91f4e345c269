"""Functions the project calls only once it has normalised the graph to packets (QL101, QL102).

A backend that runs `strip_overloads(gm)` (or rewrites `n.target = n.target.overloadpacket`)
and then a pass, or a decorator whose wrapper does so before calling what it wraps, hands that
pass a graph whose every node carries a packet: matching or inserting packets there is right.
So does a front end that rewrites each node's target to the packet of its own name
(`packet_renames`), for every pass of the project, and for a pass a script runs only after it
(`front_end_calls`).
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.front_end_calls import runs_after_front_end
from qlint.analysis.graphs.packet_renames import LOOKUP, NEEDLES, renaming_functions
from qlint.analysis.graphs.project_normalisers import (
    LIBRARY_NORMALISERS,
    library_normalised,
    normalised_callees,
    normalising_decorator,
)
from qlint.analysis.graphs.scanned_facts import module_facts
from qlint.analysis.graphs.stripped_later import named_elsewhere
from qlint.analysis.names.functions import Body, module_function
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.tree_walk import name_loads, own_nodes


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


def called_by_library_normalised(ctx: FileContext, body: Body) -> bool:
    """Whether the module function `body` runs only on the graph a function decorated by a
    library normaliser (`project_normalisers.LIBRARY_NORMALISERS`) receives: every use of its
    name in the module is a call, in such a function's own body, whose first argument is that
    function's graph parameter, never rebound; and no other module of the project names it."""
    func = module_function(body, ctx.scope)
    if func is None or func.decorator_list:
        return False
    if not any(n.rpartition(".")[2] in ctx.words for n in LIBRARY_NORMALISERS):
        return False
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable)
    name = func.name
    loads = len(name_loads(ctx.tree, name))
    calls = 0
    for backend in ctx.scope.functions.values():
        if not (isinstance(backend, (ast.FunctionDef, ast.AsyncFunctionDef)) and backend.args.args):
            continue
        if not library_normalised(backend, resolver):
            continue
        graph = backend.args.args[0].arg
        nodes = own_nodes(backend)
        if any(isinstance(n, ast.Name) and n.id == graph and not isinstance(n.ctx, ast.Load) for n in nodes):
            continue  # the parameter rebound: the call may get another graph
        calls += sum(
            1
            for n in nodes
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.func.id == func.name
            and n.args
            and isinstance(n.args[0], ast.Name)
            and n.args[0].id == graph
        )
    return 0 < loads == calls and not named_elsewhere(ctx, func.name)


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
        if name in normalised or name in LIBRARY_NORMALISERS:
            return True
        # A script outside any package (a test next to no `__init__.py`) has no project scan,
        # and a namespace package's module is named by its file alone: the decorator's own
        # module, found as the import resolves, is read instead.
        if normalising_decorator(ctx, name):
            return True
    return False


def renamed_by_front_end(ctx: FileContext, body: Body | None, namespace: str) -> bool:
    """Whether a function of the project (this module or another of its package) rewrites
    node targets to the packets of `namespace` named after each node's own op, and `body`
    (where the packet is compared or inserted) is not such a function: a pipeline that
    renames its graphs at the front hands packets to all its passes. Within the renaming
    function a comparison may come before the rewrite (EVT's `visit` drops `aten.detach`
    packets from graphs that still carry overloads), so nothing there is excused."""
    own = _once_per_check(ctx, _OWN_RENAMES, renaming_functions)
    if body is not None and isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        row = body.node.lineno
        if any(first <= row <= last for _, first, last in own):
            return False
    if any(found == namespace for found, _, _ in own):
        return True
    if namespace in _once_per_check(ctx, _KEPT_RENAMES, _kept_renames):
        return True
    # A pass the module runs only after a front end (imported or its own) renamed that graph:
    # a script outside the front end's package, which no project scan reaches.
    func = body.node if body is not None else None
    return isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and runs_after_front_end(ctx, func, namespace)


# What `renamed_by_front_end` reads off the module and the project, once per check: it is
# asked for every reported insertion and matcher, and the project scan's answer (a pass over
# torch's ~250 kept modules) was taken again for each of them.
_OWN_RENAMES = "normalised_graphs.own_renames"
_KEPT_RENAMES = "normalised_graphs.kept_renames"


def _once_per_check(ctx: FileContext, key: str, read):
    found = ctx.cache.get(key)
    if found is None:
        found = ctx.cache[key] = read(ctx)
    return found


def _kept_renames(ctx: FileContext) -> frozenset[str]:
    """The namespaces the front ends among the modules the project scan keeps rename to (those
    that insert nodes or normalise graphs: a front end is a pass too). Reading every other
    module of torch for it cost ~0.4 s a run."""
    kept = module_facts(ctx, NEEDLES, renaming_functions, LOOKUP, saved=True)
    return frozenset(found for funcs in kept for found, _, _ in funcs)

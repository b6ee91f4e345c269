"""Project decorators that hand the decorated function its callers' arguments unchanged (issue
14): `def deco(fn): return fn`, and a wrapper that calls `fn(*args, **kwargs)` as it was
called (`functools.wraps` wrappers that log or time the call, ultralytics' `@try_export`), or
`fn(cfg, model, *args, **kwargs)` of its own parameters in order, returned on every branch
(d2go's `@mock_quantization_type`, which patches `type` around one of three such calls).

A method under such a decorator is its callers' method as much as an undecorated one: what a
call passes reaches its parameters, and the call returns what the body returns (the wrapper
calls `fn` once, returns its result and reads it for nothing but `isinstance`; `fn.__name__`
may be read for a log line, a parameter's attributes for a test or a message). Anything else
is no pass-through: a decorator factory (`@deco(...)`), one of a library, one that changes,
adds or drops arguments, calls a parameter's method (`model.eval()`), calls `fn` otherwise,
twice or in a loop or `try`, catches and returns something else, or may end without
returning. Together with the gradient switches (`mode_neutral`), these are the decorators
under which a method is read as written; a function under another decorator of the project
is not followed from its calls (`opaque`).

One such other decorator is read for what it does to the arguments: a wrapper that is a
pass-through but for statements it opens with, each putting one of its own positional
parameters in eval mode (`def evaled(fn): def w(model, *a): model.eval(); return fn(model,
*a)`), or for the parameters its call of `fn` hands evaled (`return fn(model.eval(), *a)`, in
every call alike), hands the function that parameter in eval mode at every call
(`evaled_parameters`). A decorator's def is read once (`decorator_verdicts`), its verdict kept
on it.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.decorator_verdicts import EVALS, PASSES, decorator_verdict
from qlint.analysis.flow.mode_neutral import mode_neutral
from qlint.analysis.flow.registering_decorators import registering
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.node_memo import kept_on_node


def transparent(owner, decorators: list[ast.expr]) -> bool:
    """Every decorator is a gradient switch (`mode_neutral`) or a project pass-through. `owner`
    has the module's `scope`, `project` and `optable` (a `FileContext` or a `ModelFlow`)."""
    resolver = None
    for deco in decorators:
        if mode_neutral(owner, [deco]):
            continue
        resolver = resolver or Resolver(owner.scope, owner.project, owner.optable)
        found = _decorator_def(owner, deco, resolver)
        if found is None:
            return False
        scope, func = found
        verdict = kept_on_node(
            func, "_qlint_pass_through", lambda f, s=scope: decorator_verdict(f, _resolver(owner, s))
        )
        if verdict != PASSES:
            return False
    return True


def opaque(owner, node: ast.AST) -> bool:
    """A function (`node`, of `owner`'s module) under a decorator of the project that is no
    pass-through: a call of its name runs what that decorator returned, which may eval, train
    or replace what it is handed, or return something else (`def evaled(fn): def w(m):
    m.eval(); return fn(m)`). Such a call is none of the function's: the walk does not follow
    it, and the function's callers are not read (issue 14). A decorator factory of the
    project (`@retry(3)`) too, but for a registry's (`@register("key")`, which stores the
    function and hands it back, `decorator_registries`). A library's decorator is read as
    before: what it does is not known here."""
    decorators = getattr(node, "decorator_list", None)
    if not decorators:
        return False
    resolver = None
    for deco in decorators:
        if mode_neutral(owner, [deco]):
            continue
        resolver = resolver or Resolver(owner.scope, owner.project, owner.optable)
        factory = isinstance(deco, ast.Call)
        found = _decorator_def(owner, deco.func if factory else deco, resolver)
        if found is None:
            continue  # a library's (or no function's): not judged here
        scope, func = found
        if factory:
            if not registering(func):
                return True
            continue
        verdict = kept_on_node(
            func, "_qlint_pass_through", lambda f, s=scope: decorator_verdict(f, _resolver(owner, s))
        )
        if verdict != PASSES:
            return True
    return False


def evaled_parameters(owner, node: ast.AST) -> frozenset[int]:
    """The positions of the parameters of `node` (a function of `owner`'s module) that every
    call hands it in eval mode: its decorators are gradient switches, pass-throughs and at
    least one of the project's whose wrapper opens with `<param>.eval()` (or `.train(False)`)
    statements and is a pass-through otherwise. Empty when any decorator is something else."""
    positions: set[int] = set()
    resolver = None
    for deco in getattr(node, "decorator_list", ()):
        if mode_neutral(owner, [deco]):
            continue
        resolver = resolver or Resolver(owner.scope, owner.project, owner.optable)
        found = _decorator_def(owner, deco, resolver) if not isinstance(deco, ast.Call) else None
        if found is None:
            return frozenset()
        scope, func = found
        verdict = kept_on_node(
            func, "_qlint_pass_through", lambda f, s=scope: decorator_verdict(f, _resolver(owner, s))
        )
        if verdict.startswith(EVALS):
            positions.update(int(p) for p in verdict[len(EVALS) :].split(","))
        elif verdict != PASSES:
            return frozenset()
    return frozenset(positions)


def _resolver(owner, scope) -> Resolver:
    return Resolver(scope, owner.project, owner.optable)


def _decorator_def(owner, deco: ast.expr, resolver: Resolver):
    """(its module's scope, the def) of the project function a plain decorator names."""
    scope = owner.scope
    if isinstance(deco, ast.Name) and deco.id in scope.functions and deco.id not in scope.imports:
        if deco.id in scope.assigns:
            return None
        return scope, scope.functions[deco.id]
    name = resolver.qualname(deco)
    if not name or "." not in name:
        return None
    module, _, attr = name.rpartition(".")
    other = owner.project.module_scope(module, scope.path)
    if other is None or attr not in other.functions or attr in other.imports or attr in other.assigns:
        return None
    return other, other.functions[attr]


__all__ = ["evaled_parameters", "opaque", "transparent"]

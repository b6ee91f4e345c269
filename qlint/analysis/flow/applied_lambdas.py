"""`m.apply(lambda mod: mod.eval())`: a lambda `Module.apply` hands every module, read as the
named function of the same body is (`looped_switches.applied_function`).

`Module.apply(fn)` calls `fn` on every submodule and on the module itself; a lambda whose body
is one switch of its parameter (`mod.eval()`, `mod.train()`, `mod.train(False)`) sets each of
them to that mode, as `m.eval()` / `m.train()` would; `mod.eval() if isinstance(mod,
nn.BatchNorm2d) else None` (or a test of the module's class name) switches the modules of
those classes only, as `def bn_eval(mod): if isinstance(mod, nn.BatchNorm2d): mod.eval()` does.

The lambda written in the call, or a local name the function binds once, to it (`freeze =
lambda mod: ...; m.apply(freeze)`). Only that: one parameter (no default, no `*args`), a body
that is the switch, or a conditional expression whose test selects classes of the parameter
and whose other arm does nothing (`None`, or the parameter itself). A lambda whose body calls
something else (`lambda mod: init_weights(mod)`), switches another object, or whose test is
anything else (`mod.eval() if freeze else None`: which modules depends on a value not
followed here) is not this shape, and `apply` of it is read as that of any unknown function.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.looped_switches import LoopSwitch, module_test
from qlint.analysis.flow.model_apis import switch_mode
from qlint.analysis.names.scope import unique_value


def applied_lambda(sem, arg: ast.expr) -> ast.Lambda | None:
    """The lambda `apply` is handed: written there, or a local name bound once to it."""
    if isinstance(arg, ast.Lambda):
        return arg
    if not isinstance(arg, ast.Name):
        return None
    values = sem.resolver.local.get(arg.id)  # parameters count as bindings
    if not values or len(values) != 1:
        return None
    lam = unique_value(values)
    return lam if isinstance(lam, ast.Lambda) else None


def lambda_switch(lam: ast.Lambda) -> LoopSwitch | None:
    """The switch the lambda makes on each module `apply` hands it, or None."""
    args = lam.args
    if len(args.args) != 1 or args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or args.defaults:
        return None
    name = args.args[0].arg
    body, filters = lam.body, None
    if isinstance(body, ast.IfExp):
        filters = module_test(body.test, name)
        if filters is None or not _inert(body.orelse, name):
            return None
        body = body.body
    if not (
        isinstance(body, ast.Call)
        and isinstance(body.func, ast.Attribute)
        and body.func.attr in ("eval", "train")
        and isinstance(body.func.value, ast.Name)
        and body.func.value.id == name
        and len(body.args) + len(body.keywords) <= 1
        and not any(isinstance(n, ast.Name) and n.id == name for a in (*body.args, *body.keywords) for n in ast.walk(a))
    ):
        return None
    if body.keywords and body.keywords[0].arg != "mode":
        return None
    return LoopSwitch(body, switch_mode(body, body.func.attr), filters)


def _inert(expr: ast.expr, name: str) -> bool:
    """The arm that does nothing: `None`, or the module handed in."""
    return (isinstance(expr, ast.Constant) and expr.value is None) or (isinstance(expr, ast.Name) and expr.id == name)


__all__ = ["applied_lambda", "lambda_switch"]

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

`functools.partial(nn.Module.train, mode=False)` (or of `nn.Module.eval`) is the same switch
with the module handed in as `self`; a partial of anything else, or binding more than `mode`,
is not. A name the module binds once, at its top level, to either (`to_eval = lambda m:
m.eval()` above the function) is read as the local one is, from a function that binds the
name no way of its own, with the module's names (its imports and assignments, as
`Resolver.value_of` reads them): a name also imported, defined, or assigned twice there is not.
A function written in another one reads the name from the nearest enclosing function binding
it (`enclosing_names`): read when that binding is its one `name = <lambda or partial>`, with
that function's names.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.enclosing_names import MODULE, assigned_once, binding_scope
from qlint.analysis.flow.looped_switches import LoopSwitch, module_test
from qlint.analysis.flow.model_apis import switch_mode
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import function_assigns, unique_value

_PARTIAL = "functools.partial"
MODULE_SWITCHES = frozenset(
    f"{module}.Module.{attr}" for module in ("torch.nn", "torch.nn.modules.module") for attr in ("eval", "train")
)


def applied_lambda(sem, arg: ast.expr) -> tuple[ast.Lambda | ast.Call, Resolver] | None:
    """The lambda (or partial) `apply` is handed: written there, or a name bound once to it in
    the function or at the module's top level; with the resolver its names are read by."""
    if isinstance(arg, ast.Lambda) or _partial(arg, sem.resolver):
        return arg, sem.resolver
    if not isinstance(arg, ast.Name):
        return None
    values = sem.resolver.local.get(arg.id)  # parameters count as bindings
    if values is not None:
        if len(values) != 1:
            return None
        value = unique_value(values)
        return (value, sem.resolver) if isinstance(value, ast.Lambda) or _partial(value, sem.resolver) else None
    if name_defined_here(sem, arg.id):
        return None
    scope = sem.resolver.scope
    where = binding_scope(scope, sem.walk.func, sem.class_scope, arg.id)
    if where is None:
        return None
    if where != MODULE:  # bound in a function this one is written in: read with its names
        value = assigned_once(where, arg.id)
        outer = Resolver(scope, sem.resolver.project, sem.resolver.optable, function_assigns(where))
        return (value, outer) if isinstance(value, ast.Lambda) or _partial(value, outer) else None
    values = scope.assigns.get(arg.id)
    if (
        not values
        or len(values) != 1
        or arg.id in scope.imports
        or arg.id in scope.functions
        or arg.id in scope.classes
    ):
        return None
    module = Resolver(scope, sem.resolver.project, sem.resolver.optable)  # the function's locals shadow nothing there
    (value,) = values
    return (value, module) if isinstance(value, ast.Lambda) or _partial(value, module) else None


def name_defined_here(sem, name: str) -> bool:
    """The function walked binds `name` itself in a way its locals do not list: a function or
    class written in it, or an import of its own."""
    return name in sem.nested or name in sem.classes or name in getattr(sem.walk, "local_imports", ())


def _partial(value: ast.expr, resolver: Resolver) -> bool:
    return isinstance(value, ast.Call) and resolver.qualname(value.func) == _PARTIAL


def lambda_switch(lam: ast.Lambda | ast.Call, resolver: Resolver) -> LoopSwitch | None:
    """The switch the lambda (or partial) makes on each module `apply` hands it, or None."""
    if isinstance(lam, ast.Call):
        return _partial_switch(lam, resolver)
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


def _partial_switch(call: ast.Call, resolver: Resolver) -> LoopSwitch | None:
    """`partial(nn.Module.eval)`, `partial(nn.Module.train, mode=False)`: `Module.train(mod,
    mode=False)` for each module handed in. A positional argument would bind `mode`'s place
    after the module's: only the keyword is read."""
    if len(call.args) != 1 or isinstance(call.args[0], ast.Starred):
        return None
    method = resolver.qualname(call.args[0]) or ""
    if method not in MODULE_SWITCHES:
        return None
    attr = method.rpartition(".")[2]
    if attr == "eval":
        return LoopSwitch(call, "eval", None) if not call.keywords else None
    if not call.keywords:
        return LoopSwitch(call, "train", None)
    if len(call.keywords) != 1 or call.keywords[0].arg != "mode":
        return None
    flag = call.keywords[0].value
    mode = (
        ("train" if flag.value else "eval") if isinstance(flag, ast.Constant) and isinstance(flag.value, bool) else None
    )
    return LoopSwitch(call, mode, None)


def _inert(expr: ast.expr, name: str) -> bool:
    """The arm that does nothing: `None`, or the module handed in."""
    return (isinstance(expr, ast.Constant) and expr.value is None) or (isinstance(expr, ast.Name) and expr.id == name)


__all__ = ["MODULE_SWITCHES", "applied_lambda", "lambda_switch"]

"""Named functions handed to a higher-order helper that calls them only on the module it is
given, or its submodules (`callback_relays`): `relay(model, capture)` is a call of `capture`
with `model`, in `model`'s mode.

`def capture(m): ...` (module-level, nested, or imported from another module of the project)
then has a caller like any other: the call is recorded as a call site of `capture` whose
reference is the name passed (`CallSite.via`), so that its callers are read where they are
(`caller_facts`, `call_sites`, `project_callers`) and the name is no unread use of it. The
other arguments the helper hands the callback are its own: the site is open-ended (no
default can be assumed) and passes models qlint does not know at those positions. What the
function does to the model (a mode it sets, what it returns) is not kept: the helper may
call it any number of times, or never. A bound method (`relay(model, self.capture)`) is not
followed.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.callback_relays import Relay
from qlint.analysis.flow.dead_branches import contradicted_at_call
from qlint.analysis.flow.model_values import UNKNOWN_MODE, CallSite, Env, Obj


def may_name_function(sem, arg: ast.expr) -> bool:
    """`arg` may name a function the flow can summarise (a cheap test on names alone, made for
    every argument of every call read): a function of the walked function, a module-level
    name that is no local, or an attribute of an imported name. `sem` is the walk's
    `CallSemantics`."""
    while isinstance(arg, ast.Attribute):
        arg = arg.value
        if isinstance(arg, ast.Name):
            return arg.id in sem.owner.scope.imports and arg.id not in sem.resolver.local
    if not isinstance(arg, ast.Name):
        return False
    name = arg.id
    if name in sem.nested:
        return True
    if name in sem.resolver.local:
        return False
    scope = sem.owner.scope
    return name in scope.functions or name in scope.imports


def relay_named(sem, node: ast.Call, ref: ast.expr, given: list[tuple[Relay, Obj | None, ast.expr | None]], env: Env):
    """Record the call of the function `ref` names that the relay helper called at `node`
    makes: `given` holds, for each relay of that callback, the model passed and its expression."""
    summary = sem.helper(ref)
    if summary is None or summary[1]:
        return  # not a function the flow summarises, or a method bound to `self`
    callee = summary[0]
    models = {relay.position: (obj, expr) for relay, obj, expr in given if relay.position < len(callee.params)}
    passed = {i: UNKNOWN_MODE for i in range(len(callee.params))}
    passed.update({i: env.facts(obj) if obj is not None else UNKNOWN_MODE for i, (obj, _) in models.items()})
    written = {i: expr for i, (_, expr) in models.items() if expr is not None}
    site = CallSite(callee.node, node, passed, written, via=ref)
    if callee.path == sem.flow.path:
        sem.flow.calls.append(site)
    else:
        sem.flow.foreign_calls.append((callee.path, site))
    # What the function prepares of its parameter, the model handed in reaches.
    for index, sinks in callee.param_sinks.items():
        obj = models.get(index, (None, None))[0]
        for sink in sinks if obj is not None else ():
            if not contradicted_at_call(sink.guard, callee.node, written, sem.resolver, callee.resolver, True):
                sem.reach(obj, sink)


__all__ = ["may_name_function", "relay_named"]

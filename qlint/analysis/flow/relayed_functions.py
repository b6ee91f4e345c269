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
call it any number of times, or never.

A bound method is handed over the same way (`relay(model, self.capture)` in a method of its
class, `relay(model, runner.capture)` with `runner` built from a class of this module): the
relay calls it with the model after the instance, which fills its `self` (the site passes the
instance's modes there, as a written call `self.capture(model)` would).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.callback_relays import Relay
from qlint.analysis.flow.dead_branches import contradicted_at_call
from qlint.analysis.flow.function_flows import CallSite
from qlint.analysis.flow.instance_methods import method_summary
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import UNKNOWN_MODE, ModeFact, Obj

_SELF = ("self", "cls")


def may_name_function(sem, arg: ast.expr) -> bool:
    """`arg` may name a function the flow can summarise (a cheap test on names alone, made for
    every argument of every call read): a function of the walked function, a module-level
    name that is no local, or an attribute of an imported name. `sem` is the walk's
    `CallSemantics`."""
    if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
        if arg.value.id in _SELF and sem.class_scope is not None:
            return True  # `self.capture`: a method of the class, if `callee` finds it
        if arg.value.id in sem.resolver.local:
            return True  # `runner.capture`: a method of the instance, if its class is known
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
    summary, receiver = _summary(sem, ref, env)
    if summary is None:
        return  # not a function (or method of a known instance) the flow summarises
    callee, offset = summary
    # The relay's positional argument `p` fills parameter `p + offset`: a bound method's
    # instance takes the first.
    models = {
        relay.position + offset: (obj, expr)
        for relay, obj, expr in given
        if relay.position + offset < len(callee.params)
    }
    passed = {i: UNKNOWN_MODE for i in range(len(callee.params))}
    passed.update({i: env.facts(obj) if obj is not None else UNKNOWN_MODE for i, (obj, _) in models.items()})
    # A relay that evals the module first hands it over in eval mode, whatever this call passed.
    evaled = {relay.position + offset for relay, _, _ in given if relay.evaled}
    passed.update({i: frozenset({ModeFact("eval", node)}) for i in evaled if i in passed})
    written = {i: expr for i, (_, expr) in models.items() if expr is not None}
    if offset and callee.params:
        passed[0] = env.facts(receiver) if receiver is not None else UNKNOWN_MODE
        written[0] = ref.value
    site = CallSite(callee.node, node, passed, written, via=ref)
    if callee.path == sem.flow.path:
        sem.flow.calls.append(site)
    else:
        sem.flow.foreign_calls.append((callee.path, site))
    # What the function prepares of its parameter, the model handed in reaches.
    for index, sinks in callee.param_sinks.items():
        obj = models.get(index, (None, None))[0] if index not in evaled else None
        for sink in sinks if obj is not None else ():
            if not contradicted_at_call(sink.guard, callee.node, written, sem.resolver, callee.resolver, True):
                sem.reach(obj, sink)


def _summary(sem, ref: ast.expr, env: Env) -> tuple[tuple | None, Obj | None]:
    """The summary of what `ref` names, with 1 when an instance fills `self`, and that instance
    (`runner` of `runner.capture`) when the walk knows it."""
    value = ref.value if isinstance(ref, ast.Attribute) else None
    summary = sem.helper(ref)
    if summary is not None:
        return summary, env.vars.get(value.id) if summary[1] and isinstance(value, ast.Name) else None
    if not isinstance(value, ast.Name) or value.id not in sem.resolver.local:
        return None, None
    receiver = env.vars.get(value.id)
    if receiver is None:
        return None, None
    return method_summary(sem, ref.attr, receiver), receiver


__all__ = ["may_name_function", "relay_named"]

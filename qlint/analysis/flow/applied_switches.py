"""`m.apply(fn)` with `fn` a function that switches the modules `Module.apply` hands it: a
lambda (`applied_lambdas`) or a named function (`looped_switches.applied_function`), of this
module or another one, recorded as the switch of those modules of `m` (`loop_effects`).

Asked by `model_calls.CallSemantics` (`sem`), which is not imported here.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow import helper_callees
from qlint.analysis.flow.applied_lambdas import applied_lambda, lambda_switch
from qlint.analysis.flow.loop_effects import modules_switched
from qlint.analysis.flow.looped_switches import applied_function
from qlint.analysis.flow.model_env import Env
from qlint.analysis.names.resolver import Resolver


def applied_switch(sem, node: ast.Call, env: Env) -> bool:
    """`m.apply(fn)` with `fn` a function (or a lambda, `applied_lambdas`) that switches the
    modules it is handed: recorded."""
    if len(node.args) != 1 or node.keywords:
        return False
    applied = applied_lambda(sem, node.args[0])
    if applied is not None:  # `m.apply(lambda mod: mod.eval())`: its classes are read where it is written
        lam, resolver = applied
        switch = lambda_switch(lam, resolver)
        # Named by its switch when written in the call (as a loop's is): the call can be long.
        anchor = switch.switch if switch is not None and lam is node.args[0] else node
        qualname = sem.walk.qualname if resolver is sem.resolver else resolver.qualname
        return switch is not None and modules_switched(sem, node.func.value, "all", switch, anchor, env, qualname, node)
    found = helper_callees.callee(sem, node.args[0])
    switch = applied_function(found[1]) if found is not None and not found[3] else None
    if switch is None:
        return False
    home = found[0]
    qualname = sem.walk.qualname if home is sem.owner else Resolver(home.scope, home.project, home.optable).qualname
    return modules_switched(sem, node.func.value, "all", switch, node, env, qualname, node)


__all__ = ["applied_switch"]

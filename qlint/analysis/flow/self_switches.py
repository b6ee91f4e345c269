"""A helper handed a method's own `self` that switches a field of what it is given (issue 14,
item 2): `set_train(self)` with `def set_train(e): e.model.train()` switches `self.model` at
the call, as `self.model.train()` written there would (`handed_self` says which other
methods' calls may change a field; this is the walk of the method making the call).

The helper's switches of `<param>.<attr>` are its `FunctionFlow.part_switches`, on every path
of its own or in a branch of its own: one in a branch the call's arguments rule out is none,
one in a branch they leave open joins the modes the field had. An exported graph held there
refuses the switch (`handed_switches.handed_part_switches` reports it, QL203).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.dead_branches import contradicted_at_call, open_ended
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import PARAM, ModeFact
from qlint.analysis.flow.self_attributes import first_read


def switch_own_fields(sem, node: ast.Call, callee, actual: dict, env: Env) -> None:
    """At a call handing this method's `self` to a helper that switches `<param>.<attr>`
    (`callee.part_switches`): `self.<attr>` is switched here too. A switch in a branch of the
    helper's that the call's arguments do not rule out joins the modes the field had."""
    walk = sem.walk
    if walk.class_scope is None:
        return
    written = {i: expr for i, (_, expr) in actual.items()}
    foreign = callee.path != sem.flow.path
    for (index, attr), switch in callee.part_switches.items():
        obj, expr = actual.get(index, (None, None))
        if not (isinstance(expr, ast.Name) and expr.id == "self") or obj is None or not _own_self(obj, walk.func):
            continue
        if switch.guard and contradicted_at_call(
            switch.guard, callee.node, written, sem.resolver, callee.resolver, open_ended(node)
        ):
            continue
        name = f"self.{attr}"
        field = env.vars.get(name)
        if field is None:
            field = first_read(walk, name, env)
        if field.is_graph:
            continue  # an exported graph refuses the switch (`handed_part_switches`, QL203)
        fact = ModeFact(switch.mode or "unknown", node if foreign else switch.call)
        env.modes[field] = env.facts(field) | {fact} if switch.guard else frozenset({fact})
        walk.containers.switched(field)


def _own_self(obj, func: ast.AST) -> bool:
    return len(obj.origins) == 1 and all(o.kind == PARAM and o.node is func and o.name == "self" for o in obj.origins)


__all__ = ["switch_own_fields"]

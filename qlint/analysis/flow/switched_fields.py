"""`Wrapper(model).prepare()` where `prepare` runs `self.model.eval()`: the call leaves the
model the construction handed over in the mode the method leaves its field in.

A class whose `__init__` stores a parameter as it came (`self.model = model`), or a dataclass
field, holds the caller's object in that attribute (`stored_fields`); a method that switches
the attribute (`FunctionFlow.field_switches`) switches the caller's object. What the method
leaves the field in is read at each of its ends: a path that switched it leaves that mode, a
path that did not leaves the mode it came in with (the caller's). Followed only where the
class guarantees the field is still that object: no method reassigns it, binds a name to it
or hands `self` on whole (a mode switch is no change of what it holds); a method that
switches the field only on some paths, or under a flag, leaves the caller's mode on the
others.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import CONSTRUCTED, CONTAINER, Obj
from qlint.analysis.flow.stored_fields import passed_for
from qlint.value_classes import replace

_MODES = ("eval", "train")


def switch_fields(sem, node: ast.Call, callee: FunctionFlow, receiver: Obj, env: Env) -> None:
    """At `receiver.method(...)` of a method that switches fields of `self` (`callee`): the
    object a construction of `receiver`'s class passed for each such field takes the modes
    the method leaves the field in. `sem` is the walk's `CallSemantics`."""
    if len(receiver.origins) != 1 or not callee.returns:
        return
    (origin,) = receiver.origins
    built = origin.built
    if origin.kind != CONSTRUCTED or not origin.passed or built is None or built.cls is None:
        return
    specs = sem.owner.stored_fields(built.cls, held=True)
    foreign = callee.path != sem.flow.path
    for name in callee.field_switches:
        spec = specs.get(name)
        obj = passed_for(spec, *origin.passed) if spec is not None else None
        if obj is None or CONTAINER in obj.kinds or (receiver, name) in sem.builds.overwritten:
            continue
        came = env.facts(obj)
        left: set = set()
        switched = False
        for end, _ in callee.returns:
            field = end.vars.get(f"self.{name}")
            for fact in end.facts(field) if field is not None else ():
                if fact.state in _MODES:
                    left.add(replace(fact, guard=frozenset(), node=node if foreign else fact.node))
                    switched = True
                else:
                    left |= came
            if field is None:
                left |= came
        if switched:
            env.modes[obj] = frozenset(left)
            sem.walk.containers.switched(obj)


__all__ = ["switch_fields"]

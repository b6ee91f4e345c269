"""What a bundle handed to a helper holds at that call (issue 14, item 7).

`quantize_run(PipelineArtifact(data={"forward": Net().eval()}))` hands the helper a model
inside a construction: the helper reads it as a part of its parameter (`artifact.data`,
`artifact.model`). What the construction was given (`Origin.passed`) are objects of the
caller's walk, whose modes are gone when the caller is judged. A call of a helper that
captures a part of its parameter therefore records beside its arguments' modes
(`CallSite.held`), for a construction of a class that stores what it is given unchanged
(`stored_fields`), the modes of each stored attribute at the call (`Origin.fields`), and for
a dict, list, tuple or set written in the construction the modes of what it holds at the
call (`Origin.items`): a model switched between the construction and the call is seen in the
mode it has when it reaches the helper. A literal inside such a container, or a spread, is
not followed (unknown).
"""

from __future__ import annotations

from collections.abc import Callable

from qlint.analysis.flow.loop_items import UNREAD
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import CONSTRUCTED, CONTAINER, UNKNOWN_MODE, ModeFact, Obj
from qlint.analysis.flow.stored_fields import passed_for
from qlint.value_classes import replace

_MAX_DEPTH = 4  # a bundle in a bundle in a list ...: deeper ones stay as recorded


def held_facts(
    obj: Obj,
    env: Env,
    fields_of: Callable[[object], dict],
    literals: dict[int, list],
    overwritten: set,
    depth: int = 0,
) -> frozenset[ModeFact]:
    """`env.facts(obj)`, with what `obj` stores when it is a construction of a class that stores
    what it is given, and what it holds when it is a container written in a construction, as
    they are now (`env.facts(obj)` itself when neither). `fields_of(cls)` is the
    class's stored attributes, `literals` the elements of the literals the walk read
    (`loop_items`), `overwritten` the (holder, attribute) pairs the walk saw assigned
    (`bundle.data = ...`)."""
    facts = env.facts(obj)
    if depth >= _MAX_DEPTH or len(obj.origins) != 1:
        return facts
    (origin,) = obj.origins
    if origin.kind == CONSTRUCTED and origin.built is not None and origin.built.cls is not None:
        if not gave_objects(origin.passed):
            return facts
        fields = []
        for attr, where in fields_of(origin.built.cls).items():
            held = passed_for(where, *origin.passed) if (obj, attr) not in overwritten else None
            now = held_facts(held, env, fields_of, literals, overwritten, depth + 1) if held is not None else None
            fields.append((attr, now if now is not None else UNKNOWN_MODE))
        # On every fact, the construction's origin with what it stores (a wrapper module's facts
        # are the wrapped modules', whose origins say nothing of the wrapper's attributes).
        bundle = replace(origin, fields=tuple(fields))
        return frozenset(ModeFact(f.state, f.node, bundle, f.guard) for f in facts)
    if origin.kind == CONTAINER and id(origin.node) in literals:
        items: set[ModeFact] = set()
        for element in literals[id(origin.node)]:
            if element is None:
                continue  # a constant
            if element is UNREAD or isinstance(element, tuple):
                items |= UNKNOWN_MODE  # a spread, or a literal inside it: not followed
            else:
                items |= held_facts(element, env, fields_of, literals, overwritten, depth + 1)
        made = frozenset(items)
        return frozenset(replace(f, origin=replace(f.origin, items=made)) if f.origin is origin else f for f in facts)
    return facts


def gave_objects(passed: tuple) -> bool:
    """A construction was given some object the walk follows (most are given none: `Net()`,
    `nn.Linear(4, 4)`), so that its class is worth reading for the attributes it stores."""
    if not passed:
        return False
    args, kwargs = passed
    return any(a is not None for a in args) or any(v is not None for _, v in kwargs)


__all__ = ["gave_objects", "held_facts"]

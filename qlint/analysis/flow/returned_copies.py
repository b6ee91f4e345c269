"""Copies a helper hands back, in its caller's terms (QL203).

`copy.deepcopy(gm)` / `copy.copy(gm)` of an exported graph switches modes without raising
(torch 2.13: `GraphModule.__deepcopy__`/`__copy__` rebuild the module, and the raising
override lived in the old instance's `__dict__`). Inside the helper that fact is
`Env.copied` / `Env.partly_copied` on the returned value; the caller's value is a new object
(`helper_calls.apply`'s `translate`), so the fact is carried over here, per path: an element
of `return copy.deepcopy(gm), info` read back as `a, b = f()`, `out = f(); out[0]` or
`f()[0]`, and a returned value a copy on some paths only. An origin some path hands back
uncopied still raises there, so it is no copy's. The value's origins stay whole for QL204 and
the other readers.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet

from qlint.analysis.flow import decorator_registries as registries
from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import PARAM, Obj, Origin, anchored
from qlint.value_classes import replace

_NONE: frozenset[Origin] = frozenset()


def through_copies(
    value: Obj, end: Env, obj: Obj, params, here: Callable, ruled: frozenset[Origin] = _NONE
) -> frozenset[Origin]:
    """The origins of `obj` (what the helper's `value` at its end `end` is to the caller) it
    holds there only through copies the helper made; `params`: the helper's parameters' own
    values (handed back as the caller's argument, which keeps the caller's facts); `here`:
    one origin of the helper's in the caller's terms (`translate`'s); `ruled`: the helper's
    graphs `value` holds uncopied only on branches the call rules out (`arm_graphs.ruled_out`:
    `m if is_qat else copy.deepcopy(m)` called with `is_qat=False`), which it does not hand
    back uncopied here."""
    if not end.copied and not end.partly_copied and not ruled:
        return _NONE  # most ends: no copy made on the path
    if value in end.copied:
        return _NONE if value in params else obj.origins
    if value in params:  # `if is_qat: return model`, called with `is_qat=False`: not handed back
        return obj.origins if ruled and not ruled.isdisjoint(value.origins) else _NONE
    part = end.partly_copied.get(value, _NONE) | ruled if ruled else end.partly_copied.get(value)
    if not part:
        return _NONE
    copied: set[Origin] = set()
    kept: set[Origin] = set()
    for o in value.origins:
        (copied if o in part else kept).update(here(o, end))
    # Two of the helper's origins may be one here (`f(gm, gm)`): uncopied through either, it raises.
    return frozenset(obj.origins & copied - kept)


def in_caller(
    sem, node, callee: FunctionFlow, given, foreign, passed_here, o: Origin, ret_env: Env
) -> AbstractSet[Origin]:
    """Where the helper's origin `o` came from, as its caller at `node` sees it (`apply`'s `translate`'s
    answer for one origin; apart from its loop, which runs for every value a helper hands back),
    for the copies it hands back; `passed_here`: `apply`'s, what a construction was given."""
    if o.kind == PARAM and o.node is callee.node and o.index in given:
        return given[o.index].origins
    if o.kind in registries.KINDS:
        return registries.rekeyed(o, callee.node, given, sem.walk.func, node)
    found = anchored(o, node, callee.path) if foreign else o
    return (replace(found, passed=passed_here(o.passed, ret_env)) if o.passed else found,)


def carry(obj: Obj, paths: list[tuple[Obj, frozenset[Origin]]], env: Env) -> None:
    """Record in `env` what `obj` holds only through copies: `paths` are, for each end of the
    helper, the value it hands back there in the caller's terms and `through_copies`' answer
    for it; a value the caller knows as a copy already (an argument handed back) counts so."""
    copied: set[Origin] = set()
    kept: set[Origin] = set()
    for value, through in paths:
        if value in env.copied:
            through = value.origins
        elif env.partly_copied and value in env.partly_copied:
            through = through | env.partly_copied[value]
        copied |= through
        kept |= value.origins - through
    through = frozenset(copied - kept)
    if through and through >= obj.origins:
        env.copied |= {obj}
    elif through:
        env.partly_copied = {**env.partly_copied, obj: through}


__all__ = ["carry", "in_caller", "through_copies"]

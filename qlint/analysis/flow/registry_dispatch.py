"""`HANDLERS[kind](q).quantize(m)`: a method called on a value that is one of several
classes' instances, each known (issue 14).

Projects pick the class that handles a model from a registry written as data: a dict of
classes keyed on a name or a config class (`HANDLERS[kind](q)`, `HANDLERS.get(kind)` then a
call of what it returned), a list of stage instances run in turn (`for stage in stages:
stage.run(artifact)`). The walk knows such a value as one whose every origin is a
construction of a class it resolves (`model_factories` reads the registry literal; a loop
item merges the list's constructions). Its method call is a call of each class's method: the
arguments passed there reach every one of them, which is what a method that captures its
parameter asks of its callers (`project_callers`, `caller_verdicts`).

Read only when every class is one whose method the walk summarises (this module's, or that of
the module whose callers are read): a class it cannot read may do anything with the model,
so the call is then left as it was (an unknown method, whose callers stay unknown). What the
call leaves behind is each target's effect on its own copy of the environment, joined as
branches are: a model one target sets to eval and another leaves as it came is in either mode
after the call, never in eval for sure.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.instance_methods import method_summary
from qlint.analysis.flow.model_values import CONSTRUCTED, Env, FunctionFlow, Obj, join

_MAX_TARGETS = 8  # classes of one registry followed at a call; past this the call is not read
_RESULT = "\0dispatched"  # where each target's result waits for the join (no name can be it)


def dispatch_targets(sem, attr: str, receiver: Obj) -> list[tuple[FunctionFlow, int]] | None:
    """The summaries of the method `receiver.<attr>(...)` runs, one per class the receiver may
    be an instance of, or None when one of them is not a construction of a class whose method
    the walk reads."""
    origins = receiver.origins
    if len(origins) < 2 or len(origins) > _MAX_TARGETS:
        return None
    if any(o.kind != CONSTRUCTED or getattr(o.built, "cls", None) is None for o in origins):
        return None  # asked of every method call on a merged value: the summaries only past this
    found: dict[int, tuple[FunctionFlow, int]] = {}
    for origin in sorted(origins, key=_position):
        summary = method_summary(sem, attr, Obj(receiver.anchor, receiver.key, frozenset({origin})))
        if summary is None:
            return None
        found.setdefault(id(summary[0].node), summary)  # two entries of one class: one target
    return list(found.values())


def apply_each(sem, node: ast.Call, targets, receiver: Obj, args, kwargs, env: Env) -> Obj | None:
    """The call read as a call of each target on its own copy of `env`, the copies joined
    into `env` (a branch per target); the result is any of the targets' results."""
    branches = []
    for callee, offset in targets:
        branch = env.copy()
        result = sem.apply(node, callee, offset, receiver, args, kwargs, branch)
        if result is not None:
            branch.vars[_RESULT] = result
        branches.append(branch)
    joined = join(branches, node)
    result = joined.vars.pop(_RESULT, None)
    if result is not None and not all(_RESULT in b.vars for b in branches):
        result = None  # a target returned nothing the walk follows: neither is the call's result
    env.vars, env.modes, env.patched, env.copied = joined.vars, joined.modes, joined.patched, joined.copied
    return result


def _position(origin) -> tuple[int, int]:
    # Origins are a set: the classes are read in the order they are written, whatever the hash.
    node = origin.node
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


__all__ = ["apply_each", "dispatch_targets"]

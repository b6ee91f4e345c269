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

from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.instance_methods import method_summary
from qlint.analysis.flow.model_env import Env, join
from qlint.analysis.flow.model_values import CONSTRUCTED, Obj
from qlint.value_classes import replace

_MAX_TARGETS = 8  # classes of one registry followed at a call; past this the call is not read
_RESULT = "\0dispatched"  # where each target's result waits for the join (no name can be it)


def dispatch_targets(sem, attr: str, receiver: Obj) -> list[tuple[FunctionFlow, int, tuple]] | None:
    """The summaries of the method `receiver.<attr>(...)` runs, one per class the receiver may
    be an instance of (with the receiver's origins that run it), or None when one of them is
    not a construction of a class whose method the walk reads."""
    origins = receiver.origins
    if len(origins) < 2 or len(origins) > _MAX_TARGETS:
        return None
    if any(o.kind != CONSTRUCTED or getattr(o.built, "cls", None) is None for o in origins):
        return None  # asked of every method call on a merged value: the summaries only past this
    found: dict[int, tuple[FunctionFlow, int, tuple]] = {}
    for origin in sorted(origins, key=_position):
        summary = method_summary(sem, attr, Obj(receiver.anchor, receiver.key, frozenset({origin})))
        if summary is None:
            return None
        known = found.get(id(summary[0].node))
        # Two classes running one method (a base's): one target, unless classes must be told apart.
        found[id(summary[0].node)] = (*summary, (*known[2], origin) if known else (origin,))
    return list(found.values())


def apply_each(sem, node: ast.Call, targets, receiver: Obj, args, kwargs, env: Env) -> Obj | None:
    """The call read as a call of each target on its own copy of `env`, the copies joined
    into `env` (a branch per target); the result is any of the targets' results.

    Which class ran is one choice for the receiver: a value an earlier call on it returned
    (`q = s.quantize(m)`) is, in the branch of one class, what that class's method returned
    (`s.calibrate(q)`), not what another's did. Such an argument, one the walk knows only
    as "any of those results", is narrowed in each class's branch to that class's own; a
    switch it then reaches is one on some of the classes' paths (`HandedSwitch.maybe`)."""
    produced = sem.dispatched.setdefault(receiver.origins, {})
    mixed = _mixed_results(produced, node, args, kwargs)
    runs = [(c, o, (cls,)) for c, o, owners in targets for cls in owners] if mixed else targets
    before = id(node) in sem.walk.flow.handed
    branches, returned = [], []
    for callee, offset, owners in runs:
        branch = env.copy()
        given, named = (_narrowed(produced, owners[0], args, kwargs, mixed, branch)) if mixed else (args, kwargs)
        result = sem.apply(node, callee, offset, receiver, given, named, branch)
        if result is not None:
            branch.vars[_RESULT] = result
            returned.append((owners, result.origins))
        branches.append(branch)
    # A call whose every class returns the same (`prepare_model` handing back the model it was
    # given) tells the classes apart no better than nothing: its result is not one to narrow by.
    if len({r for _, r in returned}) > 1:
        for owners, origins in returned:
            for origin in origins:
                produced.setdefault(origin, set()).update(owners)
    found = sem.walk.flow.handed.get(id(node)) if mixed and not before else None
    if found is not None and any(found.argument is expr for expr in mixed.values()):
        sem.walk.flow.handed[id(node)] = replace(found, maybe=True)
    joined = join(branches, node)
    result = joined.vars.pop(_RESULT, None)
    if result is not None and not all(_RESULT in b.vars for b in branches):
        result = None  # a target returned nothing the walk follows: neither is the call's result
    env.vars, env.modes, env.patched, env.copied = joined.vars, joined.modes, joined.patched, joined.copied
    env.partly_copied = joined.partly_copied
    return result


def _mixed_results(produced: dict, node: ast.Call, args, kwargs) -> dict:
    """Position (or keyword) -> expression of the arguments that are, on every path, one of
    the results earlier calls on the receiver returned, from more than one class, and are no
    exported graph on every path (one that is, is one whichever class ran)."""
    out = {}
    written = {i: a for i, a in enumerate(node.args)}
    written.update({kw.arg: kw.value for kw in node.keywords if kw.arg})
    for at, obj in [*enumerate(args), *kwargs.items()]:
        if obj is None or obj.is_graph or not obj.origins or isinstance(written.get(at), ast.Starred):
            continue
        if all(o in produced for o in obj.origins) and len(set().union(*(produced[o] for o in obj.origins))) > 1:
            out[at] = written.get(at)
    return out


def _narrowed(produced: dict, owner, args, kwargs, mixed: dict, env: Env):
    """`args`, `kwargs` with each argument of `mixed` cut to what `owner`'s class returned
    (left whole when that class returned none of it)."""
    args, kwargs = list(args), dict(kwargs)
    for at in mixed:
        obj = args[at] if isinstance(at, int) else kwargs[at]
        kept = frozenset(o for o in obj.origins if owner in produced[o])
        if not kept or kept == obj.origins:
            continue
        cut = Obj(obj.anchor, obj.key, kept, obj.captures)
        env.modes[cut] = env.modes.get(obj, frozenset())
        if obj in env.patched:
            env.patched = env.patched | {cut}
        if obj in env.copied:
            env.copied = env.copied | {cut}
        elif copies := env.partly_copied.get(obj, frozenset()) & kept:  # the class's values hold copies
            if copies == kept:
                env.copied = env.copied | {cut}
            else:
                env.partly_copied = {**env.partly_copied, cut: copies}
        if isinstance(at, int):
            args[at] = cut
        else:
            kwargs[at] = cut
    return args, kwargs


def _position(origin) -> tuple[int, int]:
    # Origins are a set: the classes are read in the order they are written, whatever the hash.
    node = origin.node
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


__all__ = ["apply_each", "dispatch_targets"]

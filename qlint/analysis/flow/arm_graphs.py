"""The branches a value holds an exported graph under, when the arms of a test chose it (QL203).

ao's `_test_quantizer` keeps `export_model = m if is_qat else copy.deepcopy(m)` and returns it;
a caller passing `is_qat=False` (or leaving that default) gets the copy, whose `eval()` raises
nothing on torch 2.13. The merged value's origins say only that it holds the graph, and
`maybe_graphs.made_graphs` says where the graph was made, not which arm picked it: so the arm's
condition is kept here, per merged value and graph origin (`Env.copied` and `partly_copied`
stay as they were). `maybe_graphs.graph_paths` adds it to the branches the graph was made
under; a helper's return hands those on (`FunctionFlow.return_graphs`, and for a copying helper
`return_item_graphs`), and a call whose arguments rule out every branch a graph is held under
uncopied gets it back through the copy alone (`ruled_out`, read by `returned_copies`), or not
at all, as `prepare(m, False, q)` rules out a graph made under `if qat:` (`returned_paths`).
The same for `if is_qat: e = m` / `else: e = copy.deepcopy(m)`.

Two more shapes hand the choice to the caller's caller. A helper may copy the graph it is
given on one arm (`if not is_qat: model = copy.deepcopy(model)`, then `return model`): its
parameter is noted here like a graph made in the body, and a return hands back the parameter
under its arms' and branches' conditions (`param_paths`, kept in `return_graphs` beside the
graphs). And a helper may forward its flag (`def g(m, is_qat): return f(m, is_qat)`): the
paths `f`'s return hands back become conditions on `g`'s own parameter (`forwarded`), so the
call `g(m, False)` rules them out as it would `f(m, False)`, through as many helpers as the
helper resolution follows. A forwarding that changes the flag (`f(m, not is_qat)`, a flag
rebound first) leaves the condition out: the graph is then taken as handed back. A flag
handed on in `**kwargs` becomes a condition on its key (`forwarded_kwargs`), and a tuple
handed back whole keeps its elements' conditions (`forwarded_items`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.dead_branches import open_ended
from qlint.analysis.flow.forwarded_kwargs import contradicted_at
from qlint.analysis.flow.maybe_graphs import in_caller_terms, on_self
from qlint.analysis.flow.model_env import Env, uncopied
from qlint.analysis.flow.model_values import GRAPH_KINDS, PARAM, Obj, Origin, compatible

_ALWAYS = (frozenset(),)


def note_arms(held: dict, made: dict, merged: Obj | None, arms: list[tuple[Obj | None, Env | None, frozenset]]) -> None:
    """`merged` (one value for what the `arms`, each (value, its path's end, the conditions the
    arm ran under), chose) holds each graph origin under the conditions of the arms holding it
    uncopied; `held` keeps that per value, `made` is the walk's `made_graphs`. A parameter
    counts where an arm copies it (`if not is_qat: model = copy.deepcopy(model)`): the caller
    may hand a graph there."""
    if merged is None:
        return
    if not any(o in made for o in merged.origins) and not _copied_param(merged, arms):
        return  # no graph made here, nor a parameter copied on an arm (most values)
    per: dict[Origin, set[frozenset]] = {}
    for value, env, guard in arms:
        if value is None or env is None or value in env.copied:
            continue
        within = held.get(value)
        for o in uncopied(value, env):
            if o.kind in GRAPH_KINDS or o.kind == PARAM:
                inner = within.get(o, _ALWAYS) if within else _ALWAYS
                per.setdefault(o, set()).update(g | guard for g in inner)
    if any(frozenset() not in guards for guards in per.values()):
        held[merged] = {o: frozenset(guards) for o, guards in per.items()}


def _copied_param(merged: Obj, arms: list) -> bool:
    """`merged` holds a parameter and an arm's value is a copy (`model = copy.deepcopy(model)`)."""
    return any(o.kind == PARAM for o in merged.origins) and any(
        v is not None and e is not None and (v in e.copied or v in e.partly_copied) for v, e, _ in arms
    )


def arm_names(held: dict, made: dict, joined: Env | None, outs: list, guards: list[frozenset], anchor: ast.AST):
    """After `if c:` / `else:`: the names the arms bound to different values (merged at `anchor`
    by `join`)."""
    if joined is None or any(out is None for out in outs):
        return
    for name, obj in joined.vars.items():
        if obj.anchor is anchor:
            note_arms(held, made, obj, [(out.vars.get(name), out, g) for out, g in zip(outs, guards, strict=True)])


def ruled_out(paths: frozenset | None, callee, node: ast.Call, written: dict, caller) -> frozenset[Origin]:
    """The graph origins (the callee's) whose every path in `paths` (`GraphPath`s a return hands
    back uncopied) the call's arguments rule out."""
    if not paths or all(not g for _, g in paths):
        return frozenset()
    ended = open_ended(node)
    live = {o for o, g in paths if not contradicted_at(g, callee.node, written, caller, callee.resolver, ended, node)}
    return frozenset(o for o, _ in paths if o not in live)


def param_paths(obj: Obj | None, env: Env, held: dict, guards) -> frozenset:
    """The parameters (origins) a return hands back uncopied, each with the conditions it is
    handed back under (the return's branches `guards`, and the arms that chose it, `held`):
    for a copying helper's callers, whose arguments may rule them all out (`ruled_out`). None
    where nothing conditions them: such a return hands the parameter back at every call."""
    arms = held.get(obj) if held and obj is not None else None
    if obj is None or not (arms or guards) or obj in env.patched or obj in env.copied:
        return frozenset()
    here = frozenset(guards)
    params = [o for o in uncopied(obj, env) if o.kind == PARAM]
    return frozenset((o, a | here) for o in params for a in (arms.get(o, _ALWAYS) if arms else _ALWAYS))


def forwarded(sem, node: ast.Call, callee, written: dict, given: dict, result: Obj, paths: frozenset) -> None:
    """`return f(m, is_qat)` in a copying helper's caller `g`: what `f` hands back under
    conditions on its flag (`paths`, `returned_paths` in `g`'s terms, for the graphs it makes;
    `param_paths` for the parameters, here the arguments of this call) holds under those
    conditions on `g`'s names, so `g`'s own callers read them too (`FunctionFlow.copies`)."""
    if any(g for _, g in paths):
        sem.flow.copies = True
    if result in given.values():
        return  # the caller's own argument, which stays what it was
    per: dict[Origin, set[frozenset]] = {}
    ended, same_self, here = open_ended(node), on_self(node), frozenset(sem.walk.guards)
    for index, (end, value) in enumerate(callee.returns):
        if value is None or value in end.copied:
            continue
        kept = callee.return_graphs.get(index, ())
        for o in uncopied(value, end):
            if o.kind != PARAM or o.node is not callee.node or o.index not in given:
                continue
            for g in [g for p, g in kept if p == o] or _ALWAYS:
                if g and contradicted_at(g, callee.node, written, sem.resolver, callee.resolver, ended, node):
                    continue
                mine = in_caller_terms(g, callee.node, written, same_self, node, sem.walk.func, callee.resolver) | here
                for origin in given[o.index].origins:
                    per.setdefault(origin, set()).add(mine)
    if any(frozenset() not in guards for guards in per.values()):
        sem.held_graphs[result] = {o: frozenset(guards) for o, guards in per.items()}
        sem.flow.copies = True


def unreached(arms: dict[Origin, frozenset], guards) -> frozenset[Origin]:
    """The graph origins a value holds (uncopied) only on arms whose conditions contradict the
    branches a switch lies in (`e = m if is_qat else copy.deepcopy(m)`, then `if not is_qat:
    e.eval()` meets the copy)."""
    here = frozenset(guards)
    return frozenset(o for o, paths in arms.items() if not any(compatible(g, here) for g in paths))


__all__ = ["arm_names", "forwarded", "note_arms", "param_paths", "ruled_out", "unreached"]

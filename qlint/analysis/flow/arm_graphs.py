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
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.dead_branches import contradicted_at_call, open_ended
from qlint.analysis.flow.model_env import Env, uncopied
from qlint.analysis.flow.model_values import GRAPH_KINDS, Obj, Origin, compatible

_ALWAYS = (frozenset(),)


def note_arms(held: dict, made: dict, merged: Obj | None, arms: list[tuple[Obj | None, Env | None, frozenset]]) -> None:
    """`merged` (one value for what the `arms`, each (value, its path's end, the conditions the
    arm ran under), chose) holds each graph origin under the conditions of the arms holding it
    uncopied; `held` keeps that per value, `made` is the walk's `made_graphs`."""
    if merged is None or not any(o in made for o in merged.origins):
        return  # no graph made here (most values): `graph_paths` reads none
    per: dict[Origin, set[frozenset]] = {}
    for value, env, guard in arms:
        if value is None or env is None or value in env.copied:
            continue
        within = held.get(value)
        for o in uncopied(value, env):
            if o.kind in GRAPH_KINDS:
                inner = within.get(o, _ALWAYS) if within else _ALWAYS
                per.setdefault(o, set()).update(g | guard for g in inner)
    if any(frozenset() not in guards for guards in per.values()):
        held[merged] = {o: frozenset(guards) for o, guards in per.items()}


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
    live = {o for o, g in paths if not contradicted_at_call(g, callee.node, written, caller, callee.resolver, ended)}
    return frozenset(o for o, _ in paths if o not in live)


def unreached(arms: dict[Origin, frozenset], guards) -> frozenset[Origin]:
    """The graph origins a value holds (uncopied) only on arms whose conditions contradict the
    branches a switch lies in (`e = m if is_qat else copy.deepcopy(m)`, then `if not is_qat:
    e.eval()` meets the copy)."""
    here = frozenset(guards)
    return frozenset(o for o, paths in arms.items() if not any(compatible(g, here) for g in paths))


__all__ = ["arm_names", "note_arms", "ruled_out", "unreached"]

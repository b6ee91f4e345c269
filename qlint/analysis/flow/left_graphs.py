"""Exported graphs a helper leaves in an attribute of what its caller holds (QL203, issue 14):

    def prepare_core(m):  m.core = prepare_qat_pt2e(export(m.core, x).module(), q)
    def wrapped(m):       return Wrap(prepare_qat_pt2e(export(m, x).module(), q))

    m = Net(); prepare_core(m); m.train()      # raises NotImplementedError on torch 2.13
    wrapped(Net()).eval()                      # raises too

Measured with torch 2.13 and torchao 0.18: `Module.train()` reaches the stored graph's raising
override as when the caller stores it itself (`graph_holders`, `graph_wrappers`); quiet once
`allow_exported_model_train_eval` ran on the graph (in the helper or by the caller, through
`m.core`), or after the caller replaced the attribute.

A helper's summary keeps, for each parameter, the attributes every path that ends the helper
leaves an unallowed, uncopied graph in (`FunctionFlow.left_fields`: read from the path-sensitive
parts `graph_parts` keeps, `m.core`, while `m` is still the parameter), and the same for the
value every return hands back (`returned_fields`: also the fields a plain module class's
construction there was given, `graph_holders`, when nothing wrote them after). A graph left on
some paths only is not followed. At the call the caller's value holds the graph: read back as
`m.core`, and switched by `m.train()` when the value is a plain module construction of the
project (what an inline store is judged by). A helper that hands the parameter to a call after
storing, or rebinds it, leaves nothing known (`GraphParts.touched`/`rebound`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.graph_wrappers import constructed_plain
from qlint.analysis.flow.model_values import Env, FunctionFlow, Obj, merge_values


def summarise(flow: FunctionFlow, roots: dict[str, set[str]], sem) -> None:
    """Record `left_fields` and `returned_fields` on `flow` once its walk ended (`roots`: the
    names with graph parts, `GraphParts.roots`; `sem`: the walk's `CallSemantics`)."""
    ends = flow.returns
    fields = sem.containers.fields
    if not ends or not (roots or fields):
        return
    for name, param in flow.param_objs.items():
        if name in roots:
            found = _common([_parts(name, param, roots[name], e) for e, _ in ends])
            if found:
                flow.left_fields[flow.params.index(name)] = found
    if all(obj is not None for _, obj in ends):
        overwritten = sem.builds.overwritten
        per_end = []
        for e, obj in ends:
            held = {a: g for a, g in fields.get(obj, {}).items() if (obj, a) not in overwritten and _live(g, e)}
            for root, parts in roots.items():
                if e.vars.get(root) == obj:
                    held.update(_parts(root, obj, parts, e) or {})
            per_end.append(held)
        found = _common(per_end)
        if found:
            flow.returned_fields = found


def hand_back(sem, node, callee: FunctionFlow, given: dict[int, Obj], written: dict, translate, env: Env) -> None:
    """At the call `node` of `callee`: the graphs it leaves in its arguments' attributes
    (`written`: the argument expressions, by parameter index)."""
    for index, attrs in callee.left_fields.items():
        if index in given:
            _holds(sem, node, callee, given[index], attrs, translate, env, written.get(index))


def hand_back_result(sem, node, callee: FunctionFlow, result: Obj, translate, env: Env) -> None:
    """The same for the value the call hands back."""
    _holds(sem, node, callee, result, callee.returned_fields, translate, env)


def _holds(sem, node, callee: FunctionFlow, holder: Obj, attrs: dict, translate, env: Env, name=None) -> None:
    for attr, graphs in attrs.items():
        objs = [translate(g, e) for (e, _), g in zip(callee.returns, graphs, strict=True)]
        graph = merge_values(objs, env, node)
        sem.containers.handed_back(holder, attr, graph, lambda: constructed_plain(sem.owner, holder))
        sem.holds_graph(holder)
        if isinstance(name, ast.Name):
            # `prepare_core(m)` in a helper of its own: a part of its name, as a store there
            # would be, which that helper's summary reads on the paths that called this one.
            sem.walk.parts.stored(ast.Attribute(name, attr, ast.Load()), graph, env)


def _parts(root: str, obj: Obj, parts: set[str], e: Env) -> dict[str, Obj] | None:
    """The live graphs held in `root.<attr>` at the end `e`, while `root` is still `obj`."""
    if e.vars.get(root) != obj:
        return None
    prefix = f"{root}."
    return {
        p[len(prefix) :]: g for p in parts if p.startswith(prefix) and (g := e.vars.get(p)) is not None and _live(g, e)
    }


def _live(graph: Obj, e: Env) -> bool:
    return graph.is_graph and graph not in e.patched and graph not in e.copied


def _common(per_end: list[dict[str, Obj] | None]) -> dict[str, tuple[Obj, ...]]:
    """The attributes every end holds a graph in, with that graph per end."""
    if not per_end or any(not held for held in per_end):
        return {}
    attrs = set(per_end[0]).intersection(*per_end[1:])
    return {a: tuple(held[a] for held in per_end) for a in sorted(attrs)}


__all__ = ["hand_back", "hand_back_result", "summarise"]

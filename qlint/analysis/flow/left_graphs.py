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

from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.graph_wrappers import constructed_plain
from qlint.analysis.flow.model_env import Env, merge_values
from qlint.analysis.flow.model_values import Obj


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


def return_parts(flow: FunctionFlow, roots: dict[str, set[str]], literals: dict, value: ast.expr, e: Env) -> None:
    """At `return value`: the graphs a dict literal of constant keys (`{"model": gm}`) or a
    name with graph parts (`out`, after `out = {"model": gm}`) hands back, by key
    (`FunctionFlow.return_parts`; `roots`: `GraphParts.roots`; `literals`: the elements of the
    literals read, `loop_items.Containers.literals`)."""
    held = {}
    if type(value) is ast.Dict:
        elements = literals.get(id(value))
        if elements is None or None in value.keys or len(elements) != len(value.values):
            return  # a spread: which key holds what is not known
        for k, element in zip(value.keys, elements, strict=True):
            constant = isinstance(k, ast.Constant) and type(k.value) in (int, str)
            if constant and isinstance(element, Obj) and _live(element, e):
                held[f"[{k.value!r}]"] = element
    elif type(value) is ast.Name and value.id in roots:
        prefix = f"{value.id}["
        for p in roots[value.id]:
            if p.startswith(prefix) and (g := e.vars.get(p)) is not None and _live(g, e):
                held[p[len(value.id) :]] = g
    if held:
        flow.return_parts[len(flow.returns)] = held


def unpack_parts(sem, node: ast.Call, callee: FunctionFlow, translate, env: Env) -> None:
    """At the call `node` of `callee`: the keys every return's dict holds a graph under, with
    that graph in the caller's terms (`CallSemantics.returned_parts`), which `out["model"]`
    reads back (a graph under a key on some paths only is not followed, as for a tuple's
    position)."""
    ends = callee.returns
    per_end = [callee.return_parts.get(i) for i in range(len(ends))]
    if not per_end or any(not held for held in per_end):
        return
    out = {}
    for k in sorted(set(per_end[0]).intersection(*per_end[1:])):
        out[k] = merge_values([translate(held[k], e) for held, (e, _) in zip(per_end, ends, strict=True)], env, node)
    if out:
        sem.returned_parts[id(node)] = out


def returned_item(sem, e: ast.Subscript) -> Obj | None:
    """`f()["model"]` / `f()[0]`: the graph the call's helper returns under that key or at
    that position on every path (`unpack_parts`, `returned_items.unpack`)."""
    index = e.slice.value if isinstance(e.slice, ast.Constant) else None
    if type(index) is str or (type(index) is int and index >= 0):
        held = sem.returned_parts.get(id(e.value))
        if held is not None and (found := held.get(f"[{index!r}]")) is not None:
            return found
        items = sem.unpacked.get(id(e.value)) if type(index) is int else None
        if items is not None and index < len(items) and items[index] is not None and items[index].is_graph:
            return items[index]
    return None


def bound_parts(sem, parts, name: str, call: ast.Call, items, env: Env) -> None:
    """`out = f()`: the graphs the helper returns under a key of its dict (`unpack_parts`) or
    at a position of its tuple (`items`, `returned_items.unpack`) are parts of `out`
    (`GraphParts`), read back as `out["model"]`/`out[0]` until `out` is rebound, handed on or
    changed."""
    held = sem.returned_parts.pop(id(call), None)
    for suffix, graph in (held or {}).items():
        parts.hold(name, suffix, graph, env)
    for position, item in enumerate(items or ()):
        if item is not None and item.is_graph:
            parts.hold(name, f"[{position!r}]", item, env)


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


__all__ = [
    "bound_parts",
    "hand_back",
    "hand_back_result",
    "return_parts",
    "returned_item",
    "summarise",
    "unpack_parts",
]

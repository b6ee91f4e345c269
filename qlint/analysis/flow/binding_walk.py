"""The walk of bindings for `model_interp`: what an assignment (`x = ...`, `a, b = ...`,
`holder.model = m`, `items[i] = m`) or a target the walk cannot follow binds, and the names a
statement binds or unbinds without a value the walk follows.

`walk` is the function's walk (`model_interp.Interpreter`, not imported: it imports this).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow import built_items, indexed_items, left_graphs, product_items
from qlint.analysis.flow.loop_items import LITERALS
from qlint.analysis.flow.model_apis import key
from qlint.analysis.flow.model_env import Env, new_value
from qlint.analysis.flow.model_values import ITEM, KEY, PAIRS, UNKNOWN, Obj, Origin, part_of
from qlint.analysis.flow.patched_switches import replaces_switch
from qlint.analysis.flow.reflective_switches import SWITCHES
from qlint.analysis.names.resolver import dotted_parts

_NAME = ast.Name


def assign(walk, s: ast.Assign | ast.AnnAssign, env: Env) -> None:
    targets = s.targets if isinstance(s, ast.Assign) else [s.target]
    value = s.value
    if isinstance(value, (ast.Tuple, ast.List)) and any(isinstance(t, (ast.Tuple, ast.List)) for t in targets):
        objs = [walk.expr(v, env) for v in value.elts]  # `a, b = x, y`: each element once
        for target in targets:
            if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(objs):
                for t, v, obj in zip(target.elts, value.elts, objs, strict=True):
                    bind(walk, t, obj, v, env)
            else:
                bind(walk, target, None, value, env)
        return
    obj = walk.expr(value, env) if value is not None else None
    items = walk.calls.unpacked.pop(id(value), None) if isinstance(value, ast.Call) else None
    # `enc = m.encoder`: what the name reaches, taken before a binding that may rebind `m`.
    reached = walk.calls.held_parts.path(value, env) if _chain(value) else None
    for target in targets:
        if items is not None and isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(items):
            for t, item in zip(target.elts, items, strict=True):  # `model, x = build()`
                if item is not None and not isinstance(t, ast.Starred):
                    bind(walk, t, item, None, env)
                else:
                    bind_unknown(walk, t, value, env)
            continue
        bind(walk, target, obj, value, env)
        if reached is not None and isinstance(target, ast.Name):
            walk.calls.held_parts.bound(target.id, reached, env)
        if type(target) is _NAME and (items is not None or id(value) in walk.calls.returned_parts):
            # `out = f()` with `return {"model": gm}` or `return gm, info`: `out["model"]`, `out[0]`
            left_graphs.bound_parts(walk.calls, walk.parts, target.id, value, items, env)


def bind(walk, target: ast.expr, obj: Obj | None, value: ast.expr | None, env: Env) -> None:
    if type(target) is ast.Attribute and target.attr in SWITCHES:
        holder = env.vars.get(key(target.value) or "")
        if holder is not None and replaces_switch(target, value, walk.qualname, walk.calls.nested, walk.func):
            env.patched |= {holder}  # `gm.eval = types.MethodType(_noop, gm)`: its switches raise no more
    name = key(target)
    if name is not None:
        walk.parts.rebound(name, env)
        if obj is None and value is not None and not _names_a_global(value, env):
            obj = new_value(env, value, name, Origin(UNKNOWN, value))  # so its later `.eval()` counts
            if isinstance(value, LITERALS):
                walk.containers.bound(obj, value)
                walk.parts.literal(name, value, walk.containers.literals.get(id(value)), env)
            elif type(value) is ast.ListComp:  # `[(m, q) for m, q in itertools.product(ms, qs)]`
                made = product_items.combinations(walk.containers, value, walk.qualname, env)
                if made is None:  # `[GridSample(m, p) for m, p in itertools.product(ms, ps)]`
                    made = built_items.elements(walk, value, env)
                if made is not None:
                    walk.containers.held[obj] = (False, made)
        if obj is None:
            env.vars.pop(name, None)
        else:
            env.vars[name] = obj
    elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
        bind_unknown(walk, target, value or target, env)
    elif isinstance(target, ast.Attribute) and (holder := env.vars.get(key(target.value) or "")) is not None:
        walk.calls.builds.overwritten.add((holder, target.attr))  # `bundle.model` is no longer what was passed
        walk.calls.held_parts.replaced(target, env)  # `m.encoder = Other()`: a wrapper of the old one
        walk.parts.stored(target, obj, env)
        walk.calls.stored_on(holder, target.attr, obj)
        walk.calls.builds.given_part(holder, obj, env)
        if obj is not None and obj.is_graph:
            # `model.block = export(model.block, ...).module()`: `model.eval()` would now raise.
            walk.calls.holds_graph(holder)
    elif isinstance(target, (ast.Attribute, ast.Subscript)):
        walk.parts.stored(target, obj, env)
        if type(target) is ast.Subscript:
            indexed_items.stored(walk.containers, target, value, obj, env)  # `modules[i] = m`


def bind_unknown(walk, target: ast.expr, anchor: ast.AST, env: Env, source: Obj | None = None) -> None:
    """Bind names we cannot follow; items of a parameter (`for m in models`) stay its parts."""
    pairs = source is not None and any(o.path and o.path[-1] == (PAIRS,) for o in source.origins)
    for name, steps in _unpacked(target, (), pairs):
        part = part_of(source, anchor, steps) if source is not None else None
        env.vars[name] = new_value(env, anchor, name, part or Origin(UNKNOWN, anchor))


def _unpacked(target: ast.expr, at: tuple, pairs: bool):
    """(name, the steps from an item of the iterated container to it) for each name a loop
    target binds: one item, then an element per level of unpacking; over `.items()` the
    pair's first element is the key and its second the item (steps None: not followed)."""
    if isinstance(target, ast.Name):
        name = target.id
        if not pairs:
            yield name, ((ITEM,), *((ITEM,) for _ in at))
        elif len(at) >= 1:
            yield name, ((KEY,) if at[0] == 0 else (ITEM,), *((ITEM,) for _ in at[1:]))
        else:
            yield name, None  # the pair itself
    elif isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(t, ast.Starred) for t in target.elts):
        if pairs and not at and len(target.elts) != 2:
            pairs = False
        for i, elt in enumerate(target.elts):
            yield from _unpacked(elt, (*at, i), pairs)
    else:
        for node in ast.walk(target):
            if (name := key(node)) is not None:
                yield name, None


def _chain(value: ast.expr | None) -> bool:
    """An attribute chain (`m.encoder`, `m.encoder.eval()`): what a name bound to a part is."""
    while isinstance(value, ast.Call) and not value.args and isinstance(value.func, ast.Attribute):
        value = value.func.value
    return isinstance(value, ast.Attribute)


def bound_names(stmt: ast.stmt) -> list[str]:
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in stmt.names]
    if isinstance(stmt, ast.Delete):
        return [k for t in stmt.targets if (k := key(t))]
    return [stmt.name] if hasattr(stmt, "name") else []


def _names_a_global(value: ast.expr, env: Env) -> bool:
    """A constant, or a dotted path such as `torch.export` (an alias the resolver follows)."""
    if isinstance(value, ast.Constant):
        return True
    parts = dotted_parts(value)
    return parts is not None and parts[0] not in env.vars

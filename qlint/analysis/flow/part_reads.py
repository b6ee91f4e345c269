"""What the walk (`model_interp`) reads out of other values: an attribute or item of a value
(`pair[0]`, `bundle.model`, `m.encoder`), and the modes of the models a container literal
holds.

`walk` is the function's walk (`model_interp.Interpreter`, not imported: it imports this).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow import left_graphs
from qlint.analysis.flow.built_parts import built_part
from qlint.analysis.flow.init_parts import init_part
from qlint.analysis.flow.loop_items import LITERALS, element_of
from qlint.analysis.flow.model_env import Env, new_value
from qlint.analysis.flow.model_values import ATTR, CONTAINER, ITEM, UNKNOWN_MODE, ModeFact, Obj, Origin, part_of

_CALL, _ATTRIBUTE = ast.Call, ast.Attribute


def part(walk, e: ast.Attribute | ast.Subscript, env: Env) -> Obj | None:
    """An attribute or item of a value (`pair[0]`, `bundle.model`, `m.encoder`)."""
    held = walk.parts.read(e, env)
    if held is not None:
        return held
    container = walk.expr(e.value, env)
    attribute = type(e) is _ATTRIBUTE
    if attribute and container is not None:
        if (engine_model := walk.calls.engine_part(container, e.attr)) is not None:
            return engine_model  # `deepspeed.init_inference(model).module`
        if (left := walk.calls.containers.read(container, e.attr)) is not None:
            return left  # `prepare_core(m); m.core`: the graph the helper stored there (`left_graphs`)
        stored = walk.calls.builds.field(container, e.attr, e, env)
        if stored is not None:
            return stored  # `bundle.model`: the model the bundle was built with
        if (built := init_part(walk.calls, container, e, env)) is not None:
            return built  # `holder.model` that `Holder.__init__` builds (`init_parts`)
    if not attribute:
        if type(e.value) is _CALL and (item := left_graphs.returned_item(walk.calls, e)) is not None:
            return item  # `f()["model"]`: the graph the helper returns there (`left_graphs`)
        walk.expr(e.slice, env)
    step = (ATTR, e.attr) if attribute else (ITEM,)
    part = part_of(container, e, (step,))
    return new_value(env, e, "", part) if part is not None else None


def items_of(walk, e: ast.Dict | ast.List | ast.Tuple | ast.Set, env: Env) -> frozenset[ModeFact]:
    """The modes of the models a container literal holds (a dict's values). A constant holds
    no model; anything else the walk cannot follow (`**other`, `*rest`, a global) holds one
    in an unknown mode, and a nested literal is an item with items of its own."""
    if isinstance(e, ast.Dict):
        for k in e.keys:
            walk.expr(k, env)
        elts, spread = e.values, None in e.keys
    else:
        elts, spread = e.elts, False
    facts: set[ModeFact] = set(UNKNOWN_MODE) if spread else set()
    elements = walk.containers.literal(e, spread)
    for elt in elts:
        obj = walk.expr(elt, env)
        if obj is None and type(elt) is _ATTRIBUTE:
            obj = built_part(elt, env)  # `[seq, seq.second]` (`built_parts`)
        elements.append(element_of(elt, obj, walk.containers.literals))
        if isinstance(elt, ast.Constant):
            continue
        if isinstance(elt, LITERALS):
            inner = walk.calls.literal_items[id(elt)]
            facts.add(ModeFact("unset", elt, Origin(CONTAINER, elt, items=inner)))
        elif obj is None or isinstance(elt, ast.Starred):
            facts |= UNKNOWN_MODE
        else:
            facts |= env.facts(obj)
    return frozenset(facts)

"""`return model.eval(), inputs` on every path of a helper: each element of the tuple in the
caller's terms, for `a, b = f()` (`helper_calls.apply` asks, with its own translation)."""

from __future__ import annotations

import ast

from qlint.analysis.flow import arm_graphs
from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.model_env import Env, join
from qlint.analysis.flow.model_values import Obj
from qlint.analysis.flow.returned_copies import carry, through_copies


def _ruled_item(sem, node: ast.Call, callee: FunctionFlow, written: dict, index: int, position: int):
    """The graphs element `position` of return `index` holds uncopied only on branches this
    call rules out (`arm_graphs`)."""
    items = callee.return_item_graphs.get(index)
    return arm_graphs.ruled_out(items[position], callee, node, written, sem.resolver) if items else frozenset()


def unpack(sem, node: ast.Call, callee: FunctionFlow, translate, origin_here, written, env: Env) -> None:
    """`return model.eval(), inputs` on every path: each element in caller terms, for `a, b = f()`
    (`origin_here`: one of the helper's origins in caller terms, for the copies it hands back;
    `written`: the call's arguments, which may rule out the arm an element is the graph on)."""
    size = _items_of(callee)
    if not size:
        return
    items: list[Obj | None] = []
    params = callee.param_objs.values() if callee.copies else ()
    for position in range(size):
        values = [(e, callee.return_items[i][position]) for i, (e, _) in enumerate(callee.returns)]
        if any(v is None for _, v in values):
            items.append(None)  # some path returns something we do not follow there
            continue
        objs = [translate(v, e) for e, v in values]
        copied = False
        if callee.copies:  # `return copy.deepcopy(gm), info`
            ruled = [_ruled_item(sem, node, callee, written, i, position) for i in range(len(values))]
            ours = zip(objs, values, ruled, strict=True)
            copies = [(o, through_copies(v, e, o, params, origin_here, r)) for o, (e, v), r in ours]
            copied = any(through for _, through in copies)
        if len(set(objs)) == 1:
            item = objs[0]
            if copied:
                # Its own object: another element at this call may hold the same graphs uncopied
                # (`return copy.deepcopy(gm), gm`), and would be one object with it.
                item = Obj(node, f"item{position}", item.origins, item.captures)
                env.modes[item] = env.facts(objs[0])
                carry(item, copies, env)
                sem.flow.copies = True
            items.append(item)
            if position in callee.allowed_items:  # `gm, info = quantize(...)`, gm allowed inside
                env.patched |= {item}
            continue
        # Named by position, so that two elements merged at one call stay two objects.
        merged = join([Env({f"item{position}": o}, env.modes, env.patched, env.copied) for o in objs], node)
        env.modes.update(merged.modes)
        items.append(merged.vars[f"item{position}"])
        if copied:
            carry(items[-1], copies, env)
            sem.flow.copies = True
    sem.unpacked[id(node)] = tuple(items)


def _items_of(callee: FunctionFlow) -> int | None:
    """The length of the tuple every return of `callee` builds (None: some return is no tuple)."""
    sizes = {len(callee.return_items[i]) if i in callee.return_items else None for i in range(len(callee.returns))}
    return next(iter(sizes)) if len(sizes) == 1 else None


__all__ = ["unpack"]

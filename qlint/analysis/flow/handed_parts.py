"""A part of a model handed to a helper that switches the mode of its parameter (issue 14).

`make_train(model.bn)` with `def make_train(m): m.train()` runs `model.bn.train()`: the part's
modules are in train mode whatever mode the whole model is in, as after a switch of the part
written in place (`part_switches`). The helper's summary says what mode it leaves the
parameter in on each of its paths (its returns' facts); the call's constant arguments rule out
the paths their flags cannot take (`def prep(m, train=False): if train: m.train()` called
as `prep(model.bn)` switches nothing). On the paths left, the part is switched to that mode or
left as it came; the call is the switch the message names, with the part as written there.

A part the walk can name is an attribute or item chain of a local value (`held_parts`); its
argument has no value of its own, so such a call is read in full rather than only recorded as
a call site (`helper_calls.site_only`). A helper that may leave its parameter in a mode it
does not know (`m.train(flag)`), switch a part of it, or anything the summary does not follow
changes nothing here.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import PARAM
from qlint.analysis.flow.part_modes import switched
from qlint.analysis.flow.part_switches import part_dependent

_SWITCHED = ("train", "eval")


def hands_part(sem, node: ast.Call, env: Env) -> bool:
    """`node` passes a part of a model the walk holds (`m.bn`, `m.layers[0]`) as an argument."""
    return any(_part(sem, arg, env) is not None for arg in (*node.args, *(kw.value for kw in node.keywords)))


def switch_handed_parts(sem, node: ast.Call, callee: FunctionFlow, written: dict, ruled_out, env: Env) -> None:
    """At a call of `callee` (`written`: parameter index -> the argument as written), switch the
    parts of held models handed to parameters the helper leaves in a mode of its own
    (`ruled_out`: whether this call's arguments rule out a fact's branch)."""
    ends = callee.returns
    if not ends:
        return
    for index, expr in written.items():
        found = _part(sem, expr, env) if index < len(callee.params) else None
        if found is None:
            continue
        param = callee.param_objs.get(callee.params[index])
        if param is None:
            continue
        modes = _modes_left(callee, index, frozenset().union(*(e.facts(param) for e, _ in ends)), ruled_out)
        if not modes or modes == {None}:
            continue
        root, steps = found
        facts = env.modes[root]
        out: set = set()
        for mode in modes:
            if mode is None:
                out |= facts  # a path that leaves the part as it came
                continue
            dependent = part_dependent(sem, root, steps)
            out |= {switched(f, steps, mode, node, dependent, over=expr) for f in facts}
        env.modes[root] = frozenset(out)


def _modes_left(callee: FunctionFlow, index: int, final, ruled_out) -> set[str | None] | None:
    """The modes the helper leaves parameter `index` in on the paths this call can take (None
    among them: a path that leaves it as it came); None when one is not known."""
    live = [f for f in final if not ruled_out(f)] or list(final)
    out: set[str | None] = set()
    for fact in live:
        origin = fact.origin
        if fact.parts:
            return None  # a part of the parameter switched in turn: not followed
        if fact.state in _SWITCHED and isinstance(fact.node, ast.Call):  # `m.train()`, or a call doing it
            out.add(fact.state)
        elif fact.state == "unset" and origin is not None and origin.kind == PARAM and origin.node is callee.node:
            if origin.index != index:
                return None  # another parameter's model: rebound inside
            out.add(None)
        else:
            return None
    return out


def _part(sem, expr: ast.expr | None, env: Env):
    """(the model, the steps to the part) for an argument naming a part of a held model."""
    if not isinstance(expr, (ast.Attribute, ast.Subscript)):
        return None
    path = sem.held_parts.path(expr, env, items=True)
    if path is None or not path[1]:
        return None
    root = path[0]
    if root.is_graph or root not in env.modes:
        return None
    return path


__all__ = ["hands_part", "switch_handed_parts"]

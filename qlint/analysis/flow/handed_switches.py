"""Mode switches across calls: which parameters a function switches the mode of (`ParamSwitch`),
and which calls hand such a parameter an exported GraphModule (`HandedSwitch`, QL203).

`calibrate(model)` that runs `model.eval()` is right for an eager module and raises
NotImplementedError on torch 2.13 for the GraphModule `prepare_pt2e`, `convert_pt2e` or
`ExportedProgram.module()` returns, unless `allow_exported_model_train_eval` was applied to
it first. A copy (`copy.deepcopy`, `copy.copy`) of such a graph has the plain module's
`eval`/`train` again (measured on torch 2.13/torchao 0.18), so it raises nothing.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.dead_branches import contradicted_at_call, open_ended
from qlint.analysis.flow.model_values import EXPECTS_ERROR, PARAM, Env, FunctionFlow, HandedSwitch, Obj, ParamSwitch
from qlint.value_classes import replace


def param_switches(flow: FunctionFlow) -> None:
    """Record the switches `flow`'s function runs itself on a parameter, unallowed (`ParamSwitch`)."""
    for switch in flow.switches:
        # Allowed in branches only (`if is_graph: allow(m)`): its callers decide, call by call.
        if switch.patched and not switch.allowed_under:
            continue
        index = _own_parameter(Obj(switch.call, "", switch.origins), flow.node)
        if index is not None:
            found = ParamSwitch(switch.call, flow.path, switch.mode, switch.guard, switch.allowed_under)
            flow.param_switches.setdefault(index, found)


def handed_switches(sem, node: ast.Call, callee: FunctionFlow, actual: dict, written: dict, env: Env) -> None:
    """At a call of `callee`, which switches what some parameters are given (`sem`: the caller's
    `CallSemantics`; `actual`: index -> (object, expression)): an exported graph given there,
    neither allowed nor a copy, is a `HandedSwitch`; the caller's own parameter given there is
    switched by the caller too, for its callers to judge."""
    walk = sem.walk
    if EXPECTS_ERROR in walk.contexts:
        return
    for index, switch in callee.param_switches.items():
        obj, expr = actual.get(index, (None, None))
        if obj is None or obj in env.patched or obj in env.copied:
            continue
        # `helper(gm)` with `def helper(m, train=False): if train: m.train()`: not at this call.
        ended = open_ended(node)
        if contradicted_at_call(switch.guard, callee.node, written, sem.resolver, callee.resolver, ended):
            continue
        # The callee allows the parameter under a flag: this call's arguments must rule it out.
        if switch.unless and not contradicted_at_call(
            switch.unless, callee.node, written, sem.resolver, callee.resolver, ended
        ):
            continue
        _hand(walk, node, switch, obj, expr, sem.containers.live(obj, env))


def handed_to_callback(sem, node: ast.Call, switch: ParamSwitch, obj, expr, env: Env) -> None:
    """At a call of a helper that calls the function passed here with one of the call's own
    arguments as it came (`run(to_eval, gm)` with `def run(fn, m): fn(m)`): that function's
    `switch` runs on the argument (`obj`, as written `expr`). Flags of the function's switch
    are not read (the helper, not this call, passes its arguments)."""
    walk = sem.walk
    if obj is None or EXPECTS_ERROR in walk.contexts or obj in env.patched or obj in env.copied:
        return
    if switch.guard or switch.unless:
        return
    _hand(walk, node, switch, obj, expr, sem.containers.live(obj, env))


def _hand(walk, node: ast.Call, switch: ParamSwitch, obj: Obj, expr, held: frozenset) -> None:
    """An exported graph, or a torch container holding one (`held`: where its graphs came
    from, `graph_holders`), handed to `switch`: a finding at `node`; the caller's own
    parameter handed there: switched by the caller too, for its callers to judge."""
    if obj.is_graph or held:
        origins, contained = (obj.origins, False) if obj.is_graph else (held, True)
        found = HandedSwitch(node, walk.stmt_stack[-1], expr, origins, switch, held=contained)
        walk.flow.handed.setdefault(id(node), found)
        return
    own = _own_parameter(obj, walk.func)
    if own is not None:
        here = replace(switch, guard=frozenset(walk.guards), unless=frozenset())
        walk.flow.param_switches.setdefault(own, here)


def _own_parameter(obj: Obj, func: ast.AST) -> int | None:
    """The index of the parameter of `func` that `obj` is on every path (`self`/`cls` aside)."""
    if len(obj.origins) != 1:
        return None
    (origin,) = obj.origins
    if origin.kind != PARAM or origin.node is not func or origin.name in ("self", "cls"):
        return None
    return origin.index

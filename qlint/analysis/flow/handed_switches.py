"""Mode switches across calls: which parameters a function switches the mode of (`ParamSwitch`),
and which calls hand such a parameter an exported GraphModule (`HandedSwitch`, QL203).

`calibrate(model)` that runs `model.eval()` is right for an eager module and raises
NotImplementedError on torch 2.13 for the GraphModule `prepare_pt2e`, `convert_pt2e` or
`ExportedProgram.module()` returns, unless `allow_exported_model_train_eval` was applied to
it first. A copy (`copy.deepcopy`, `copy.copy`) of such a graph has the plain module's
`eval`/`train` again (measured on torch 2.13/torchao 0.18), so it raises nothing.

A value that is the graph on some paths only (`model = prepare_pt2e(...)` under `if args.pt2e:`,
the eager model otherwise; `maybe_graphs`) handed to such a helper is a finding on the paths
that make it the graph, as the same switch written in place is (`ModeSwitch.maybe`): the
voyager-compiler QA script's nested `calibrate(model, ...)` runs `model.eval()` first. Only a
switch the helper runs on every path of its own counts (no branch, flag or type test around
it, none in the helper's body asking what the parameter is): the caller cannot tell which path
a helper testing `isinstance(m, GraphModule)` takes for a value that is either.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.dead_branches import contradicted_at_call, open_ended
from qlint.analysis.flow.function_flows import FunctionFlow, HandedSwitch, ParamSwitch
from qlint.analysis.flow.graph_instances import KIND, is_graph_instance
from qlint.analysis.flow.maybe_graphs import graph_paths, reaching, tests_type
from qlint.analysis.flow.model_apis import switch_mode
from qlint.analysis.flow.model_env import Env, uncopied
from qlint.analysis.flow.model_values import ATTR, ATTRIBUTE, EXPECTS_ERROR, PARAM, PARAM_PART, Obj
from qlint.analysis.flow.stored_graphs import asks_field_type, stored_graph
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.tree_walk import parents
from qlint.value_classes import replace


def param_switches(flow: FunctionFlow) -> None:
    """Record the switches `flow`'s function runs itself on a parameter, unallowed (`ParamSwitch`),
    and on a field of `self` it did not set (`FunctionFlow.field_switches`)."""
    for switch in flow.switches:
        # Allowed in branches only (`if is_graph: allow(m)`): its callers decide, call by call.
        if switch.patched and not switch.allowed_under:
            continue
        index = _own_parameter(Obj(switch.call, "", switch.origins), flow.node)
        if index is not None:
            found = ParamSwitch(switch.call, flow.path, switch.mode, switch.guard, switch.allowed_under)
            _record(flow.param_switches, index, found)
        elif not switch.patched and (name := _own_field(switch.origins, flow.node)) is not None:
            flow.field_switches.setdefault(name, ParamSwitch(switch.call, flow.path, switch.mode, switch.guard))
        elif not switch.patched and (part := _own_part(switch.origins, flow.node)) is not None:
            flow.part_switches.setdefault(part, ParamSwitch(switch.call, flow.path, switch.mode, switch.guard))


def handed_fields(sem, node: ast.Call, callee: FunctionFlow, receiver: Obj, fields: dict[str, Obj], env: Env) -> None:
    """At `receiver.method(...)` of a method that switches fields of `self` (`callee`): a field
    this walk set to an exported graph (`fields`: the receiver's graph parts, `graph_parts`,
    as they were before the call), neither allowed nor copied, is a `HandedSwitch`; on our own
    `self`, a field this method did not set is switched by this method too, for its callers."""
    walk = sem.walk
    if EXPECTS_ERROR in walk.contexts:
        return
    own_self = len(receiver.origins) == 1 and all(
        o.kind == PARAM and o.node is walk.func and o.name == "self" for o in receiver.origins
    )
    for name, switch in callee.field_switches.items():
        if switch.guard:
            continue  # `if self.exported: ...` or a flag of the method's: not read here
        graph, by = fields.get(name), None
        if graph is None and (stored := stored_graph(sem, receiver, name)) is not None:
            graph, by = stored  # `Trainer(gm).epoch(x)`: what its `__init__` stored
        if graph is not None and graph not in env.patched and graph not in env.copied:
            if asks_field_type(receiver, name):
                continue  # `if isinstance(self.gm, GraphModule): return`, then `self.gm.eval()`
            found = HandedSwitch(
                node, walk.stmt_stack[-1], node.func.value, uncopied(graph, env), switch, field=name, stored_by=by
            )
            walk.flow.handed.setdefault(id(node), found)
        elif own_self and f"self.{name}" not in env.vars:
            walk.flow.field_switches.setdefault(name, replace(switch, guard=frozenset(walk.guards)))


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
        # `helper(gm)` with `def helper(m, train=False): if train: m.train()`: not at this call;
        # nor `else: m.eval()` under `if isinstance(m, torch.fx.GraphModule):` for a graph.
        ended = open_ended(node)
        graphs = frozenset([index]) if obj.is_graph else frozenset()
        if contradicted_at_call(switch.guard, callee.node, written, sem.resolver, callee.resolver, ended, graphs):
            continue
        # The callee allows the parameter under a flag: this call's arguments must rule it out.
        if switch.unless and not contradicted_at_call(
            switch.unless, callee.node, written, sem.resolver, callee.resolver, ended
        ):
            continue
        tests = _class_tests(switch, callee.node, index)
        _hand(walk, node, switch, obj, expr, env, sem.containers.live(obj, env), tests)
        if not obj.is_graph and not switch.guard and not switch.unless:
            _hand_on_path(sem, node, switch, obj, expr, callee.node, index, env)


def handed_part_switches(sem, node: ast.Call, callee: FunctionFlow, actual: dict, before: dict, env: Env) -> None:
    """At a call of `callee`, which switches an attribute of what some parameters are given
    (`set_train(h)` with `def set_train(x): x.core.train()`, on every path of its own): the
    argument's attribute holding an exported graph, neither allowed nor copied, is a
    `HandedSwitch` (`before`: id(argument) -> the graphs its attributes held before the call,
    `GraphParts.fields_of`; else what a helper's call left there, `left_graphs`). The caller's
    own parameter given there is switched there by the caller too, for its callers to judge."""
    walk = sem.walk
    if EXPECTS_ERROR in walk.contexts:
        return
    for (index, attr), switch in callee.part_switches.items():
        obj, expr = actual.get(index, (None, None))
        if obj is None or switch.guard:
            continue  # `if train: x.core.train()`: a flag of the helper's, not read here
        graph = (before.get(id(expr)) or {}).get(attr) if expr is not None else None
        if graph is None:
            graph = sem.containers.read(obj, attr)
        if graph is not None:
            if graph.is_graph and graph not in env.patched and graph not in env.copied:
                found = HandedSwitch(node, walk.stmt_stack[-1], expr, uncopied(graph, env), switch, field=attr)
                walk.flow.handed.setdefault(id(node), found)
            continue
        own = _own_parameter(obj, walk.func)
        if own is not None:
            here = replace(switch, guard=frozenset(walk.guards), unless=frozenset())
            walk.flow.part_switches.setdefault((own, attr), here)


def handed_closure(sem, node: ast.Call, switch_call: ast.Call, path: str, callee: ast.AST, env: Env) -> None:
    """At a call of a function written in this one whose own body switches a name of this
    function (`closure_switches`): the name's value here is what the switch meets."""
    walk = sem.walk
    if EXPECTS_ERROR in walk.contexts or id(node) in walk.flow.handed:
        return
    expr = switch_call.func.value
    obj = env.vars.get(expr.id)
    if obj is None or obj in env.patched or obj in env.copied:
        return
    switch = ParamSwitch(switch_call, path, switch_mode(switch_call, switch_call.func.attr))
    if obj.is_graph:
        walk.flow.handed[id(node)] = HandedSwitch(node, walk.stmt_stack[-1], expr, uncopied(obj, env), switch)
        return
    if "try" in walk.contexts or tests_type(callee, expr):
        return
    _hand_where_graph(sem, node, switch, obj, expr, env)


def _hand_on_path(sem, node: ast.Call, switch: ParamSwitch, obj: Obj, expr, callee: ast.AST, index: int, env: Env):
    """`obj` is an exported graph on some paths that reach this call only (`maybe_graphs`):
    the helper's unconditional switch raises on those paths. Not under a `try` here (it may
    expect the error), nor when the helper asks what the parameter is (`tests_type`)."""
    walk = sem.walk
    if "try" in walk.contexts or id(node) in walk.flow.handed:
        return
    params = parameter_args(callee, star=False)
    if index >= len(params) or tests_type(callee, ast.Name(params[index].arg)):
        return
    if not _unconditional(callee, switch.call):
        return
    _hand_where_graph(sem, node, switch, obj, expr, env)


def _hand_where_graph(sem, node: ast.Call, switch: ParamSwitch, obj: Obj, expr, env: Env) -> None:
    """The switch meets `obj` at `node`: handed over on the paths reaching it that make `obj`
    an exported graph, if any."""
    walk = sem.walk
    origins = reaching(graph_paths(obj, env, sem.made_graphs, held=sem.held_graphs), walk.guards, walk.denied())
    if origins:
        walk.flow.handed[id(node)] = HandedSwitch(node, walk.stmt_stack[-1], expr, origins, switch, on_path=True)


# Statements and expressions whose body may not run (or runs elsewhere): a switch under one of
# them runs on some paths only, which `ParamSwitch.guard` does not always say (`if not (a and
# b):` leaves no guard).
_CONDITIONAL = (
    ast.If,
    ast.IfExp,
    ast.Match,
    ast.Try,
    getattr(ast, "TryStar", ast.Try),
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.BoolOp,
    ast.comprehension,
    ast.Lambda,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


def _unconditional(callee: ast.AST, call: ast.Call) -> bool:
    """`call` lies in `callee`'s own body, on every path through it (no branch, loop, `try`,
    `and`/`or` or nested definition around it)."""
    above = parents(callee)
    node: ast.AST = call
    while (parent := above.get(id(node))) is not None:
        if parent is callee:
            return True
        if isinstance(parent, _CONDITIONAL):
            return False
        node = parent
    return False


def _class_tests(switch: ParamSwitch, callee: ast.AST, index: int) -> frozenset[bool]:
    """The polarities of the switch's `isinstance` tests on the parameter at `index`
    (`graph_instances`): they hold for the caller's own parameter handed there as it came."""
    params = parameter_args(callee, star=False)
    if index >= len(params):
        return frozenset()
    condition = f"{params[index].arg} {KIND}"
    return frozenset(polarity for cond, polarity in switch.guard if cond == condition)


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
    _hand(walk, node, switch, obj, expr, env, sem.containers.live(obj, env))


def handed_made(sem, node: ast.Call, switch: ParamSwitch, function: ast.expr, origins, path: str, absent=None) -> None:
    """At a call of a helper that makes an exported graph (`origins`, in file `path`) and calls the function
    passed here (`function`) with it, the function switching that argument (`switch`): a
    finding at `node`, the call that chose the function. Flags of the function's switch are
    not read (the helper, not this call, passes its arguments). `absent`: the helper allowed the
    graph only through a spelling torch 2.13 lacks (`ModeSwitch.absent_allow`)."""
    if switch.guard or switch.unless:
        return
    walk = sem.walk
    found = HandedSwitch(node, walk.stmt_stack[-1], function, origins, switch, made=path, absent_allow=absent)
    walk.flow.handed.setdefault(id(node), found)


def _hand(walk, node: ast.Call, switch: ParamSwitch, obj: Obj, expr, env: Env, held: frozenset, tests=frozenset()):
    """An exported graph (named by the graphs it may be uncopied in `env`), or a torch container
    holding one (`held`: where its graphs came from, `graph_holders`), handed to `switch`: a
    finding at `node`; the caller's own parameter handed there: switched by the caller too, for
    its callers to judge, under the callee's `isinstance` tests of it (`tests`: their
    polarities), which test the same object."""
    if obj.is_graph or held:
        origins, contained = (uncopied(obj, env), False) if obj.is_graph else (held, True)
        absent = walk.absent_allow_of(obj, origins)
        found = HandedSwitch(node, walk.stmt_stack[-1], expr, origins, switch, held=contained, absent_allow=absent)
        walk.flow.handed.setdefault(id(node), found)
        return
    own = _own_parameter(obj, walk.func)
    if own is not None:
        (origin,) = obj.origins
        carried = {(f"{origin.name} {KIND}", polarity) for polarity in tests}
        here = replace(switch, guard=frozenset(walk.guards) | carried, unless=frozenset())
        _record(walk.flow.param_switches, own, here)
    elif (name := _own_field(obj.origins, walk.func)) is not None:
        # `switch_off(self.gm)`: switched by this method, for the class's other methods and
        # for callers that set the field (`runner.calibrate()`) to judge.
        walk.flow.field_handed.setdefault(id(node), HandedSwitch(node, walk.stmt_stack[-1], expr, obj.origins, switch))
        here = replace(switch, guard=frozenset(walk.guards), unless=frozenset())
        walk.flow.field_switches.setdefault(name, here)


def _record(switches: dict[int, ParamSwitch], index: int, switch: ParamSwitch) -> None:
    """The first switch seen of a parameter stands for it, except that one an `isinstance`
    test keeps from exported graphs gives way to one it does not: a caller handing a graph
    must not be judged by the spared one alone."""
    old = switches.get(index)
    if old is None or (_spares_graphs(old) and not _spares_graphs(switch)):
        switches[index] = switch


def _spares_graphs(switch: ParamSwitch) -> bool:
    """The switch lies in an arm of an `isinstance` test that an exported graph never takes."""
    return any(is_graph_instance(condition) and not polarity for condition, polarity in switch.guard)


def _own_field(origins, func: ast.AST) -> str | None:
    """The field of `self` (`self.<field>` read as the method found it) that `origins` are on every path."""
    if len(origins) != 1:
        return None
    (origin,) = origins
    name = origin.name
    if origin.kind != ATTRIBUTE or origin.node is not func or not name.startswith("self.") or name.count(".") != 1:
        return None
    return name[5:]


def _own_part(origins, func: ast.AST) -> tuple[int, str] | None:
    """(the parameter's index, the attribute) when `origins` are an attribute of a parameter of
    `func` (`x.core`, `self`/`cls` aside) on every path."""
    if len(origins) != 1:
        return None
    (origin,) = origins
    path = origin.path
    if origin.kind != PARAM_PART or origin.owner is not func or not path or len(path) != 1 or path[0][0] != ATTR:
        return None
    return origin.index, path[0][1]


def _own_parameter(obj: Obj, func: ast.AST) -> int | None:
    """The index of the parameter of `func` that `obj` is on every path (`self`/`cls` aside)."""
    if len(obj.origins) != 1:
        return None
    (origin,) = obj.origins
    if origin.kind != PARAM or origin.node is not func or origin.name in ("self", "cls"):
        return None
    return origin.index

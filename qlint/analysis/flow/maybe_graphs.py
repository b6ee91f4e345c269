"""Values that are an exported graph on some paths and an eager module on others (QL203).

`model = prepare(model, use_pt2e, ...)` with a helper returning `prepare_qat_pt2e(...)` under
`if use_pt2e:` and the eager model otherwise, then `model.eval()` on every path: the switch
raises on torch 2.13 whenever the flag is set. Whether a switch sees the graph depends on the
branch conditions the graph came under, which the origins of a merged value no longer say; a
`GraphPath` keeps one graph origin with its conditions, in the terms of the function it is in
(a helper's conditions on its parameters become conditions on the caller's arguments), so a
switch under a contradicting condition (`if not use_pt2e: model.eval()`) stays quiet.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.dead_branches import on_name, open_ended, rebound
from qlint.analysis.flow.forwarded_kwargs import contradicted_at, keyed
from qlint.analysis.flow.forwarded_kwargs import in_caller_terms as kwargs_terms
from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.model_env import Env, uncopied
from qlint.analysis.flow.model_values import GRAPH_KINDS, Obj, Origin, anchored, compatible
from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.node_memo import kept_on_node

# (graph origin, the conditions on a path where the value is that graph)
GraphPath = tuple[Origin, frozenset]
_ALWAYS = (frozenset(),)


def graph_paths(obj: Obj | None, env: Env, made: dict, whole: bool = False, held=None) -> frozenset[GraphPath]:
    """The graphs `obj` may be, each with the conditions it is that graph under (`made`: graph
    origin -> the guards of the paths it was made or handed back on; `held`: value -> graph
    origin -> the conditions of the arms that chose it, `arm_graphs`); none for an allowed or a
    copied value, nor, unless `whole`, for one that is a graph on every path (QL203 reads those
    switches already; a helper's return under a branch is asked `whole`), nor for a graph it
    holds only through copies (`Env.partly_copied`: a copy's switch raises nothing). A graph
    origin with no paths known (made where the walk did not see) gives none: it is not known
    to be feasible."""
    if obj is None or obj in env.patched or obj in env.copied or (obj.is_graph and not whole):
        return frozenset()
    arms = held.get(obj) if held else None
    if arms is not None:  # `m if is_qat else copy.deepcopy(m)`: the graph under `is_qat` alone
        return frozenset(
            (o, g | a)
            for o in uncopied(obj, env)
            if o.kind in GRAPH_KINDS
            for g in made.get(o, ())
            for a in arms.get(o, _ALWAYS)  # (one no arm held uncopied then: as anywhere)
        )
    return frozenset((o, g) for o in uncopied(obj, env) if o.kind in GRAPH_KINDS for g in made.get(o, ()))


def note_made(made: dict, obj: Obj | None, node: ast.Call, guards) -> None:
    """A graph the call `node` makes: it is that graph under the branches the call lies in."""
    if obj is None:
        return
    for o in obj.origins:
        if o.node is node and o.kind in GRAPH_KINDS and o not in made:
            made[o] = {frozenset(guards)}


def returned_paths(callee: FunctionFlow, node: ast.Call, written: dict, caller, foreign: bool, func=None) -> frozenset:
    """The graphs a helper's returns may be at this call (in the function `func`), conditions
    in the caller's terms; returns whose conditions the call's arguments rule out
    (`prepare(m, False, q)`, or a keyword landing in the helper's `**kwargs`) are dropped."""
    out: set[GraphPath] = set()
    ended = open_ended(node)
    for paths in callee.return_graphs.values():
        for origin, guard in paths:
            if origin.kind not in GRAPH_KINDS:
                continue  # its parameter handed back under an arm (`arm_graphs.forwarded`)
            if contradicted_at(guard, callee.node, written, caller, callee.resolver, ended, node):
                continue
            here = anchored(origin, node, callee.path) if foreign else origin
            terms = in_caller_terms(guard, callee.node, written, on_self(node), node, func, callee.resolver)
            out.add((here, terms))
    return frozenset(out)


def on_self(node: ast.Call) -> bool:
    """`self.method(...)`: the method's `self.<attr>` are the caller's."""
    func = node.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"


def in_caller_terms(
    guard: frozenset, callee: ast.AST, written: dict, same_self: bool, call=None, func=None, home=None
) -> frozenset:
    """A condition on a parameter the call passes a name for (`use_pt2e`, `cfg.pt2e`) becomes
    that condition on the name (its negation for `not use_pt2e`), one on `self.<attr>` stays
    as it is for a call on `self`; one on a parameter the call leaves to the `**kwargs` of the
    calling function `func` hands on becomes one on that key (`forwarded_kwargs`, which reads
    the callee's default with `home`); any other is not the caller's to test and is left out
    (the path is then taken as possible wherever the caller switches)."""
    index = {a.arg: i for i, a in enumerate(parameter_args(callee, star=False))}
    out = set()
    for condition, polarity in guard:
        name = on_name(condition)
        if same_self and name.startswith("self."):
            out.add((condition, polarity))
            continue
        if name not in index or rebound(callee, name):
            if call is not None and keyed(name):
                out.update(kwargs_terms(condition, polarity, None, callee, call, func, home))
            continue
        expr = written.get(index[name])
        if expr is None and call is not None and index[name] not in written:
            out.update(kwargs_terms(condition, polarity, name, callee, call, func, home))
            continue
        if type(expr) is ast.UnaryOp and type(expr.op) is ast.Not and condition == name:
            expr, polarity = expr.operand, not polarity  # `f(m, not is_qat)`: true where `is_qat` is not
        parts = dotted_parts(expr) if expr is not None else None
        if parts:
            out.add((".".join(parts) + condition[len(name) :], polarity))
    return frozenset(out)


def reaching(paths: frozenset[GraphPath], guards, denied=()) -> frozenset[Origin]:
    """The graph origins whose conditions can hold where the switch runs (`denied`: the
    conjunctions an enclosing `if not (a and (b or c)):` rules out, each conjunct as the
    conditions any of which makes it hold)."""
    here = frozenset(guards)

    def ruled_out(g: frozenset) -> bool:
        return any(all(alternatives & g for alternatives in d) for d in denied)

    return frozenset(o for o, g in paths if compatible(g, here) and not ruled_out(g))


def tests_type(func: ast.AST, receiver: ast.expr) -> bool:
    """The body asks what the receiver is (`isinstance(model, GraphModule)`,
    `hasattr(model, "graph")`): its switch is written for the eager case it tells apart."""
    return ast.unparse(receiver) in kept_on_node(func, _TESTED, _type_tested)


_TESTED = "_qlint_type_tested"


def _type_tested(func: ast.AST) -> frozenset[str]:
    """The expressions (as written) whose type the body asks, in the ways `tests_type` reads:
    one walk per body, kept on it (strings only), for every receiver a check asks about
    (ExecuTorch's test_vulkan_delegate.py asked 111 times, each a walk unparsing every
    call's first argument)."""
    found = set()
    for node in ast.walk(func):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args):
            continue
        test = node.func.id
        if test not in _TYPE_TESTS:
            continue
        second = node.args[1] if len(node.args) > 1 else None
        if test == "isinstance":
            tested = second is not None and "GraphModule" in ast.unparse(second)
        elif test == "hasattr":
            # `hasattr(model, "get_rand_input")` asks something else of an eager model.
            tested = isinstance(second, ast.Constant) and second.value in _GRAPH_ATTRS
        else:
            tested = True  # `type(model)`
        if tested:
            found.add(ast.unparse(node.args[0]))
    return frozenset(found)


_TYPE_TESTS = frozenset({"type", "isinstance", "hasattr"})

# What only a GraphModule has.
_GRAPH_ATTRS = frozenset({"graph", "graph_module", "_graph", "code", "recompile"})

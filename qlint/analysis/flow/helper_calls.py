"""Calls of the helpers a walk follows (functions and methods of the same module, class or
project; which helper a call names is `helper_callees`'): what the helper's summary does at
the call, in the caller's terms (`apply`): the modes it leaves its arguments in, the captures
it returns, the sinks its parameters reach, the call site its callers are read from.

Each takes the walk's `model_calls.CallSemantics` (`sem`) and records into it: it is not
imported here, so that this module knows neither the call semantics nor the walk above it.
"""

from __future__ import annotations

import ast
import weakref
from functools import partial

from qlint.analysis.flow import arm_graphs, forwarded_items, left_graphs, returned_items
from qlint.analysis.flow import decorator_registries as registries
from qlint.analysis.flow.carried_flags import carried_mode
from qlint.analysis.flow.dead_branches import contradicted_at_call, open_ended
from qlint.analysis.flow.function_flows import CallSite, Capture, FunctionFlow
from qlint.analysis.flow.given_modes import wrapped_param
from qlint.analysis.flow.handed_parts import switch_handed_parts
from qlint.analysis.flow.handed_switches import handed_part_switches, handed_switches
from qlint.analysis.flow.held_slots import bind, switched_name
from qlint.analysis.flow.keyword_binding import bound_keywords, raises
from qlint.analysis.flow.loop_effects import handed_kinds, kinds_in
from qlint.analysis.flow.maybe_graphs import returned_paths
from qlint.analysis.flow.model_env import Env, merge_values, new_value
from qlint.analysis.flow.model_values import (
    APPLIED,
    CALL,
    CONTAINER,
    GRAPH_KINDS,
    PARAM,
    PARAM_PART,
    UNKNOWN_MODE,
    ModeFact,
    Obj,
    Origin,
    anchored,
)
from qlint.analysis.flow.part_modes import handed
from qlint.analysis.flow.returned_copies import carry, in_caller, through_copies
from qlint.analysis.flow.self_switches import switch_by_own_method, switch_own_fields
from qlint.analysis.names.scope import parameter_args
from qlint.value_classes import replace


def unread_result(sem, node: ast.Call, args: list, kwargs: dict) -> bool:
    """A call that is a statement of its own and hands the callee no value the walk follows
    (`main()` under `if __name__ == "__main__":`): what the callee does to its parameters,
    returns or captures can reach nothing here (a capture it returns reaches no prepare)."""
    stmts = sem.walk.stmt_stack
    if not stmts or not isinstance(stmts[-1], ast.Expr) or stmts[-1].value is not node:
        return False
    if any(isinstance(a, ast.Starred) for a in node.args) or any(kw.arg is None for kw in node.keywords):
        return False
    return all(a is None for a in args) and all(v is None for v in kwargs.values())


def site_only(sem, found, node: ast.Call) -> bool:
    """For such a call of a helper (`found`, from `callee`) not analysed yet: record the
    call (callers are looked up in `FunctionFlow.calls`, with the containers written in
    it) without analysing the helper, which only this call would have asked for so far.
    False when the call is to be read in full."""
    owner, callee, _, offset = found
    if offset or id(callee) in owner.memo.functions:
        return False
    if raises(callee, node):
        return True  # nothing of it runs: no call to record
    params = [p.arg for p in parameter_args(callee, star=False)]
    exprs = {i: arg for i, arg in enumerate(node.args)}
    exprs.update((i, kw.value) for i, kw in bound_keywords(callee, params, node))
    site = CallSite(callee, node, {i: _literal(sem, expr) for i, expr in exprs.items()}, exprs)
    if owner.scope.path == sem.flow.path:
        sem.flow.calls.append(site)
    else:
        sem.flow.foreign_calls.append((owner.scope.path, site))
    return True


def _param_flows(callee: FunctionFlow, index: int) -> set[str]:
    """The flows ("ptq", "qat") the captures of parameter `index` of `callee` reach."""
    found = {s.flow for s in callee.param_sinks.get(index, ())}
    for cap in callee.captures:
        if any(o.kind == PARAM and o.node is callee.node and o.index == index for o in cap.origins):
            found.update(s.flow for s in cap.sinks)
    return found


def apply(sem, node, callee: FunctionFlow, offset, receiver, args, kwargs, env: Env, selection=None) -> Obj | None:
    """The caller's view of a call to a summarised helper."""
    if raises(callee.node, node):  # `TypeError` before the body runs: none of it happens here
        return new_value(env, node, "", Origin(CALL, node))
    actual: dict[int, tuple[Obj | None, ast.expr | None]] = {}
    if offset:
        actual[0] = (receiver, node.func.value)
    for i, (obj, arg) in enumerate(zip(args, node.args, strict=True)):
        if not isinstance(arg, ast.Starred):
            actual[i + offset] = (obj, arg)
    for index, kw in bound_keywords(callee.node, callee.params, node):
        actual[index] = (kwargs[kw.arg], kw.value)
    given = {i: obj for i, (obj, _) in actual.items() if obj is not None}
    # Positions in another file mean nothing here: what a helper there did happened at this call.
    foreign = callee.path != sem.flow.path
    # An argument we cannot follow (`bundle.model`) is passed in an unknown mode.
    # A container written in the call passes the models it holds, in their modes.
    passed = {i: env.facts(obj) if obj is not None else _literal(sem, expr) for i, (obj, expr) in actual.items()}
    if any(f.parts for facts in passed.values() for f in facts):
        # A model with a part in another mode, handed to a helper that captures it for one
        # flow: its callers' facts are read in that flow's terms (`part_modes`).
        passed = {i: handed(facts, _param_flows(callee, i)) for i, facts in passed.items()}
    written = {i: expr for i, (_, expr) in actual.items()}
    held = _held(sem, given, passed, env) if _reads_parts(callee) else None
    origins = {i: obj.origins for i, obj in given.items()}
    site = CallSite(
        callee.node,
        node,
        passed,
        written,
        held=held,
        origins=origins,
        selection=selection,
        kept=callee.kept,
        itself=frozenset(callee.itself),
    )
    if not foreign:
        sem.flow.calls.append(site)
    else:
        sem.flow.foreign_calls.append((callee.path, site))
    if callee.param_switches:
        handed_switches(sem, node, callee, actual, written, env)
    if callee.part_switches:  # `set_train(h)` with `def set_train(x): x.core.train()`
        handed_part_switches(sem, node, callee, actual, sem.handed_fields.pop(id(node), None) or {}, env)
        switch_own_fields(sem, node, callee, actual, env)  # `set_train(self)`: `self.core` here
    if offset:
        switch_by_own_method(sem, node, callee, actual, env)  # `self.tune()`: `self.model` as it leaves it

    ended = open_ended(node)

    def ruled_out(fact: ModeFact) -> bool:
        return bool(fact.guard) and contradicted_at_call(
            fact.guard, callee.node, written, sem.resolver, callee.resolver, ended
        )

    def subst(facts: frozenset[ModeFact]) -> frozenset[ModeFact]:
        """Callee facts in caller terms: "as it came in" becomes the argument's modes here. A
        fact of an arm this call's arguments (or the defaults it leaves) rule out is none
        (`build_sam2(cfg)` with `mode="eval"` and `if mode == "eval": model.eval()`)."""
        out: set[ModeFact] = set()
        live = [f for f in facts if not ruled_out(f)] or facts  # no arm left: a guard misread
        for f in live:
            if f.state == "unknown":  # `set_mode(m, False)`: the helper's `m.train(training)`
                f = carried_mode(f, callee.node, written, ended, sem.walk.func)
            o = f.origin
            if f.state == "unset" and o is not None and o.kind == PARAM and o.node is callee.node and o.index in given:
                came = env.facts(given[o.index])
                for part in f.parts:  # `freeze_bn(model)`: the modules it switched, in the caller's model
                    if part.kinds is not None and not part.steps:
                        came = handed_kinds(sem, given[o.index], came, part, node, written[o.index])
                out |= came
            elif f.state == "unset" and o is not None and o.kind == registries.REGISTRY_RESULT:
                out |= registries.rekeyed_fact(f, callee.node, given, sem.walk.func, node, again())
            elif f.state == "unset" and o is not None and o.kind == APPLIED and id(o.node) in callee.applied:
                # `source_transform(model, [f, g])`: what `f` and `g` make of the model.
                came = callee.applied[id(o.node)]
                facts = env.facts(given[came]) if came in given else UNKNOWN_MODE
                made = sem.callbacks.made_of(actual.get(o.index, (None, None))[1], facts, node)
                out |= made if made is not None else {ModeFact("unset", node, Origin(CALL, node))}
            elif foreign:
                # A part's switch there is no node of this file to name (`part_modes`).
                out.add(replace(f, guard=frozenset(), node=node, parts=()))
            else:
                out.add(replace(f, guard=frozenset()))
        return frozenset(out)

    # `subst` recurses through a weak reference: a closure over itself is a reference
    # cycle, which would keep this check's flows alive until the cyclic collector runs.
    again = weakref.ref(subst)
    captures: dict[int, int] = {}

    def passed_here(passed: tuple, ret_env: Env) -> tuple:
        """The objects a construction in the helper was given, as the caller sees them: its
        own arguments, or the modes the helper left them in (one level: what they were
        given in turn is not followed)."""

        def one(label, obj: Obj | None) -> Obj | None:
            if obj is None:
                return None
            for name, param in callee.param_objs.items():
                if obj == param and callee.params.index(name) in given:
                    return given[callee.params.index(name)]
            origins = frozenset(
                anchored(o, node, callee.path, passed=()) if foreign else replace(o, passed=()) for o in obj.origins
            )
            out = Obj(node, f"passed {label}", origins, frozenset())
            env.modes[out] = subst(ret_env.facts(obj))
            return out

        args_, kwargs_ = passed
        return tuple(one(i, a) for i, a in enumerate(args_)), tuple((k, one(k, v)) for k, v in kwargs_)

    def translate(obj: Obj, ret_env: Env) -> Obj:
        for name, param in callee.param_objs.items():
            if obj == param and callee.params.index(name) in given:
                return given[callee.params.index(name)]
        origins, caps = set(), set()
        for o in obj.origins:
            if o.kind == PARAM and o.node is callee.node and o.index in given:
                origins |= given[o.index].origins
                caps |= given[o.index].captures
            elif o.kind in registries.KINDS:
                origins |= registries.rekeyed(o, callee.node, given, sem.walk.func, node)
            else:
                here = anchored(o, node, callee.path) if foreign else o
                if o.passed:  # what a construction was given, in caller terms too
                    here = replace(here, passed=passed_here(o.passed, ret_env))
                origins.add(here)
        for c in obj.captures:
            cap = callee.captures[c]
            if cap.sinks:
                continue  # it reaches prepare inside the helper: reported there
            if c not in captures:
                model, model_expr = actual.get(_param_index(cap, callee), (None, None))
                if model is None and (wrapped := wrapped_param(cap, callee)) in given:
                    # `export(W(m))`: a mode-free wrapper of what this call passes (`given_modes`).
                    model = Obj(node, "", given[wrapped].origins, frozenset())
                inner = (callee.path, cap.call, "the helper captures the model here")
                captures[c] = sem.capture(node, cap.api, model_expr, model, env, True, subst(cap.modes), inner)
            caps.add(captures[c])
        for index in callee.param_results.get(obj, ()):
            caps |= given[index].captures if index in given else frozenset()
        before = ret_env.facts(obj)
        # A container the helper built around its parameter holds what this call passes.
        origins, facts = bind(origins, before, subst(before), node, callee.node, subst, left, switchable, rest)
        out = Obj(node, "", frozenset(origins), frozenset(caps))
        env.modes[out] = facts
        return out

    def left(index: int) -> bool:
        """The call leaves parameter `index` to its default."""
        return index not in actual and not ended

    def switchable(index: int) -> bool:
        """What the call passes for parameter `index` is a name this function switches to train mode."""
        return index in written and switched_name(sem.walk.func, written[index])

    def rest(first: int) -> tuple[frozenset[ModeFact], bool] | None:
        """The modes of what the call passes from parameter position `first` on (a `*args`),
        and whether one of them is a name this function switches to train mode; None when one
        of them is not listed (`f(*xs)`) or has no value the walk follows."""
        extra = list(zip(args, node.args, strict=True))[max(first - offset, 0) :]
        if ended or any(obj is None for obj, _ in extra):
            return None
        moved = any(switched_name(sem.walk.func, expr) for _, expr in extra)
        return frozenset().union(*(env.facts(obj) for obj, _ in extra)), moved

    for index, sinks in callee.param_sinks.items():
        for sink in sinks if index in given else ():
            # `_prepare(ep)` with `def _prepare(ep, is_qat=False)`: its QAT arm cannot run.
            if not contradicted_at_call(sink.guard, callee.node, written, sem.resolver, callee.resolver, ended):
                sem.reach(given[index], sink)
                if sink.node in callee.rebuilt_sinks:
                    sem.results.rebuilt_in_helper(given[index], sink.node)
    for record in callee.callback_calls:
        sem.callbacks.passed(record, actual, env, node, callee)
    ends = callee.returns
    for name, param in callee.param_objs.items():
        index = callee.params.index(name)
        if index not in given or not ends:
            continue
        final = frozenset().union(*(e.facts(param) for e, _ in ends))
        if any(f.state != "unset" or f.origin is None or f.origin.kind != PARAM or kinds_in(f) for f in final):
            now = env.modes[given[index]] = subst(final)  # the helper sets the argument's mode
            sem.walk.containers.switched(given[index])
            if index in written and len(now) == 1 and all(f.state == "train" and not f.parts for f in now):
                # `w = Wrapper(m.encoder); train_it(m)`: what the wrapper holds is trained too,
                # named by the helper's switch, as the argument's mode is.
                sem.held_parts.trained_at(node, written[index], next(iter(now)).node, sem.walk, env)
            elif index in written and all(f.state == "eval" and not f.parts for f in now):
                sem.held_parts.restored_at(written[index], env)  # and back: as it was built
        if any(param in e.patched for e, _ in ends) and not _allow_ruled_out(sem, node, callee, index, written):
            env.patched |= {given[index]}
    switch_handed_parts(sem, node, callee, written, ruled_out, env)  # `make_train(model.bn)`
    # Only for a helper copying something (few): a closure costs its making at every call.
    origin_here = partial(in_caller, sem, node, callee, given, foreign, passed_here) if callee.copies else None
    returned_items.unpack(sem, node, callee, translate, origin_here, written, env)
    forwarded_items.hand_back(sem, node, callee, written, given, foreign)  # `return f(m)`, a tuple
    if callee.return_parts:  # `return {"model": gm}`
        left_graphs.unpack_parts(sem, node, callee, translate, env)
    if callee.left_fields:  # `prepare_core(m)` storing a graph in `m.core`
        left_graphs.hand_back(sem, node, callee, given, written, translate, env)
    results = [translate(obj, e) for e, obj in ends if obj is not None]
    if not results:
        return new_value(env, node, "", Origin(CALL, node))
    result = merge_values(results, env, node)
    if callee.copies:  # `return copy.deepcopy(gm)`, on every path or some
        params = callee.param_objs.values()
        arms, caller = callee.return_graphs, sem.resolver
        ruled = [arm_graphs.ruled_out(arms.get(i), callee, node, written, caller) for i in range(len(ends))]
        returned = [(e, obj, r) for (e, obj), r in zip(ends, ruled, strict=True)]
        ours = zip(results, [r for r in returned if r[1] is not None], strict=True)
        copies = [(r, through_copies(v, e, r, params, origin_here, ruled)) for r, (e, v, ruled) in ours]
        if any(through for _, through in copies) and result not in given.values():  # (not the caller's own)
            carry(result, copies, env)
            sem.flow.copies = True  # and this function's returns may hand it on
    if callee.returned_fields:  # `return Wrap(gm)`
        left_graphs.hand_back_result(sem, node, callee, result, translate, env)
    sem.results.note(result, None)
    if callee.allowed_returns:  # `allow_exported_model_train_eval(gm); return gm`: allowed here too
        env.patched |= {result}
    # The graphs the helper's returns hand back, on the branches of the call's arguments
    # (an allowed one is no path to a raise); what it was given keeps the paths it had.
    here = frozenset(sem.walk.guards)
    paths = returned_paths(callee, node, written, sem.resolver, foreign, sem.walk.func)
    for origin, guard in paths:
        sem.made_graphs.setdefault(origin, set()).add(guard | here)
    if callee.copies:  # `return f(m, is_qat)`: the arm `f` hands a graph back on, in our terms
        arm_graphs.forwarded(sem, node, callee, written, given, result, paths)
    # The others of another file's helper are named for this call too: none of their
    # paths reaches here, which `note_made` must not take for a graph made at the call.
    for origin in result.origins if foreign else ():
        if origin.node is node and origin.kind in GRAPH_KINDS:
            sem.made_graphs.setdefault(origin, set())
    return result


def _allow_ruled_out(sem, node: ast.Call, callee: FunctionFlow, index: int, written: dict) -> bool:
    """The callee allows parameter `index` only under flags this call's arguments rule out
    (`def evaluate(m, is_graph=False): if is_graph: allow(m)` called as `evaluate(gm)`)."""
    guard = callee.param_allows.get(index)
    return bool(guard) and contradicted_at_call(
        guard, callee.node, written, sem.resolver, callee.resolver, open_ended(node)
    )


def _held(sem, given: dict[int, Obj], passed: dict, env: Env) -> dict | None:
    """What the bundles a helper's call passes hold (`held_contents`), by parameter."""
    out = None
    for i, obj in given.items():
        if not any(o.passed for o in obj.origins):
            continue  # no construction given anything: most arguments
        literals, overwritten = sem.walk.containers.literals, sem.builds.overwritten
        from qlint.analysis.flow.held_contents import held_facts

        facts = held_facts(obj, env, sem.owner.stored_fields, literals, overwritten)
        if facts is not passed[i]:
            out = out if out is not None else {}
            out[i] = facts
    return out


def _literal(sem, expr: ast.expr | None) -> frozenset[ModeFact]:
    items = sem.literal_items.get(id(expr)) if expr is not None else None
    if items is None:
        return UNKNOWN_MODE
    return frozenset({ModeFact("unset", expr, Origin(CONTAINER, expr, items=items))})


def _reads_parts(callee: FunctionFlow) -> bool:
    """The helper captures a part of a parameter itself (`artifact.model`): only then is what
    a bundle it is handed holds worth recording (`caller_verdicts` vouches for no other)."""
    return any(
        f.origin is not None and f.origin.kind == PARAM_PART and f.origin.owner is callee.node
        for cap in callee.captures
        for f in cap.modes
    )


def _param_index(cap: Capture, callee: FunctionFlow) -> int | None:
    for o in cap.origins:
        if o.kind == PARAM and o.node is callee.node:
            return o.index
    return None


__all__ = ["apply", "site_only", "unread_result"]

"""What calls of the libraries do to the models of a walk: the export, PT2E and ExecuTorch
APIs `model_apis` names (`api_call`), and the methods of the values they make or the walk
tracks (`method_call`: `Module.eval()`/`.train()`, `ExportedProgram.module()`,
`ExportSession.export()`, a dict of models' `.items()`).

Both are asked by `model_calls.CallSemantics` (`sem`) and record into it: it is not imported
here, so that this module knows neither the call semantics nor the walk above it.
"""

from __future__ import annotations

import ast

from qlint.analysis.caught_errors import catches
from qlint.analysis.flow import arm_graphs
from qlint.analysis.flow.function_flows import ModeSwitch, Sink
from qlint.analysis.flow.init_parts import refresh
from qlint.analysis.flow.maybe_graphs import graph_paths, reaching, tests_type
from qlint.analysis.flow.model_apis import Api, argument, classify_call, key, recipe_flow, switch_mode
from qlint.analysis.flow.model_env import Env, new_value
from qlint.analysis.flow.model_torch_nn import MODE_KEEPING_METHODS
from qlint.analysis.flow.model_values import (
    CALL,
    CONVERTED,
    EXPECTS_ERROR,
    EXPORTED,
    ITEM,
    PAIRS,
    PARAM,
    PREPARED,
    PREPARED_QAT,
    PROGRAM,
    VALUES,
    ModeFact,
    Obj,
    Origin,
    part_of,
)
from qlint.analysis.flow.part_switches import part_switch
from qlint.analysis.flow.self_switches import switch_own_module
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import unique_value

_ITEMS = frozenset({"items", "values", "get", "pop", "__getitem__"})  # of a dict of models
_ITEM_STEPS = {"items": (PAIRS,), "values": (VALUES,)}  # the others take one item
_PT2E_RESULT = {"prepare": PREPARED, "prepare_qat": PREPARED_QAT, "convert": CONVERTED}


def api_call(sem, node: ast.Call, api: Api, first: Obj | None, kwargs: dict, env: Env) -> Obj | None:
    arg = first if first is not None else next((kwargs[k] for k in api.model_keywords if k in kwargs), None)
    if api.kind == "capture":
        index = sem.capture(node, api.name, argument(node, 0, api.model_keywords), arg, env)
        kind = EXPORTED if api.returns_module else PROGRAM
        return new_value(env, node, "", Origin(kind, node), captures={index})
    if api.kind == "executorch":
        # ExecuTorch's QuantizeStage captures without eval() when the recipe is PTQ.
        recipe = recipe_flow(argument(node, 2, ("export_recipe",)), sem.resolver, sem.walk.qualname)
        model_expr = argument(node, 0, api.model_keywords)
        session = new_value(env, node, "", Origin(CALL, node))
        if recipe is not None and model_expr is not None:
            if api.name.endswith("ExportSession"):
                sem.sessions[session] = (node, model_expr, arg, recipe)
            else:
                index = sem.capture(node, api.name, model_expr, arg, env)
                sem.flow.captures[index].sinks.add(Sink("ptq", *recipe, frozenset(sem.walk.guards)))
        return session
    if api.kind in _PT2E_RESULT:
        # `prepare_pt2e(gm, SomeQuantizer(is_qat=True))` simulates QAT: neither flow is certain.
        qat_quantizer = api.kind == "prepare" and _is_qat_quantizer(sem.resolver, argument(node, 1, ("quantizer",)))
        if arg is not None and api.kind != "convert" and not qat_quantizer:
            sem.reach(arg, Sink("ptq" if api.kind == "prepare" else "qat", node, sem.flow.path))
        captures = arg.captures if arg is not None else frozenset()
        if api.kind == "convert" and arg is not None:
            sem.results.rebuilt_for_conversion(arg)
        result = new_value(env, node, "", Origin(_PT2E_RESULT[api.kind], node), captures=captures)
        sem.results.note(result, arg)
        return result
    if api.kind == "allow_train_eval" and arg is not None:
        env.patched |= {arg}
        handler = absent_allow(sem.walk, node, api)
        if handler is not None:
            sem.walk.try_bodies[-1][1].add(arg)
            sem.walk.absent_allows[arg] = (node, handler)  # for QL203's message
            return arg
        guard, known = frozenset(sem.walk.guards), sem.allow_guards.get(arg)
        guard = sem.allow_guards[arg] = guard if known is None or known == guard else frozenset()
        for origin in arg.origins if len(arg.origins) == 1 else ():
            if origin.kind == PARAM and origin.node is sem.walk.func:
                sem.flow.param_allows[origin.index] = guard
    if api.kind == "move" and arg is not None:
        # The torchao helpers are how an exported graph changes mode: a later re-export
        # captures it in that mode.
        mode = "train" if api.name.endswith("_train") else "eval"
        env.modes[arg] = frozenset({ModeFact(mode, node)})
        if mode == "train":
            sem.retrain(arg, node)
        else:
            sem.results.rebuilt_for_conversion(arg)
    if api.kind == "load_program":
        return new_value(env, node, "", Origin(PROGRAM, node))
    if api.kind == "copy" and arg is not None:
        obj = Obj(node, "", arg.origins, arg.captures)
        env.modes[obj] = env.facts(arg)
        # Measured on torch 2.13/torchao 0.18: `deepcopy`/`copy` of a graph from `.module()`,
        # `prepare_pt2e` or `convert_pt2e` (allowed or not) switches modes without raising.
        env.copied |= {obj}
        sem.flow.copies = True  # what it returns may be this copy (`returned_copies`)
        return obj
    return arg  # move_exported_model_to_eval/train, allow_exported_model_train_eval return the model


def chosen_prepare(sem, func: ast.expr) -> tuple[ast.expr, Api, Api] | None:
    """`prepare = prepare_qat_pt2e if qat else prepare_pt2e` then `prepare(gm, q)`, or the choice
    called where it is written: the test and each arm's prepare API. A name bound once in this
    function, and arms that both name `prepare_pt2e`/`prepare_qat_pt2e`; None otherwise (the
    call is then read as any other)."""
    choice = func
    if isinstance(func, ast.Name):
        values = sem.resolver.local.get(func.id)
        choice = unique_value(values) if values and len(values) == 1 else None
    if not isinstance(choice, ast.IfExp):
        return None
    apis = [classify_call(sem.walk.qualname(arm), arm) for arm in (choice.body, choice.orelse)]
    if any(api is None or api.kind not in ("prepare", "prepare_qat") for api in apis):
        return None
    return choice.test, apis[0], apis[1]


def either_prepare(sem, node: ast.Call, chosen: tuple[ast.expr, Api, Api], first: Obj | None, kwargs: dict, env):
    """The call of a prepare API chosen by `chosen`'s test: the captured program reaches each
    arm's flow under that arm's side of the test (a test the walk cannot name: both, as an `if`
    it cannot name), so a caller's argument rules one out as it does for `if qat: ... else: ...`.
    The result is a prepared graph either way (QL203 reads both kinds alike); it is read as a
    QAT graph only when both arms are QAT."""
    test, *apis = chosen
    arg = first if first is not None else next((kwargs[k] for k in apis[0].model_keywords if k in kwargs), None)
    qat_quantizer = _is_qat_quantizer(sem.resolver, argument(node, 1, ("quantizer",)))
    condition = sem.walk.condition(test)
    guards = sem.walk.guards
    for api, polarity in zip(apis, (True, False), strict=True):
        if arg is None or (api.kind == "prepare" and qat_quantizer):
            continue  # `prepare_pt2e(gm, SomeQuantizer(is_qat=True))` simulates QAT, as in `api_call`
        pushed = [(condition[0], condition[1] == polarity)] if condition is not None else []
        guards.extend(pushed)
        try:
            sem.reach(arg, Sink("ptq" if api.kind == "prepare" else "qat", node, sem.flow.path))
        finally:
            del guards[len(guards) - len(pushed) :]
    kind = PREPARED_QAT if all(api.kind == "prepare_qat" for api in apis) else PREPARED
    result = new_value(env, node, "", Origin(kind, node), captures=arg.captures if arg is not None else frozenset())
    sem.results.note(result, arg)
    return result


_NO_ALLOW = ("torch.ao.", "torch.quantization.")  # torch 2.13 has it in torchao only
_CATCH_ATTRIBUTE = frozenset({"AttributeError", "Exception", "BaseException"})


def absent_allow(walk, node: ast.Call, api: Api) -> ast.ExceptHandler | None:
    """`torch.ao.quantization.allow_exported_model_train_eval(gm)` in a `try` body whose handler
    catches the AttributeError: torch 2.13's torch.ao has no such function, so the lookup raises,
    the handler swallows it and the graph goes on refusing `.eval()`/`.train()`. The rest of the
    body does not run on 2.13 (it stays allowed there); after the `try`, the graph is not.
    Outside such a `try` the call raises out of the code that follows it (QL401 reports it).
    The handler that swallows it, else None."""
    if not walk.try_bodies or not api.name.startswith(_NO_ALLOW) or not isinstance(node.func, ast.Attribute):
        return None
    return next((h for h in walk.try_bodies[-1][0].handlers if catches(h, _CATCH_ATTRIBUTE)), None)


def method_call(sem, node: ast.Call, attr: str, receiver: Obj, env: Env):
    """A method of a tracked value; False when it is not one we know."""
    if attr in ("eval", "train"):
        mode = switch_mode(node, attr)
        seen = sem.switch_index.get(id(node))
        if seen is None:  # a loop body runs twice: merge what both passes saw
            guard = frozenset(sem.walk.guards)
            seen = sem.switch_index[id(node)] = ModeSwitch(node, node.func.value, mode, frozenset(), False, guard)
            sem.flow.switches.append(seen)
        copies = env.partly_copied.get(receiver) if env.partly_copied else None
        # A copy's `eval`/`train` are the plain module's again: they raise nothing.
        other = receiver in env.copied or EXPECTS_ERROR in sem.walk.contexts
        if sem.held_graphs and (arms := sem.held_graphs.get(receiver)):
            # `e = m if is_qat else copy.deepcopy(m)`, then `if not is_qat: e.eval()`: the copy.
            unreached = arm_graphs.unreached(arms, sem.walk.guards)
            copies = (copies or frozenset()) | unreached
            other = other or (bool(unreached) and unreached >= receiver.origins)
        if copies or seen.copies:
            kept = (seen.origins - seen.copies) | (receiver.origins - (copies or frozenset()))
            seen.copies = (seen.origins | receiver.origins) - kept
        seen.origins |= receiver.origins
        if EXPECTS_ERROR not in sem.walk.contexts:
            seen.held |= sem.containers.live(receiver, env)
        if other or receiver in env.patched:
            under = frozenset() if other else sem.allow_guards.get(receiver, frozenset())
            # Seen patched twice (a loop body) under different branches: take it as always.
            seen.allowed_under = under if not seen.patched or seen.allowed_under == under else frozenset()
            seen.patched = True
        if not other and receiver not in env.patched and "try" not in sem.walk.contexts:
            paths = graph_paths(receiver, env, sem.made_graphs, held=sem.held_graphs)
            if paths and not tests_type(sem.walk.func, node.func.value):
                seen.maybe |= reaching(paths, sem.walk.guards, sem.walk.denied())
        if not other and receiver not in env.patched and seen.absent_allow is None:
            seen.absent_allow = sem.walk.absent_allow_of(receiver, seen.held | seen.maybe)
        env.modes[receiver] = frozenset({ModeFact(mode or "unknown", node)})
        sem.walk.containers.switched(receiver)
        if mode == "train":
            sem.held_parts.switched(node, sem.walk, env)  # `w = Wrapper(m.encoder); m.train()`
        else:
            sem.held_parts.restored(node, env, sem.walk)  # then `m.eval()`: as it was built
        part_switch(sem, node, mode, env)  # `m.eval(); m.encoder.train()`: that part's mode
        refresh(sem, receiver, env)  # `net = holder.model; holder.eval()`: net is evaled too (`init_parts`)
        switch_own_module(sem, node, receiver, mode, env)  # `self.eval()`: `self.model` too
        if mode == "train" and receiver in env.patched:  # after allow_exported_model_train_eval
            sem.retrain(receiver, node)
        return receiver
    if attr in MODE_KEEPING_METHODS:  # `train`/`eval` are read above
        return receiver
    if attr in _ITEMS and (part := part_of(receiver, node, (_ITEM_STEPS.get(attr, (ITEM,)),))) is not None:
        return new_value(env, node, "", part)
    if attr in ("module", "run_decompositions") and PROGRAM in receiver.kinds:
        kind = EXPORTED if attr == "module" else PROGRAM
        return new_value(env, node, "", Origin(kind, node), captures=receiver.captures)
    if attr in ("module", "run_decompositions") and PARAM in receiver.kinds:
        # A helper handed the caller's ExportedProgram: what it prepares is the caller's capture.
        obj = Obj(node, "", receiver.origins, receiver.captures)
        env.modes[obj] = frozenset({ModeFact("unset", node, Origin(CALL, node))})
        return obj
    if attr == "export" and receiver in sem.sessions:
        ctor, model_expr, model, recipe = sem.sessions[receiver]
        bound = key(model_expr) is not None and env.vars.get(key(model_expr)) == model
        note = "the session is created here; its QuantizeStage captures the model"
        index = sem.capture(node, "executorch.export.ExportSession", model_expr, model, env, bound)
        cap = sem.flow.captures[index]
        cap.inner = (sem.flow.path, ctor, note)
        cap.sinks.add(Sink("ptq", *recipe, frozenset(sem.walk.guards)))
        return new_value(env, node, "", Origin(CALL, node))
    return False


def _is_qat_quantizer(resolver: Resolver, expr: ast.expr | None) -> bool:
    located = resolver.value_of(expr) if expr is not None else None
    call = located.node if located is not None else None
    return isinstance(call, ast.Call) and any(
        kw.arg == "is_qat" and isinstance(kw.value, ast.Constant) and kw.value.value is True for kw in call.keywords
    )


__all__ = ["api_call", "chosen_prepare", "either_prepare", "method_call"]

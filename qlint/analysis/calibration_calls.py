"""The calls of the calibration walk: what calling something does to the prepared models a
body holds. A PT2E API makes, converts or moves them (`model_apis.classify_call`); a helper of
the module or project is summarised once and its summary applied (which parameters it runs,
converts and returns); a method of a model, a closure that names one or an unknown function
may run what it is given.

Functions of the walker (`calibration_walk.Walker`, their `walker`) that walks the body:
calls are where the walk meets other functions (their summaries, the project's call graph),
while the walker follows one body's statements and values. Each side calls the other: the
walker's `expr` and `stmt` hand calls here, and these evaluate arguments with `walker.expr`
and record their effects with `walker.ran` and `walker.convert`.
"""

from __future__ import annotations

import ast

from qlint.analysis import calibration_effects as fx
from qlint.analysis import converted_programs as lowered
from qlint.analysis.calibration import (
    CONVERTED,
    PARAM,
    PREPARED,
    QAT,
    QAT_CONFIG,
    Env,
    Summary,
    Token,
    holds_models,
    qat_configs,
)
from qlint.analysis.flow.keyword_binding import bound_keywords, raises, unread_keywords
from qlint.analysis.flow.model_apis import argument, classify_call
from qlint.analysis.flow.model_torch_nn import SELF_RETURNING_METHODS

# What an argument may do beyond naming variables (a call, a binding, a yield, an await).
_EFFECTFUL = frozenset({ast.Call, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await})


def call(walker, node: ast.Call, env: Env, discarded: bool = False) -> frozenset[Token]:
    """`discarded`: a statement of its own, whose result nothing reads."""
    func = node.func
    # Names that hold tokens are looked up, not collected: bodies bind hundreds of names
    # and make thousands of calls.
    held = env.vars
    if fx.inert_attribute_chain(func, held):
        evaluate_args(walker, node, env, escape=False)
        return frozenset()
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and held.get(func.value.id):
        receiver = env.vars[func.value.id]
        qat = qat_configs(evaluate_args(walker, node, env, escape=True).values()) | qat_keyword(walker, node)
        if qat:  # `quantizer.set_global(qat_config)`: the quantizer is QAT from here on
            receiver = env.vars[func.value.id] = receiver | qat
        if func.attr in SELF_RETURNING_METHODS:
            return receiver
        if func.attr not in fx.INERT_METHODS:
            walker.ran(env, receiver, executed=func.attr in ("forward", "__call__"))
        return qat_configs([receiver]) | derived(receiver, lowered.is_lowering_method(func.attr))
    if isinstance(func, ast.Name) and held.get(func.id):
        evaluate_args(walker, node, env, escape=True)
        walker.ran(env, env.vars[func.id], executed=True)
        return frozenset()
    receiver: frozenset[Token] = frozenset()
    if not isinstance(func, (ast.Name, ast.Attribute)):
        walker.ran(env, walker.expr(func, env), executed=True)  # `program.module()(x)`: called on data
    elif isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Name):
        receiver = walker.expr(func.value, env)  # `XNNPACKQuantizer().set_global(config)`
        if receiver and func.attr in SELF_RETURNING_METHODS:
            # `copy.deepcopy(prepared).cpu()`: the module itself, as for a name's `.cpu()`.
            return receiver | qat_configs(evaluate_args(walker, node, env, escape=True).values())
    name = walker.resolver.qualname(func)
    api = classify_call(name, func)
    if api is not None:
        return pt2e_api(walker, node, api, env)
    if fx.is_inert_function(name, func):
        evaluate_args(walker, node, env, escape=False)
        return frozenset()
    closure(walker, func, env)
    if discarded and hands_nothing(walker, node, receiver, env):
        # No model goes in, none comes out, no quantizer turns QAT: whatever the callee
        # does, this body's summary is the same, so the callee's is not worked out
        # (`self.assertEqual(...)`, `logger.info(...)` resolved through class hierarchies).
        return frozenset()
    summary, offset = helper(walker, func, name)
    if summary is None:
        values = evaluate_args(walker, node, env, escape=True)  # an unknown function may run what it is given
        # A builder or setter of quantizers and configs passes QAT-ness on.
        qat = qat_configs([receiver, *values.values()]) | qat_keyword(walker, node)
        holder = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
        if qat and holder is not None and (holder in env.vars or holder in walker.resolver.local):
            env.vars[holder] = env.vars.get(holder, frozenset()) | qat  # `quantizer.set_global(config)`
        first = values.get(node.args[0], frozenset()) if node.args else frozenset()
        return (
            qat
            | derived(first, lowered.is_lowering_function(name))
            | derived(receiver, isinstance(func, ast.Attribute) and lowered.is_lowering_method(func.attr))
        )
    if raises(summary.node, node, offset):
        # `TypeError` before the body runs: nothing of it happens, and no statement after
        # this one on the path (the walker ends it when the call is the statement's own).
        evaluate_args(walker, node, env, escape=False)
        walker.raised = node
        return frozenset()
    unread = unread_keywords(summary.node, summary.params, node)
    return apply(walker, node, summary, offset, env, unread) | qat_keyword(walker, node, unread)


def hands_nothing(walker, node: ast.Call, receiver: frozenset[Token], env: Env) -> bool:
    """Whether evaluating the call's arguments and handing them over has no effect here and
    makes no token: no argument names a variable holding one, calls anything, binds a name
    or passes `is_qat=`, and the receiver holds no QAT quantizer."""
    if qat_configs([receiver]) or fx.passes_is_qat(node):
        return False
    held = env.vars
    for arg in (*node.args, *(kw.value for kw in node.keywords)):
        for sub in ast.walk(arg):
            kind = type(sub)
            if kind is ast.Name:
                if held.get(sub.id):
                    return False
            elif kind in _EFFECTFUL:
                return False
    return True


def qat_keyword(walker, node: ast.Call, unread: set[int] = frozenset()) -> frozenset[Token]:
    """`unread`: keywords the callee drops (`keyword_binding.unread_keywords`), such as an
    `is_qat=` that fills no parameter and lands in a `**` the body never names."""
    qat = fx.passes_is_qat(node) and not any(id(kw) in unread for kw in node.keywords if kw.arg == "is_qat")
    return frozenset({Token(QAT_CONFIG, node, walker.scope.path)}) if qat else frozenset()


def closure(walker, func: ast.expr, env: Env) -> None:
    """A nested function or lambda of this body, or (from module level) a function of this
    module, reads the prepared model by name: calling it may run the model."""
    if not isinstance(func, ast.Name) or not holds_models(env):
        return
    body = walker.nested.get(func.id)
    if body is None and func.id in walker.resolver.local:
        body = next((v for v in walker.resolver.local[func.id] if isinstance(v, ast.Lambda)), None)
    if body is None and isinstance(walker.func, ast.Module):
        body = walker.scope.functions.get(func.id)
    if body is not None:
        names = fx.free_names(body)
        walker.ran(env, walker.names(env, names), executed=bool(names & fx.called_names(body)))


def evaluate_args(walker, node: ast.Call, env: Env, escape: bool) -> dict[ast.expr, frozenset[Token]]:
    values = {a: walker.expr(a.value if isinstance(a, ast.Starred) else a, env) for a in node.args}
    values.update({kw.value: walker.expr(kw.value, env) for kw in node.keywords})
    if escape:
        for tokens in values.values():
            walker.ran(env, tokens)
    return values


def pt2e_api(walker, node: ast.Call, api, env: Env) -> frozenset[Token]:
    first = argument(node, 0, api.model_keywords)
    if api.kind in ("convert", "move", "allow_train_eval", "copy"):
        values = evaluate_args(walker, node, env, escape=False)
        tokens = values.get(first, frozenset()) if first is not None else frozenset()
        if api.kind != "convert":
            return tokens
        result = Token(CONVERTED, node, walker.scope.path)
        walker.convert(node, node, walker.scope.path, tokens, frozenset({result}), env)
        return frozenset({result})
    if api.kind == "prepare":
        values = evaluate_args(walker, node, env, escape=True)
        quantizer = argument(node, 1, ("quantizer",))
        if qat_configs([values.get(quantizer, frozenset())]) or global_qat(walker, quantizer, env):
            return frozenset({Token(QAT, node, walker.scope.path)})  # a training loop runs it
        return frozenset({Token(PREPARED, node, walker.scope.path)})
    values = evaluate_args(walker, node, env, escape=True)  # capture, sessions: treat as a use
    if api.kind == "capture" and first is not None:
        return derived(values.get(first, frozenset()), True)  # `export(converted)`
    if api.kind != "prepare_qat":
        return frozenset()
    token = Token(QAT, node, walker.scope.path)
    walker.own_qat.add(token)
    return frozenset({token})


def derived(tokens: frozenset[Token], lowering: bool) -> frozenset[Token]:
    """A program exported or lowered from a converted model stands for it (`converted_programs`)."""
    return lowered.standing_for(tokens, (CONVERTED, PARAM)) if lowering else frozenset()


def global_qat(walker, quantizer: ast.expr | None, env: Env) -> bool:
    """A module-level quantizer used in a function: what the module binds it to."""
    if not isinstance(quantizer, ast.Name) or quantizer.id in env.vars or isinstance(walker.func, ast.Module):
        return False
    return fx.quantizer_is_qat(quantizer, walker.scope.assigns)


def helper(walker, func: ast.expr, name: str | None) -> tuple[Summary | None, int]:
    """The summary of a function of this module or project, and 1 when `self` or `cls`
    fills a parameter (`name`: the callee's qualified name, as `call` resolved it)."""
    if isinstance(func, ast.Name) and func.id in walker.nested:
        return walker.owner.summary(walker.nested[func.id], walker.scope, None, walker.depth + 1), 0
    if isinstance(func, ast.Name) and func.id in walker.resolver.local:
        return None, 0
    name = name or ""
    if name.startswith(("torch.", "torchao.", "executorch.exir")):
        return None, 0
    try:
        found = walker.owner.callgraph.definition(func, walker.resolver, functions_only=True)
    except RecursionError:
        walker.owner.unsettled()
        found = None
    if found is None or not isinstance(found[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None, 0
    node, scope, cls = found
    on_self = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
    bound = on_self and func.value.id in ("self", "cls")
    kinds = {d.id for d in node.decorator_list if isinstance(d, ast.Name)}
    # `cls` fills a classmethod's first parameter on whatever it is called (`Builder.make(m)`).
    offset = 1 if "classmethod" in kinds else int(bound and "staticmethod" not in kinds)
    return walker.owner.summary(node, scope, cls, walker.depth + 1), offset


def apply(walker, node: ast.Call, callee: Summary, offset: int, env: Env, unread: set[int]) -> frozenset[Token]:
    """A keyword fills the parameter Python binds it to (`keyword_binding`): not a
    positional-only one of its name, whose value lands in the callee's `**`, where it may run
    unless the body never names that dict (`unread`)."""
    given: dict[int, frozenset[Token]] = {}
    for i, arg in enumerate(node.args):
        tokens = walker.expr(arg.value if isinstance(arg, ast.Starred) else arg, env)
        if isinstance(arg, ast.Starred) or any(isinstance(a, ast.Starred) for a in node.args[:i]):
            walker.ran(env, tokens)  # position unknown behind `*args`
        else:
            given[i + offset] = tokens
    filled = {id(kw): i for i, kw in bound_keywords(callee.node, callee.params, node)}
    for kw in node.keywords:
        tokens = walker.expr(kw.value, env)
        if id(kw) in filled:
            given[filled[id(kw)]] = tokens
        elif id(kw) not in unread:
            walker.ran(env, tokens)
    before = env.copy()
    for index, tokens in given.items():
        if index >= len(callee.params):
            walker.ran(env, tokens)
            continue
        if index in callee.converts:
            results = {t for t in callee.returns if t.kind == CONVERTED}
            convert = callee.converts[index]
            name = getattr(callee.node, "name", "")
            inside = any(t.kind == CONVERTED and t.path == callee.path for t in callee.executed)
            walker.convert(node, convert, callee.path, tokens, frozenset(results), before, name, inside)
        if index in callee.runs:
            walker.ran(env, tokens, executed=index in callee.executes)
    out: set[Token] = set()
    # `return prepare_qat_pt2e(...) if is_qat else prepare_pt2e(...)`: which one this call
    # gets depends on its arguments; a QAT model is trained, so stay quiet on both.
    qat = any(t.kind == QAT for t in callee.returns)
    for t in callee.returns:
        if qat and t.kind == PREPARED:
            continue
        if t.kind == PARAM and t.node is callee.node:
            out |= given.get(t.index, frozenset())
        elif t.kind == PREPARED and not t.helper:
            out.add(Token(PREPARED, t.node, t.path, helper=getattr(callee.node, "name", "")))
        else:
            out.add(t)
    return frozenset(out)

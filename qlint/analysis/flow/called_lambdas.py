"""Calls of a local name bound once to a lambda, read right where they run (issue 14).

`prep = lambda m: m.train(); prep(model)` switches `model` as `model.train()` would; with
`prep(model.bn)`, the model's `bn` part. A lambda called by name runs its body at the call,
with its parameters bound to the call's arguments and the other names as they are there, so
the walk reads the body at the call with that binding (a part handed in stays linked to its
model, `held_parts`), and what the body does to the models it reaches is what the call does.

Only a lambda the function binds once, by `name = lambda ...` (no parameter of that name, no
second binding, `called_locals`' test), whose parameters the call fills by position or
keyword with no `*args`/`**kwargs` on either side. A body that branches on a parameter
(`m.train() if flag else m`) is not read: the flag's value at the call is not followed here,
so such a call stays what an unknown callable's is, as does any other callable.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_env import Env, new_value
from qlint.analysis.flow.model_values import CALL, UNKNOWN, Obj, Origin
from qlint.analysis.names.scope import unique_value
from qlint.value_classes import replace


def called_lambda(sem, func: ast.expr) -> ast.Lambda | None:
    """The lambda a call's name is bound to once in this function, or None."""
    if not isinstance(func, ast.Name):
        return None
    values = sem.resolver.local.get(func.id)
    if not values or len(values) != 1:
        return None
    lam = unique_value(values)
    if not isinstance(lam, ast.Lambda) or id(lam) in sem.lambdas.running or not _plain(lam):
        return None  # (a lambda calling itself: its inner call is read as an unknown one)
    return lam


def run_lambda(sem, node: ast.Call, lam: ast.Lambda, args: list, kwargs: dict, env: Env) -> Obj | None:
    """The value of `node`, a call of `lam`, after reading its body with the call's arguments
    (`args`, `kwargs`: their values, None where the walk follows none); what the body does to
    the models it reaches is kept in `env`. None when the call does not fill the parameters
    as written (the call is then read as any other)."""
    if any(isinstance(a, ast.Starred) for a in node.args) or any(kw.arg is None for kw in node.keywords):
        return None
    names = [a.arg for a in lam.args.args]
    if len(node.args) > len(names):
        return None
    bound: dict[str, tuple[Obj | None, ast.expr]] = {}
    for name, value, expr in zip(names, args, node.args, strict=False):
        bound[name] = (value, expr)
    for kw in node.keywords:
        if kw.arg not in names or kw.arg in bound:
            return None
        bound[kw.arg] = (kwargs.get(kw.arg), kw.value)
    if len(bound) != len(names):
        return None  # a parameter left unfilled: the call raises
    inner = env.copy()
    for name in names:  # the lambda's parameters shadow the enclosing names
        prefix = name + "."
        for held in [n for n in inner.vars if n == name or n.startswith(prefix)]:
            del inner.vars[held]
    walk = sem.walk
    linked: dict[str, ast.expr] = {}  # parameters bound to a part: the part as the call writes it
    roots = set()
    for name, (value, expr) in bound.items():
        # `prep(model.bn)`: the part has no value of its own; bound to a name linked to it.
        reached = (
            sem.held_parts.path(expr, env, items=True) if isinstance(expr, (ast.Attribute, ast.Subscript)) else None
        )
        if value is None and reached is not None:
            value = new_value(inner, expr, name, Origin(UNKNOWN, expr))
        if value is not None:
            inner.vars[name] = value
            if reached is not None:
                sem.held_parts.bound(name, reached, inner)
                linked[name] = expr
                roots.add(reached[0])
    lambdas = sem.lambdas
    lambdas.depth += 1  # a capture in the body gets no fix: its names are the lambda's
    lambdas.running.add(id(lam))
    try:
        result = walk.expr(lam.body, inner)
    finally:
        lambdas.depth -= 1
        lambdas.running.discard(id(lam))
    for root in roots:  # `prep(model.bn)` switched `model.bn`: named so, at the call
        if root in inner.modes:
            inner.modes[root] = frozenset(_named_at_call(f, lam, node, linked) for f in inner.modes[root])
    env.modes, env.patched, env.copied = inner.modes, inner.patched, inner.copied
    env.partly_copied = inner.partly_copied
    return result if result is not None else new_value(env, node, "", Origin(CALL, node))


def _named_at_call(fact, lam: ast.Lambda, node: ast.Call, linked: dict[str, ast.expr]):
    """`fact` with the part switches the body made through a parameter bound to a part
    (`m.train()` for `prep(model.bn)`) named as the call writes the part, switched by the call."""
    if not fact.parts:
        return fact
    inside = {id(n) for n in ast.walk(lam.body)}
    parts = []
    for part in fact.parts:
        receiver = part.switch.func.value if isinstance(part.switch.func, ast.Attribute) else None
        if part.over is None and id(part.switch) in inside and isinstance(receiver, ast.Name):
            expr = linked.get(receiver.id)
            if expr is not None:
                part = replace(part, switch=node, over=expr)
        parts.append(part)
    return replace(fact, parts=tuple(parts))


def _plain(lam: ast.Lambda) -> bool:
    """Positional-or-keyword parameters only, with no defaults, and a body that branches on none."""
    a = lam.args
    if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults:
        return False
    params = {p.arg for p in a.args}
    for node in ast.walk(lam.body):
        test = node.test if isinstance(node, ast.IfExp) else node if isinstance(node, ast.BoolOp) else None
        if test is not None and any(isinstance(n, ast.Name) and n.id in params for n in ast.walk(test)):
            return False
    return True


__all__ = ["called_lambda", "run_lambda"]

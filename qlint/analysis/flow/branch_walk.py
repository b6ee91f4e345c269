"""The walk of branches (`if`, `a if c else b`) for `model_interp`: both arms run on copies of
the environment, each with its condition pushed as a guard, and the facts only one arm made
are tagged with that arm's condition before the join.

`walk` is the function's walk (`model_interp.Interpreter`, not imported: it imports this).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow import arm_graphs
from qlint.analysis.flow.dead_branches import condition_of
from qlint.analysis.flow.graph_instances import graph_instance_truth
from qlint.analysis.flow.model_env import Env, fill_unread, join
from qlint.analysis.flow.model_values import ModeFact


def known_truth(walk, test: ast.expr, env: Env) -> bool | None:
    """The truth of a test this body decides: a constant flag (`dead_branches`), or an
    `isinstance(gm, torch.fx.GraphModule)` on a name holding a graph."""
    truth = walk.flags.truth(test)
    if truth is None:
        truth = graph_instance_truth(test, lambda n: _holds_graph(env, n), walk.resolver)
    return truth


def branch(walk, s: ast.If, env: Env) -> Env | None:
    truth = known_truth(walk, s.test, env)
    if truth is not None:  # the other arm cannot run: nothing it does counts
        walk.expr(s.test, env)
        return walk.block(s.body if truth else s.orelse, env)
    ends: list[bool] = []

    def arm(e: Env, b: list[ast.stmt]):
        out = walk.block(b, e)
        ends.append(out is None)
        return out, None

    out, _, _ = fork(walk, s.test, [lambda e, b=b: arm(e, b) for b in (s.body, s.orelse)], env, s)
    condition = walk.condition(s.test)
    if condition is not None and out is not None and ends.count(True) == 1:
        # One arm returns (raises, breaks, continues): what follows runs under the other's
        # condition, so a prepare after `if qmode == NONE: return gm` needs `qmode != NONE`.
        walk.guards.append((condition[0], condition[1] == ends[1]))
    elif out is not None and ends == [False, True]:
        # `if a and b: ... else: return`: what follows runs under each of them.
        walk.guards.extend(_conjuncts(s.test, walk.resolver.local))
    return out


def fork(walk, test: ast.expr, arms, env: Env, anchor: ast.AST):
    """Run both arms of `if`/`a if c else b`, each remembering its condition on what it sets."""
    walk.expr(test, env)
    condition = walk.condition(test)
    # `a and b`: the first arm runs under each conditions recognised among them; the other
    # under their negated conjunction, which no guard says (IPEX's trainer optimises under
    # `use_ipex and not int8` and captures under `inductor and not training` + `int8`).
    conjuncts = _conjuncts(test, walk.resolver.local) if condition is None else []
    outs, values, pushes = [], [], []
    for run, polarity in zip(arms, (True, False), strict=True):
        if condition is not None:
            pushed = [(condition[0], condition[1] == polarity)]
        else:
            pushed = conjuncts if polarity else []
        walk.guards.extend(pushed)
        try:
            out, value = run(env.copy())
        finally:
            del walk.guards[len(walk.guards) - len(pushed) :]
        outs.append(out)
        values.append(value)
        pushes.append(pushed)
    if env.unread and all(o is not None for o in outs):
        fill_unread(outs, env.unread)  # before the tags: the arm that never read it differs too
    if condition is not None and all(o is not None for o in outs):
        _tag(outs[0], outs[1], condition)
    elif conjuncts and all(o is not None for o in outs):
        _tag_first(outs[0], outs[1], conjuncts)
    joined = join(outs, anchor)
    made = walk.calls.made_graphs  # a graph made here: the arms' conditions go with it (`arm_graphs`)
    if not made and not walk.flow.copies:  # (or a parameter copied on an arm)
        return joined, values, None
    guards = [frozenset(pushed) for pushed in pushes]
    if any(guards) and type(anchor) is not ast.IfExp:  # `if c: e = gm` / `else: e = model`
        arm_graphs.arm_names(walk.calls.held_graphs, made, joined, outs, guards, anchor)
    # Each arm's value with its end and conditions, for `a if c else b` (`arm_graphs`).
    return joined, values, list(zip(values, outs, guards, strict=True))


def alternatives_of(test: ast.expr, local: dict) -> frozenset:
    """The recognised conditions any of which makes `test` true (`b or c`); none when one is not."""
    values = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    found = [condition_of(v, local) for v in values]
    return frozenset(found) if all(f is not None for f in found) else frozenset()


def _holds_graph(env: Env, name: str) -> bool:
    """The local name holds an exported graph on every path that reaches here."""
    obj = env.vars.get(name)
    return obj is not None and obj.is_graph


def _conjuncts(test: ast.expr, local: dict) -> list[tuple[str, bool]]:
    """The recognised conditions of `a and b and ...`, each of which holds when it is true
    (also nested: `a and (b and c)`); none for anything else."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        return []
    out = []
    for value in test.values:
        found = condition_of(value, local)
        if found is not None:
            out.append(found)
        else:
            out.extend(_conjuncts(value, local))
    return out


def _tag_first(then: Env, orelse: Env, conditions: list[tuple[str, bool]]) -> None:
    """Facts only the first arm has hold under all its conditions; those only the other arm
    has, under their negated conjunction, which no guard says: left as they are."""
    theirs_all = dict(orelse.modes)
    for obj, facts in dict(then.modes).items():
        theirs = theirs_all.get(obj, frozenset())
        if facts != theirs:
            then.modes[obj] = frozenset(f if f in theirs else _guarded_all(f, conditions) for f in facts)


def _guarded_all(fact: ModeFact, conditions: list[tuple[str, bool]]) -> ModeFact:
    for condition in conditions:
        fact = fact.guarded(condition)
    return fact


def _tag(then: Env, orelse: Env, condition: tuple[str, bool]) -> None:
    """Facts only one arm has hold only under that arm's condition."""
    name, polarity = condition
    before = {id(then): dict(then.modes), id(orelse): dict(orelse.modes)}
    for env, other, arm in ((then, orelse, polarity), (orelse, then, not polarity)):
        theirs_all = before[id(other)]
        for obj, facts in before[id(env)].items():
            theirs = theirs_all.get(obj, frozenset())
            if facts != theirs:
                env.modes[obj] = frozenset(f if f in theirs else f.guarded((name, arm)) for f in facts)

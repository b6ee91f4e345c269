"""A parameter of `__init__` switched to a mode there and then stored on `self` (issue 14, item 2).

A test harness's constructor takes the model, puts it in eval mode and keeps it
(`module.eval()`, then `self.original_module = module`); another method of the class hands
`self.original_module` to a stage's `run(artifact)` that captures it. The attribute is then
the object the construction passed, in the mode `__init__` gave it, whatever mode it came in:
that mode is what the other methods read, and what they hand to other objects' methods.

ExecuTorch's `Tester.__init__` switches on a parameter of its own (`if training:
module.train() else: module.eval()`): the attribute is in eval mode for the instances whose
construction selects the eval arm, and the constructions decide (`constructor_flags`). That
branch is followed as written: its test the parameter or its negation (`not training`), each
arm one switch of the model or nothing, one of them `.eval()`.

Only what `__init__` does before storing the model is followed: that switch (or branch), a
statement of its own body (not in a loop or a nested function), before the statement that
stores it, the parameter named nowhere else in `__init__` (handed to no call, given no part,
not aliased nor rebound). Anything else leaves the attribute unknown, as do the conditions
`model_attrs` keeps (no method switches, reassigns or hands the attribute on out of sight of
the one reading it).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_apis import key, mode_call
from qlint.analysis.names.scope import parameter_args
from qlint.value_classes import value_class


@value_class(frozen=True)
class Branch:
    """`if <flag>:` / `if not <flag>:` around the switches of `__init__`: the eval arm runs
    when the flag's truth is `evals_when`; the other arm switches the model with `other`
    (`.train()`), or leaves it as it came (None)."""

    flag: str
    index: int  # the flag's position among `__init__`'s parameters, `self` counted
    evals_when: bool
    other: ast.Call | None


@value_class(frozen=True)
class Switched:
    """`param.eval()` (or `.train()`) then `self.<attr> = param` in `__init__`'s own body: the
    attribute is the object the caller passed, in `mode` (with `branch`: on the arm that
    `switch` is in; the other arm's mode is the branch's)."""

    init: ast.FunctionDef
    index: int  # the parameter's position, `self` counted
    param: str
    target: ast.Attribute  # the `self.<attr>` assigned
    switch: ast.Call  # the `.eval()` / `.train()` call
    mode: str  # "eval" or "train"
    passed_on_in: frozenset[int] = frozenset()  # ids of the methods that hand the attribute to a call
    branch: Branch | None = None


def switched_before_store(
    init: ast.FunctionDef, param: str, store: ast.Attribute
) -> tuple[ast.Call, str, Branch | None] | None:
    """(the switch, its mode, the branch around it) when `__init__`'s own body switches
    `param` once, or in a branch on one of its parameters (`branch_of`), in a statement of its
    own before the one storing it in `store` (`self.<attr> = param`), and names it nowhere else."""
    found = None
    switch_row = store_row = value = None
    for at, stmt in enumerate(init.body):
        if isinstance(stmt, ast.Assign) and any(t is store for t in stmt.targets):
            store_row, value = at, stmt.value
            continue
        if isinstance(stmt, ast.Expr) and (m := mode_call(stmt.value)) is not None and key(m[0]) == param:
            here = (stmt.value, m[1], None) if m[1] is not None else None
        elif isinstance(stmt, ast.If):
            here = branch_of(init, stmt, param)
        else:
            continue
        if here is None or found is not None:
            return None  # switched twice, or to a mode read from data (`train(flag)`)
        found, switch_row = here, at
    if found is None or store_row is None or switch_row > store_row:
        return None
    if not isinstance(value, ast.Name) or value.id != param:
        return None
    # Named nowhere else: not handed to a call (`super().__init__(module)` may switch it again),
    # aliased, stored twice, given a part (`module.bn = ...`), nor switched again.
    switches = [found[0]] + ([found[2].other] if found[2] is not None and found[2].other is not None else [])
    allowed = {id(value), *(id(s.func.value) for s in switches)}
    if any(isinstance(n, ast.Name) and n.id == param and id(n) not in allowed for n in ast.walk(init)):
        return None
    return found


def branch_of(init: ast.FunctionDef, stmt: ast.If, param: str) -> tuple[ast.Call, str, Branch] | None:
    """(the `.eval()` of `param`, "eval", the branch) for `if training: param.train() else:
    param.eval()`, `if not training: param.eval()` and their kin: the test a parameter of
    `__init__` or its negation, each arm one switch of `param` to a mode of its own or
    nothing, one of them `.eval()`."""
    test, negated = stmt.test, False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, True
    params = [a.arg for a in parameter_args(init, star=False)]
    if not isinstance(test, ast.Name) or test.id not in params[1:] or test.id == param:
        return None
    if any(isinstance(n, ast.Name) and n.id == test.id and not isinstance(n.ctx, ast.Load) for n in ast.walk(init)):
        return None  # rebound before the branch, maybe
    arms = [_arm(stmt.body, param), _arm(stmt.orelse, param)]
    if any(arm is False for arm in arms):
        return None
    modes = [mode_call(arm)[1] if arm is not None else None for arm in arms]
    if modes.count("eval") != 1 or (None not in arms and "train" not in modes):
        return None
    at = modes.index("eval")
    # The body runs when the test holds: for `if not flag`, when the flag is false.
    evals_when = (at == 0) != negated
    return arms[at], "eval", Branch(test.id, params.index(test.id), evals_when, arms[1 - at])


def _arm(body: list[ast.stmt], param: str) -> ast.Call | bool | None:
    """The one switch of `param` an arm is (None: an empty arm; False: anything else)."""
    if not body:
        return None
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        return False
    m = mode_call(body[0].value)
    if m is None or m[1] is None or key(m[0]) != param:
        return False
    return body[0].value


__all__ = ["Branch", "Switched", "branch_of", "switched_before_store"]

"""A parameter of `__init__` switched to a mode there and then stored on `self` (issue 14, item 2).

A test harness's constructor takes the model, puts it in eval mode and keeps it
(`module.eval()`, then `self.original_module = module`); another method of the class hands
`self.original_module` to a stage's `run(artifact)` that captures it. The attribute is then
the object the construction passed, in the mode `__init__` gave it, whatever mode it came in:
that mode is what the other methods read, and what they hand to other objects' methods.

Only what `__init__` does on every path is followed: one `.eval()` / `.train()` of the
parameter, a statement of its own body (not in a branch, a loop or a nested function),
before the statement that stores it, the parameter read nowhere else there (handed to no call,
given no part, not aliased nor rebound). A switch in a branch (`if not training: module.eval()`) leaves the
attribute as the rest of the class makes it (unknown: its mode depends on what each
construction passes), as does anything else (`model_attrs` keeps the other conditions: no
method switches, reassigns or hands the attribute on out of sight of the one reading it).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_apis import key, mode_call
from qlint.value_classes import value_class


@value_class(frozen=True)
class Switched:
    """`param.eval()` (or `.train()`) then `self.<attr> = param` in `__init__`'s own body: the
    attribute is the object the caller passed, in `mode`."""

    init: ast.FunctionDef
    index: int  # the parameter's position, `self` counted
    param: str
    target: ast.Attribute  # the `self.<attr>` assigned
    switch: ast.Call  # the `.eval()` / `.train()` call
    mode: str  # "eval" or "train"
    passed_on_in: frozenset[int] = frozenset()  # ids of the methods that hand the attribute to a call


def switched_before_store(init: ast.FunctionDef, param: str, store: ast.Attribute) -> tuple[ast.Call, str] | None:
    """(the switch, its mode) when `__init__`'s own body switches `param` exactly once, in a
    statement of its own before the one storing it in `store` (`self.<attr> = param`), and
    names it nowhere else."""
    switch = None
    switch_row = store_row = None
    for at, stmt in enumerate(init.body):
        if isinstance(stmt, ast.Expr) and (m := mode_call(stmt.value)) is not None and key(m[0]) == param:
            if switch is not None or m[1] is None:
                return None  # switched twice, or to a mode read from data (`train(flag)`)
            switch, switch_row = (stmt.value, m[1]), at
        elif isinstance(stmt, ast.Assign) and any(t is store for t in stmt.targets):
            store_row = at
    if switch is None or store_row is None or switch_row > store_row:
        return None
    # Read nowhere else: not handed to a call (`super().__init__(module)` may switch it again),
    # aliased, stored twice, given a part (`module.bn = ...`), nor switched again in a branch.
    value = next(s.value for s in init.body if isinstance(s, ast.Assign) and any(t is store for t in s.targets))
    allowed = {id(switch[0].func.value), id(value)}
    if not isinstance(value, ast.Name) or value.id != param:
        return None
    if any(isinstance(n, ast.Name) and n.id == param and id(n) not in allowed for n in ast.walk(init)):
        return None
    return switch


__all__ = ["Switched", "switched_before_store"]

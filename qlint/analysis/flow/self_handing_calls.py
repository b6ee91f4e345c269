"""Which fields of `self` a call handing `self` itself may change, resolved as the method
making it resolves the callee (`handed_self` reads the callee's body; this finds it): a
builtin or copy that only reads (`read_only_params.LOOKERS`, `COPIES`), or a plain function
of the project (`helper_callees.callee`, under no decorator that is no pass-through), `self`
filling a parameter it names. Anything else may change any field.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.flow import helper_callees
from qlint.analysis.flow.handed_self import COPIES, Changed, changed_through
from qlint.analysis.flow.pass_through import opaque
from qlint.analysis.flow.read_only_params import LOOKERS
from qlint.analysis.names.scope import parameter_args


def fields_changed_in(method: ast.AST, walk_of: Callable[[], object]) -> Changed:
    """`fields_changed(call)` for the calls of `method`; `walk_of()` makes its walk
    (`model_interp.Interpreter`), asked at the first call only."""
    made: list = []

    def changed(call: ast.Call) -> frozenset[str] | None:
        if not made:
            made.append(walk_of())
        return fields_changed(made[0].calls, call)

    return changed


def fields_changed(sem, call: ast.Call) -> frozenset[str] | None:
    """The fields of `self` the call (handed `self`, in a method walked by `sem`) may change:
    none for a reader (`LOOKERS`, `COPIES`), those a project function's body may change through the
    parameter `self` fills (`changed_through`); None (any) for anything else."""
    func = call.func
    name = sem.walk.qualname(func)
    if name in COPIES:
        return frozenset()
    if name is None and isinstance(func, ast.Name) and func.id not in sem.resolver.local:
        builtin = _builtin(func.id, call)
        if builtin is not None:
            return builtin
    found = helper_callees.callee(sem, call.func)
    if found is None or found[3] or not isinstance(found[1], ast.FunctionDef) or opaque(found[0], found[1]):
        return None
    helper = found[1]
    params = parameter_args(helper, star=False)
    names = set()
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None
        if isinstance(arg, ast.Name) and arg.id == "self":
            if i >= len(params):
                return None  # into the helper's `*args`
            names.add(params[i].arg)
    for kw in call.keywords:
        if isinstance(kw.value, ast.Name) and kw.value.id == "self":
            if kw.arg is None or kw.arg not in {p.arg for p in params}:
                return None
            names.add(kw.arg)
    if not names:
        return None  # `self` inside a container written in the call
    out: set[str] = set()
    for name in names:
        changed = changed_through(helper, name)
        if changed is None:
            return None
        out |= changed
    return frozenset(out)


def _builtin(name: str, call: ast.Call) -> frozenset[str] | None:
    """What a builtin handed `self` may change of it: nothing for one that only looks at it
    (`LOOKERS`, `hasattr`) or `super(Cls, self)`, whose proxy runs a base's methods
    (as `super()` does, which hands nothing); the one attribute `getattr`, `setattr` or
    `delattr` name, spelled as a constant; None for anything else."""
    if name in LOOKERS or name in ("hasattr", "super"):
        return frozenset()
    if name in ("getattr", "setattr", "delattr") and len(call.args) >= 2:
        first, attr = call.args[0], call.args[1]
        if isinstance(first, ast.Name) and first.id == "self" and isinstance(attr, ast.Constant):
            return frozenset({attr.value}) if isinstance(attr.value, str) else None
    return None


__all__ = ["fields_changed", "fields_changed_in"]

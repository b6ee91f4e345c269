"""What an argument is known to be, to decide a callee's branch condition at a call.

A helper's branch on its own parameter (`if is_qat:`, `if qmode == QuantizationMode.NONE:`)
is decided at a call whose argument (or the default it leaves) is a constant or a member of
an enum class the project defines. Anything else (a variable, a call, a member of an enum
whose values may alias) is not known, and a condition on it is never taken as decided.

The two sides are written in different modules (the condition and the default in the
callee's, the argument in the caller's), so each is read with its own module's names.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.value_classes import field, value_class

_ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"})
_AUTO = frozenset({"enum.auto"})
_MAX_BASES = 4


@value_class(frozen=True)
class Const:
    value: object


@value_class(frozen=True)
class Member:
    """`QuantizationMode.NONE`: one member of an enum class (named by its module's file and
    its name: the caller's module and the callee's may hold two parses of that file), and
    whether its value is unique in the class (an alias shares an earlier member's value and
    compares equal to it)."""

    path: str
    cls: str
    name: str
    unique: bool = field(compare=False)


Value = Const | Member


def value_of(expr: ast.expr | None, resolver: Resolver | None) -> Value | None:
    """The argument as a known value, or None."""
    if isinstance(expr, ast.Constant):
        return Const(expr.value)
    if resolver is None or expr is None:
        return None
    parts = dotted_parts(expr)
    if parts is None or len(parts) < 2:
        return None
    return _member(resolver.qualname(expr), resolver)


def literal(text: str, resolver: Resolver | None) -> Value | None:
    """The right side of a condition as `dead_branches.condition_of` wrote it: a constant's repr, or a dotted
    name (read in the callee's module)."""
    try:
        return Const(ast.literal_eval(text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    try:
        expr = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    return value_of(expr, resolver)


def equal(a: Value, b: Value) -> bool | None:
    """`a == b` when both are known and the answer cannot depend on anything else."""
    if isinstance(a, Const) and isinstance(b, Const):
        try:
            return bool(a.value == b.value)
        except Exception:  # a constant whose comparison is not plain (none in practice)
            return None
    if isinstance(a, Member) and isinstance(b, Member) and (a.path, a.cls) == (b.path, b.cls):
        if a.name == b.name:
            return True
        return False if a.unique and b.unique else None
    return None  # a member against a constant: an IntEnum or StrEnum may compare equal


def identical(a: Value, b: Value) -> bool | None:
    """`a is b` when both are known: the same only for the singletons (`None`, `True`, `False`,
    `...`); other constants' identity is the interpreter's business (small ints, interned str)."""
    if isinstance(a, Const) and isinstance(b, Const):
        singletons = (None, True, False, ...)
        if any(a.value is s for s in singletons) or any(b.value is s for s in singletons):
            return a.value is b.value
        return None
    return equal(a, b)  # members of one enum: identity is equality


def truth(value: Value) -> bool | None:
    if isinstance(value, Const):
        try:
            return bool(value.value)
        except Exception:
            return None
    return None  # a member's truth is its class's business (`__bool__`, a zero IntFlag)


def _member(qualname: str | None, resolver: Resolver) -> Member | None:
    if not qualname:
        return None
    owner, _, name = qualname.rpartition(".")
    module, _, cls_name = owner.rpartition(".")
    scope = resolver.scope
    if module and module != scope.module:
        scope = resolver.project.module_scope(module, scope.path)
    if scope is None or cls_name not in scope.classes:
        return None
    cls = scope.classes[cls_name]
    values = cls.assigns.get(name)
    if name.startswith("_") or not values or len(values) != 1:
        return None
    local = resolver.for_scope(scope)
    if not _is_enum(cls.bases, local, 0):
        return None
    return Member(os.path.abspath(scope.path), cls_name, name, _unique(name, cls.assigns, local))


def _is_enum(bases: list[ast.expr], resolver: Resolver, depth: int) -> bool:
    for base in bases:
        qualname = resolver.qualname(base)
        if qualname in _ENUM_BASES:
            return True
        module, _, name = (qualname or "").rpartition(".")
        scope = resolver.scope if module == resolver.scope.module else None
        if module and scope is None:
            scope = resolver.project.module_scope(module, resolver.scope.path)
        # A project base class with no members of its own (`class Mode(StrEnum)`).
        inherited = depth < _MAX_BASES and scope is not None and name in scope.classes
        if inherited and _is_enum(scope.classes[name].bases, resolver.for_scope(scope), depth + 1):
            return True
    return False


def _unique(name: str, assigns: dict[str, list[ast.expr]], resolver: Resolver) -> bool:
    """Its value differs from every other member's: all are `auto()`, or all are constants
    and no other equals it. Anything else may be an alias."""
    members = {k: v for k, v in assigns.items() if not k.startswith("_")}
    if any(len(v) != 1 for v in members.values()):
        return False
    exprs = {k: v[0] for k, v in members.items()}
    if all(isinstance(e, ast.Call) and resolver.qualname(e.func) in _AUTO for e in exprs.values()):
        return True
    if not all(isinstance(e, ast.Constant) for e in exprs.values()):
        return False
    mine = exprs[name].value
    return all(k == name or not _same(e.value, mine) for k, e in exprs.items())


def _same(a: object, b: object) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return True


__all__ = ["Const", "Member", "Value", "equal", "literal", "truth", "value_of"]

"""`bundle.model` of an object built from a project class that stores what it is given
(issue 14, item 7).

A dataclass (`Bundle(model=m, inputs=x)`) or a class whose `__init__` stores a parameter as
it came (`self.model = model`) holds, in that attribute, the object the construction passed:
reading the attribute gives that object, in its mode, instead of a model of unknown mode. A
caller passing `bundle.model` to a helper is then classified.

Only what the class itself guarantees is followed: a dataclass without `__post_init__`, whose
field is initialised from the call; an `__init__` attribute that no method reassigns, switches
or hands to a call (`model_attrs.attribute_sources`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.flow.model_attrs import Stored, attribute_sources

Field = tuple[int | None, str]  # (position among the call's arguments, keyword)


def stored_fields(cls: ast.ClassDef, is_constructor: Callable[[ast.Call], bool]) -> dict[str, Field]:
    """Attribute -> the argument of a construction that it holds."""
    if _is_dataclass(cls):
        return _dataclass_fields(cls)
    out: dict[str, Field] = {}
    for name, source in attribute_sources(cls, is_constructor).items():
        if isinstance(source, Stored) and not source.passed_on_in:
            out[name.removeprefix("self.")] = (source.index - 1, source.param)
    return out


def passed_for(fieldspec: Field, args: tuple, kwargs: tuple):
    """The object a construction passed for one field (None: not passed, or not followed)."""
    position, keyword = fieldspec
    found = dict(kwargs).get(keyword)
    if found is None and position is not None and position < len(args):
        found = args[position]
    return found


def _is_dataclass(cls: ast.ClassDef) -> bool:
    for deco in cls.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "dataclass":
            if isinstance(deco, ast.Call) and any(kw.arg == "kw_only" for kw in deco.keywords):
                return False
            return not any(isinstance(s, ast.FunctionDef) and s.name in ("__init__", "__post_init__") for s in cls.body)
    return False


def _dataclass_fields(cls: ast.ClassDef) -> dict[str, Field]:
    out: dict[str, Field] = {}
    position = 0
    for stmt in cls.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        if "ClassVar" in ast.unparse(stmt.annotation) or "InitVar" in ast.unparse(stmt.annotation):
            continue
        value = stmt.value
        if isinstance(value, ast.Call) and any(kw.arg in ("init", "kw_only") for kw in value.keywords):
            return {}  # `field(init=False)` or keyword-only fields shift the positions: not followed
        out[stmt.target.id] = (position, stmt.target.id)
        position += 1
    return out


__all__ = ["passed_for", "stored_fields"]

"""`bundle.model` of an object built from a project class that stores what it is given
(issue 14, item 7).

A dataclass (`Bundle(model=m, inputs=x)`) or a class whose `__init__` stores a parameter as
it came (`self.model = model`) holds, in that attribute, the object the construction passed:
reading the attribute gives that object, in its mode, instead of a model of unknown mode. A
caller passing `bundle.model` to a helper is then classified.

Only what the class itself guarantees is followed: a dataclass without `__post_init__`, whose
field is initialised from the call; an `__init__` attribute that no method reassigns, switches
or hands to a call (`model_attrs.attribute_sources`).

Both answers depend on the class's own statements alone, and each is a walk of every method:
they are kept on the class node (`node_memo`), so a class of another module that many checked
files construct (ExecuTorch's `SimpleADB`, built from 48 of them) is walked once per process,
not once per check.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_attrs import Stored, attribute_sources
from qlint.analysis.flow.read_only_params import LOOKERS, MUTATORS
from qlint.analysis.names.scope import own_init, parameter_args
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk_kinds

Field = tuple[int | None, str]  # (position among the call's arguments, keyword)


def stored_fields(cls: ast.ClassDef) -> dict[str, Field]:
    """Attribute -> the argument of a construction that it holds (kept on `cls`: shared, so
    callers must not change it)."""
    return kept_on_node(cls, _STORED, _stored_fields)


def held_fields(cls: ast.ClassDef) -> dict[str, Field]:
    """Attribute -> the argument of a construction that it still is, whatever its mode: a
    dataclass field, or a parameter `__init__`'s own statements store once (`self.model =
    model`), which no method reassigns, aliases or hands to a call (a mode switch of it,
    `self.model.eval()`, keeps it: `switched_fields` reads those). Kept on `cls` as well."""
    return kept_on_node(cls, _HELD, _held_fields)


def held_part_fields(cls: ast.ClassDef) -> dict[str, tuple[Field, tuple[str, ...]]]:
    """Attribute -> the argument of a construction and the attribute names `__init__` took from
    it to store there (`self.body = net.body`: ((0, "net"), ("body",))), whatever its mode: the
    very module that argument holds at that path, as `held_fields` has the argument itself. A
    parameter `__init__` never rebinds, a statement of its own body storing the attribute once,
    no method reassigning, aliasing or handing it to a call. Kept on `cls` as well."""
    return kept_on_node(cls, _HELD_PARTS, _held_part_fields)


_STORED = "_qlint_stored_fields"
_HELD = "_qlint_held_fields"
_HELD_PARTS = "_qlint_held_part_fields"
_NAMES = frozenset({ast.Name})


def _not_a_construction(call: ast.Call) -> bool:
    return False  # only what `__init__` stores from its parameters is read, not what it builds


def _stored_fields(cls: ast.ClassDef) -> dict[str, Field]:
    if _is_dataclass(cls):
        out = _dataclass_fields(cls)
    else:
        out = {}
        for name, source in attribute_sources(cls, _not_a_construction).items():
            if isinstance(source, Stored) and not source.passed_on_in:
                out[name.removeprefix("self.")] = (source.index - 1, source.param)
    if not out:
        return out
    changed = _changed_by_methods(cls, _CHANGES)
    return {} if changed is None else {name: spec for name, spec in out.items() if name not in changed}


def _held_fields(cls: ast.ClassDef) -> dict[str, Field]:
    if _is_dataclass(cls):
        out = _dataclass_fields(cls)
    else:
        out = _stored_once(cls)
    if not out:
        return out
    changed = _changed_by_methods(cls, _CHANGES - _SWITCHES)
    return {} if changed is None else {name: spec for name, spec in out.items() if name not in changed}


def _held_part_fields(cls: ast.ClassDef) -> dict[str, tuple[Field, tuple[str, ...]]]:
    init = own_init(cls)
    if init is None or _is_dataclass(cls):
        return {}
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for name, value in _init_stores_once(init).items():
        steps: list[str] = []
        while isinstance(value, ast.Attribute):
            steps.append(value.attr)
            value = value.value
        if steps and isinstance(value, ast.Name):
            found[name] = (value.id, tuple(reversed(steps)))
    if not found:  # the walks below only for the few classes storing a part of a parameter
        return {}
    params = {a.arg: i for i, a in enumerate(parameter_args(init, star=False))}
    rebound = {n.id for n in walk_kinds(init, _NAMES) if not isinstance(n.ctx, ast.Load)}
    out = {
        name: ((params[param] - 1, param), steps)
        for name, (param, steps) in found.items()
        if params.get(param, 0) > 0 and param not in rebound
    }
    if not out:
        return out
    changed = _changed_by_methods(cls, _CHANGES - _SWITCHES)
    return {} if changed is None else {name: spec for name, spec in out.items() if name not in changed}


def _stored_once(cls: ast.ClassDef) -> dict[str, Field]:
    init = own_init(cls)
    if init is None:
        return {}
    params = {a.arg: i for i, a in enumerate(parameter_args(init, star=False))}
    rebound = {n.id for n in walk_kinds(init, _NAMES) if not isinstance(n.ctx, ast.Load)}
    return {
        name: (params[value.id] - 1, value.id)
        for name, value in _init_stores_once(init).items()
        if isinstance(value, ast.Name) and params.get(value.id, 0) > 0 and value.id not in rebound
    }


def _init_stores_once(init: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """Attribute -> the value `__init__`'s own statements store in it, for each attribute they
    store once: statements of its body (not nested in a branch or loop) with one target rooted
    at `self.<attribute>` through attributes (`self.model = m`, `self.model.body = b`: both
    stores of `model`). A second such store of an attribute drops it, whatever either stored;
    what each reading keeps of the values is its own (`_stored_once`: a parameter itself,
    `_held_part_fields`: an attribute path into one)."""
    found: dict[str, ast.expr] = {}
    seen: set[str] = set()
    for stmt in init.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        name = _field_of(stmt.targets[0])
        if name is None or not isinstance(stmt.targets[0], ast.Attribute):
            continue
        if name in seen:
            found.pop(name, None)
        else:
            found[name] = stmt.value
        seen.add(name)
    return found


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


# Methods that change what a container or a module holds (`read_only_params`), or a module's
# mode or hooks; builtins that only look at what they are given, or at `self`'s attributes.
_CHANGES = MUTATORS | {"pop", "popitem", "clear", "remove", "discard", "__delitem__", "train", "load_state_dict"}
_CHANGES |= {"register_forward_hook", "register_forward_pre_hook"}
_SWITCHES = frozenset({"train", "eval"})
_LOOKS = LOOKERS | {"hasattr", "getattr", "super"}


# The nodes `_changed_by_methods` reads, found without walking every expression node.
_CHANGERS = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.Call})


def _changed_by_methods(cls: ast.ClassDef, changes: frozenset[str]) -> frozenset[str] | None:
    """The attributes the class's own methods may change after the construction stored them
    (None: any of them): an item stored into one (`self.data[k] = m`), a method of `changes`
    called on one (`self.data.update(...)`, `self.model.train()`), one reassigned outside
    `__init__` or handed to a call (`fit(self.model)`), a name bound to one, or `self` handed
    on whole. What a bundle's field holds is the caller's only when none of them touches it.

    The three readings of a class ask it with two sets of methods: the walk of its methods is
    made once (`_method_changes`, kept on the class node) and answers both."""
    assert changes <= _CHANGES  # what `_method_changes` keeps
    found = kept_on_node(cls, _CHANGED, _method_changes)
    if found is None:
        return None
    changed, called = found
    return changed.union(name for method, name in called if method in changes)


_CHANGED = "_qlint_changed_by_methods"


def _method_changes(cls: ast.ClassDef) -> tuple[frozenset[str], tuple[tuple[str, str], ...]] | None:
    """What `_changed_by_methods` reads of the class's methods, whichever of `_CHANGES` (every
    set it is asked with is part of it) change a field: the attributes changed otherwise, and
    (method, attribute) for each call of one of them on one (`self.model.train()`); None when
    `self` is handed on whole."""
    changed: set[str] = set()
    called: list[tuple[str, str]] = []
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        init = method.name == "__init__"
        for node in walk_kinds(method, _CHANGERS):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                for target in targets:
                    for part in ast.walk(target):
                        name = _field_of(part)
                        # `self.model = model` in `__init__` is the store itself.
                        if name is not None and not (init and part is target and isinstance(node, ast.Assign)):
                            changed.add(name)
                value = getattr(node, "value", None)
                if value is not None and (name := _field_of(value)) is not None:
                    changed.add(name)  # `d = self.data`: changed through the alias, maybe
            elif isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr in _CHANGES and (name := _field_of(func.value)):
                    called.append((func.attr, name))
                if isinstance(func, ast.Name) and func.id in _LOOKS:
                    continue
                for arg in [*node.args, *(kw.value for kw in node.keywords)]:
                    arg = arg.value if isinstance(arg, ast.Starred) else arg
                    if isinstance(arg, ast.Name) and arg.id == "self":
                        return None  # `register(self)`, `setattr(self, ...)`: anything
                    if (name := _field_of(arg)) is not None:
                        changed.add(name)
    return frozenset(changed), tuple(called)


def _field_of(expr: ast.AST) -> str | None:
    """`f` for an expression rooted at `self.f` through attributes and subscripts."""
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            return expr.attr
        expr = expr.value
    return None


__all__ = ["held_fields", "held_part_fields", "passed_for", "stored_fields"]

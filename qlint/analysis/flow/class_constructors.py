"""`cls(...)` in a classmethod: an alternate constructor (`m = Net.from_config(cfg)` returning
`cls(**cfg)`) builds an instance of the class it is called on (QL201/QL202; issue 14, item 4).

The classmethod's summary is one per def, read with the class that writes it (`ModelFlow.function`
with its class scope): there `cls(...)` is a construction of that class (`own_class`), in the
mode that class's instances start in. Called on that class (`Net.create()`), or on `cls` or
`self` from another of its methods, the summary's answer stands. Called on a subclass that
inherits the method (`Deeper.create()`), the instance is the subclass's (`as_called_class`):
what it holds is the subclass's, read when a message names it, and its mode is the one the
construction's summary gave when the subclass's instances start as the writer's do (the same
`__init__` facts: `class_facts`); when they may not (`Frozen.create()`, whose `__init__` evals),
the result is left unknown. Only a top-level class of the module is read so, one that derives
from `torch.nn` module classes (`nn_classes`: by its module's text, or through a base imported
from another project module, `class Net(BaseNet)`), and only a `cls` that the method binds
nowhere else (`class_method_calls.calls_own_class`). A config, an enum, a graph pass or a
tensor subclass holds no mode to follow, and knowing what such a class's `cls(...)` built made
the calls on it followed (ExecuTorch: `from_dict`, `from_recipe`, `from_json` of configs and
stages read).
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.flow.class_facts import evals_parts, mirrored_param, sets_eval
from qlint.analysis.flow.class_method_calls import calls_own_class, own_class_calls
from qlint.analysis.flow.model_env import Env, new_value
from qlint.analysis.flow.model_values import CALL, CONSTRUCTED, Obj, Origin
from qlint.analysis.flow.nn_classes import derives_from_nn
from qlint.analysis.flow.resolved_classes import ModelClass
from qlint.value_classes import replace

_OWN = ("cls", "self")


def own_class(sem, node: ast.Call) -> ModelClass | None:
    """The class `cls(...)` builds in a classmethod of the class the walk reads (`sem` is its
    `CallSemantics`), `cls` its first parameter bound nowhere else; None for any other call."""
    func, method, holder = node.func, sem.walk.func, sem.class_scope
    if not isinstance(func, ast.Name) or holder is None or not isinstance(method, ast.FunctionDef):
        return None
    params = method.args.args
    if not is_class_method(method):
        return None
    if not params or params[0].arg != func.id or holder.methods.get(method.name) is not method:
        return None
    scope = sem.owner.scope
    top = scope.classes.get(holder.node.name)
    if top is None or top.node is not holder.node or not calls_own_class(method, node):
        return None  # a class written in a function or in another class: not read so
    cls = ModelClass(holder.node, scope)
    return cls if derives_from_nn(sem.owner.classes, cls) else None


def is_class_method(func: ast.FunctionDef) -> bool:
    """`func` is decorated `@classmethod` and nothing else."""
    decorators = func.decorator_list
    return len(decorators) == 1 and isinstance(decorators[0], ast.Name) and decorators[0].id == "classmethod"


def as_called_class(sem, node: ast.Call, result: Obj | None, env: Env) -> Obj | None:
    """What a classmethod's summary returned (`result`, at the call `node`), as built by the
    class the call names: a subclass's instance where the method's `cls(...)` made the writer's."""
    if result is None or not isinstance(node.func, ast.Attribute):
        return result
    own = [o for o in result.origins if made_by_cls(o)]
    if not own:
        return result
    head = node.func.value
    if isinstance(head, ast.Name) and head.id in _OWN:
        return result  # `cls.create()` in another of its methods: the same class, for its callers
    called = sem.owner.classes.resolve(head, sem.resolver, sem.classes)
    if called is None:
        return new_value(env, node, "", Origin(CALL, node))
    for origin in own:
        writer = origin.built.cls
        if not _same(called, writer) and not _starts_alike(called, writer):
            return new_value(env, node, "", Origin(CALL, node))  # `Frozen.create()`: its own start
    out = Obj(result.anchor, result.key, frozenset(_as(o, called) for o in result.origins), result.captures)
    env.modes[out] = frozenset(
        replace(f, origin=_as(f.origin, called)) if f.origin is not None else f for f in env.facts(result)
    )
    return out


def _as(origin: Origin, called: ModelClass) -> Origin:
    """`origin`, a construction `cls(...)` made, as an instance of `called`."""
    if not made_by_cls(origin) or _same(origin.built.cls, called):
        return origin
    return replace(origin, built=replace(origin.built, cls=called, name=called.name))


def made_by_cls(origin: Origin) -> bool:
    """`origin` is a construction a classmethod's `cls(...)` of its class made (`own_class`)."""
    built = origin.built if origin.kind == CONSTRUCTED else None
    cls = getattr(built, "cls", None)
    if cls is None or cls.summarised or not isinstance(built.call, ast.Call):
        return False  # `own_class` reads the class's body: one known by name alone is not its
    func = built.call.func
    return isinstance(func, ast.Name) and func.id != cls.name and id(built.call) in own_class_calls(cls.node)


def _same(one: ModelClass, other: ModelClass) -> bool:
    """One top-level class (by its module and name: no body is read for it)."""
    return one.name == other.name and os.path.abspath(one.scope.path) == os.path.abspath(other.scope.path)


def _starts_alike(called: ModelClass, writer: ModelClass) -> bool:
    """Instances of both classes start in the same mode (their `__init__` facts)."""
    if mirrored_param(called) or mirrored_param(writer):
        return False
    return sets_eval(called) == sets_eval(writer) and evals_parts(called) == evals_parts(writer)


__all__ = ["as_called_class", "is_class_method", "made_by_cls", "own_class"]

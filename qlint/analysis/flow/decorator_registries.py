"""A registry a class decorator fills, and the method calls on what its lookups hand out
(issue 14; Samsung TICO's quantizers).

    _REGISTRY = {}

    def register_quantizer(config_cls):
        def wrapper(quantizer_cls):
            _REGISTRY[config_cls] = quantizer_cls
            return quantizer_cls
        return wrapper

    def get_quantizer(cfg):
        return _REGISTRY.get(type(cfg))(cfg)        # or `_REGISTRY[type(cfg)]`, or a helper

    @register_quantizer(PT2EConfig)
    class PT2EQuantizer: ...                        # in another module

`prepare(model, config)` then runs `get_quantizer(config).prepare(model)`. A lookup of the
registry is a class of it, chosen by its key: `type(p)` of a parameter `p` of the function
looking it up is the caller's to decide, so the value carries which parameter chooses it
(`Origin.index`, `Origin.owner`) and each call of a summarised function hands that choice to
its own caller's argument (`rekeyed`): a construction of a class names the key
(`Origin.name`), a parameter of the caller passes the choice on, anything else leaves it
open. Calling such a class builds an instance of it; a method called on one is, for the
module whose callers are read (`project_callers`), a call of the method of each class of
that module the registry's decorator registers, recorded with the keys that select it
(`Selection`): a caller whose argument is a construction of another class never reaches it.
Whether nothing else writes the registry (so that the keys are the whole story) is the
verdict's to check, across the project (`registry_closure`); here the call is only a call
the walk records, besides what it does with the classes it does not read.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.flow.class_methods import method_of
from qlint.analysis.flow.model_env import Env, join
from qlint.analysis.flow.model_values import CONSTRUCTED, PARAM, ModeFact, Obj, Origin
from qlint.analysis.flow.pass_through import transparent
from qlint.analysis.flow.registering_decorators import registry_written
from qlint.analysis.names.resolver import Resolver
from qlint.value_classes import replace, value_class

REGISTRY_CLASS = "class of a decorator-filled registry"
REGISTRY_INSTANCE = "instance of a class of a decorator-filled registry"
KINDS = frozenset({REGISTRY_CLASS, REGISTRY_INSTANCE})
# What a method of such an instance returns (`registry_results` judges it where the key is known).
REGISTRY_RESULT = "result of a method of a class of a decorator-filled registry"


@value_class(frozen=True)
class Selection:
    """A call reaches the method only when the class of what the caller of `owner` passes for
    parameter `index` is one of `keys` (`class_key`), the keys the class is registered under
    in `registry` of module `module` by its decorator `decorator`. `index` None: the key is
    known at the call and is none of them (`get_quantizer(GPTQConfig()).prepare(m)`)."""

    owner: ast.AST | None
    index: int | None
    keys: frozenset[str]
    module: str
    registry: str
    decorator: str
    cls: str  # the registered class's name


def class_key(cls) -> str:
    """What a resolved class (`resolved_classes.ModelClass`) is known by as a registry key."""
    return f"{os.path.abspath(cls.scope.path)}::{cls.name}"


def lookup(sem, node: ast.expr, env: Env) -> Obj | None:
    """`REG.get(key)` (a call) or `REG[key]` (a subscript) of a registry of the walked module:
    one of its classes, chosen as the key says; None for anything else."""
    if isinstance(node, ast.Call):
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr == "get" and len(node.args) == 1 and not node.keywords):
            return None
        holder, key_expr = func.value, node.args[0]
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        holder, key_expr = node.value, node.slice
    else:
        return None
    if not isinstance(holder, ast.Name):
        return None
    scope = sem.owner.scope
    if not empty_dict(scope.assigns.get(holder.id)) or scope.module is None or holder.id in sem.resolver.local:
        return None
    if not decorators_of(scope, holder.id):
        return None
    origin = Origin(REGISTRY_CLASS, node, makes=(scope.module, holder.id))
    chosen = None
    if isinstance(key_expr, ast.Call) and _is_type_of(key_expr, sem.resolver):
        chosen = sem.walk.expr(key_expr.args[0], env)
    origins = _chosen_by(origin, chosen, sem.walk.func, node) if chosen is not None else {origin}
    obj = Obj(node, "", frozenset(origins))
    env.modes[obj] = frozenset({_unset(o) for o in origins})
    return obj


def instance(obj: Obj | None, node: ast.Call, env: Env) -> Obj | None:
    """Calling a class looked up in a registry (`qcls(cfg)`): an instance of that class."""
    if obj is None or not obj.origins or any(o.kind != REGISTRY_CLASS for o in obj.origins):
        return None
    origins = frozenset(replace(o, kind=REGISTRY_INSTANCE, node=node) for o in obj.origins)
    made = Obj(node, "", origins)
    env.modes[made] = frozenset({_unset(o) for o in origins})
    return made


def registered_instance(receiver: Obj) -> bool:
    """An instance of a class looked up in a decorator-filled registry (and nothing else)."""
    return bool(receiver.origins) and all(o.kind == REGISTRY_INSTANCE for o in receiver.origins)


def rekeyed(origin: Origin, callee: ast.AST, given: dict[int, Obj], caller: ast.AST, node: ast.Call) -> set[Origin]:
    """A registry value a summarised function returns, in its caller's terms: the choice its
    parameter made is the argument's at this call."""
    if origin.index is None or origin.owner is not callee:
        return {replace(origin, node=node)}
    chosen = given.get(origin.index)
    if chosen is None:
        return {replace(origin, node=node, index=None, owner=None)}  # a default: no class we know
    return _chosen_by(replace(origin, index=None, owner=None), chosen, caller, node)


def _chosen_by(origin: Origin, chosen: Obj, func: ast.AST, node: ast.AST) -> set[Origin]:
    """The origins of a registry value whose key is the type of `chosen`."""
    origins = chosen.origins
    if origins and all(o.kind == PARAM and o.node is func and o.index is not None for o in origins):
        indices = {o.index for o in origins}
        if len(indices) == 1:
            return {replace(origin, node=node, index=indices.pop(), owner=func, name="")}
    if origins and all(o.kind == CONSTRUCTED and getattr(o.built, "cls", None) is not None for o in origins):
        return {replace(origin, node=node, name=class_key(o.built.cls)) for o in origins}
    return {replace(origin, node=node, name="")}


def dispatch(sem, node: ast.Call, attr: str, receiver: Obj, args, kwargs, env: Env) -> bool:
    """`quantizer.prepare(model)` on an instance of a registry's class, in an analysis that reads
    a module's callers: each class of that module the registry's decorator registers, whose
    method `attr` the walk reads, is a target. Its call is recorded (with the keys that select
    it, when a parameter of the walked function chooses) and its effects joined with the
    call left as it was (the classes of other modules). True when some target was read."""
    origins = receiver.origins
    for o in origins:  # asked of every method call the walk does not summarise: no generator
        if o.kind != REGISTRY_INSTANCE:
            return False
    if not origins:
        return False
    owner = sem.owner
    followed = owner.classes.followed_path()
    if followed is None:
        return False
    scope = owner.project.scope_at(followed)
    fowner = owner.for_module(scope.module) if scope is not None and scope.module else None
    if fowner is None or os.path.abspath(fowner.scope.path) != followed:
        return False
    branches: list[Env] = []
    for module, registry in {o.makes for o in origins}:
        rowner = owner.for_module(module)
        decorators = decorators_of(rowner.scope, registry) if rowner is not None else ()
        for cls, keys in registered_classes(fowner, module, decorators):
            found = method_of(cls, attr, fowner.scope)
            if found is None or not isinstance(found[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if found[0].decorator_list and not transparent(fowner, found[0].decorator_list):
                continue  # wrapped in something that may do anything with the model
            selection = _selection(origins, keys, module, registry, decorators, cls)
            callee = fowner.function(found[0], found[1])
            if callee is None:
                continue
            branch = env.copy()
            sem.apply(node, callee, 1, receiver, args, kwargs, branch, selection=selection)
            branches.append(branch)
    if not branches:
        return False
    joined = join([env, *branches], node)
    env.vars, env.modes, env.patched, env.copied = joined.vars, joined.modes, joined.patched, joined.copied
    env.partly_copied = joined.partly_copied
    return True


def result_fact(node: ast.Call, attr: str, receiver: Obj, first: frozenset[ModeFact]) -> frozenset[ModeFact]:
    """The facts of `receiver.<attr>(first, ...)` on an instance of a registry's class: one
    per registry origin of the receiver, each with the modes `first` had before the call."""
    out = set()
    for o in receiver.origins:
        module, registry = o.makes
        origin = replace(o, kind=REGISTRY_RESULT, node=node, makes=(module, registry, attr), items=first)
        out.add(ModeFact("unset", node, origin))
    return frozenset(out)


def rekeyed_fact(fact: ModeFact, callee: ast.AST, given: dict, caller: ast.AST, node: ast.Call, subst) -> set[ModeFact]:
    """A result fact of a summarised function in its caller's terms: the key chosen by the
    argument passed here, the argument's modes the caller's (`subst`)."""
    items = subst(fact.origin.items)
    return {ModeFact("unset", node, replace(o, items=items)) for o in rekeyed(fact.origin, callee, given, caller, node)}


def _selection(origins, keys: frozenset[str] | None, module: str, registry: str, decorators, cls):
    """The `Selection` the call is recorded with (None: any caller reaches it). Every origin's
    key known and none of `keys`: one without a parameter (`index` None), whose call reaches
    the method only if the registry is open."""
    reach = set()
    for o in origins:
        if o.index is not None:
            reach.add((o.owner, o.index))
        elif not o.name or keys is None or o.name in keys:
            reach.add(None)
    if None in reach or len(reach) > 1 or keys is None or len(decorators) != 1:
        return None
    func, index = next(iter(reach)) if reach else (None, None)
    return Selection(func, index, keys, module, registry, decorators[0], cls.node.name)


def registered_classes(fowner, module: str, decorators: tuple[str, ...]):
    """(class scope, the keys it is registered under, None when one is not a class we
    resolve) for each top-level class of the followed module the decorators register."""
    scope = fowner.scope
    resolver = None
    wanted = {f"{module}.{d}" for d in decorators}
    for cls in scope.classes.values():
        keys: set[str] | None = set()
        hit = False
        for deco in cls.node.decorator_list:
            if not (isinstance(deco, ast.Call) and deco.args):
                continue
            resolver = resolver or Resolver(scope, fowner.project, fowner.optable)
            if resolver.qualname(deco.func) not in wanted:
                continue
            hit = True
            resolved = fowner.classes.resolve(deco.args[0], resolver, {}) if len(deco.args) == 1 else None
            if resolved is None or deco.keywords or keys is None:
                keys = None
            else:
                keys.add(class_key(resolved))
        if hit:
            yield cls, frozenset(keys) if keys is not None else None


def decorators_of(scope, registry: str) -> tuple[str, ...]:
    """The module-level functions of `scope` that are decorators writing `registry`:
    `def deco(key): def wrapper(cls): registry[key] = cls; return cls; return wrapper`."""
    return tuple(name for name, func in scope.functions.items() if registry_written(func) == (registry,))


def empty_dict(values) -> bool:
    """Bound once, to `{}` or `dict()`."""
    if not values or len(values) != 1:
        return False
    value = values[0]
    if isinstance(value, ast.Dict):
        return not value.keys
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "dict"
        and not value.args
        and not value.keywords
    )


def _is_type_of(call: ast.Call, resolver: Resolver) -> bool:
    func = call.func
    return (
        isinstance(func, ast.Name)
        and func.id == "type"
        and func.id not in resolver.local
        and len(call.args) == 1
        and not call.keywords
        and isinstance(call.args[0], ast.Name)
    )


def _unset(origin: Origin) -> ModeFact:
    return ModeFact("unset", origin.node, origin)


__all__ = [
    "KINDS",
    "REGISTRY_CLASS",
    "REGISTRY_INSTANCE",
    "REGISTRY_RESULT",
    "Selection",
    "class_key",
    "decorators_of",
    "dispatch",
    "empty_dict",
    "instance",
    "lookup",
    "registered_classes",
    "registered_instance",
    "rekeyed",
    "rekeyed_fact",
    "result_fact",
]

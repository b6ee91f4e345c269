"""The value a construction makes and the mode it starts in (`model_builds.Builds.construct`).

A fresh module starts in train mode; one whose class's `__init__` evals all it holds starts
in eval mode, one that takes the mode of what it was given (`self.train(model.training)`) in
that mode. A wrapper of modules the function holds (`nn.Sequential(conv, bn)`, `W(net.eval())`,
`HeadOnly(full)` taking `full.head`) keeps their modes, and holds what they were built as.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.built_models import Built
from qlint.analysis.flow.class_facts import evals_parts, mirrored_param, sets_eval
from qlint.analysis.flow.closure_parts import closure_objects, runs_closure
from qlint.analysis.flow.given_modes import (
    attribute_arguments,
    evaled_arguments,
    given_params,
    keeps_given_modes,
    stored_as_given,
)
from qlint.analysis.flow.held_parts import part_build
from qlint.analysis.flow.held_slots import modes_of, slots_of
from qlint.analysis.flow.init_parts import built_in_init
from qlint.analysis.flow.installed_modes import starts_in_eval
from qlint.analysis.flow.model_env import Env, new_value
from qlint.analysis.flow.model_values import CONSTRUCTED, PRETRAINED, ModeFact, Obj, Origin
from qlint.analysis.flow.part_modes import taken_part
from qlint.analysis.names.scope import own_init
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import name_loads, parents, walk_kinds
from qlint.value_classes import replace


def construct(builds, node: ast.Call, built: Built, args: list[Obj | None], env: Env, passed: tuple = ()) -> Obj:
    """The value the construction `node` makes (`Builds.construct`), in the mode it starts in."""
    if starts_in_eval(built):  # a class of an installed package whose `__init__` calls `eval()`
        origin = Origin(CONSTRUCTED, node, built=built, passed=passed)
        return new_value(env, node, "", origin, {ModeFact("eval", node, origin)})
    mirrored = _mirrored_arg(node, built, args)
    if mirrored is not None and not is_module(mirrored, env):
        # `self.train(model.training)` in its `__init__`: the instance is in the mode of what
        # it was given, also when that is only known at the callers (a helper's parameter).
        origin = Origin(CONSTRUCTED, node, built=built, passed=passed)
        return new_value(env, node, "", origin, env.facts(mirrored))
    for obj in evaled_arguments(built, node, args):
        # `self.a = a.eval()` in `__init__`: what the call handed is evaled, the caller's too.
        env.modes[obj] = frozenset({ModeFact("eval", node)})
    evals = built.cls is not None and evals_parts(built.cls)
    runs = _runs_closure(builds.sem, built, env) if evals else None
    if runs is False:
        # `forward` runs a module of the function whose mode at the capture is not known:
        # a fresh module in train mode, holding what is not known (`closure_parts`).
        origin = Origin(CONSTRUCTED, node, built=replace(built, parts=None), passed=passed)
        return new_value(env, node, "", origin)
    if evals and runs is None:
        # Every part it holds was evaled by its `__init__`, whatever mode it was given in.
        origin = Origin(CONSTRUCTED, node, built=built, passed=passed)
        return new_value(env, node, "", origin, {ModeFact("eval", node, origin)})
    # `HeadOnly(full)` storing `self.head = full.head`: it holds that part of what it is given.
    # Only for a module built in the call or named only to eval it and hand it here: parts
    # given to it (`full.head = nn.Dropout(0.1)`, `setattr`), or a switch, are not followed.
    func = builds.sem.walk.func
    parted = [
        (o, e, a)
        for o, e, a in attribute_arguments(built, node, args)
        if is_module(o, env)
        and (isinstance(e, ast.Call) or (isinstance(e, ast.Name) and _only_evaled_here(func, e.id, node)))
    ]
    part_of = {id(o): (o, part_build(builds.sem.owner, (o, (a,))), (a,)) for o, _, a in parted}
    if any(part is None or not _built_once(o, a) for o, part, (a,) in part_of.values()):
        part_of = {}  # the attribute is not one construction of its class: read the whole module
    wrapped = [o for o in args if o is not None and is_module(o, env) and id(o) not in part_of]
    # `W(model)` of a parameter `model` a project class stores as it came: in the mode the
    # callers leave it, as a local module would be (`given_modes`).
    given = given_params(builds.sem.walk.func, node, built, args, env)
    if given and keeps_given_modes(built, False):
        wrapped += given
    wrapped += _closure_given(builds, built, env)
    slots = slots_of(builds.sem.walk.func, node, args, {id(o) for o in wrapped}, env)
    if slots:  # `nn.Sequential(m, ...)` of a parameter `m`: its callers' arguments fill it
        built = replace(built, slots=slots)
    taken = _taken_parts(builds.sem, node, args, env) + list(part_of.values())
    if part_of:
        built = replace(built, taken_args=frozenset(id(e) for o, e, _ in parted if id(o) in part_of))
    if wrapped and not taken and all(_plain_instance(o, env) for o in wrapped):
        # `LlamaModel(config)` of a `@dataclass class ModelArgs:` built just before: no
        # module (its class has no base), so no mode to hand on; the new module starts in
        # train mode at its own line. What the instance holds is still read as a part.
        parts = [next((o.built for o in w.origins if o.built is not None), None) for w in wrapped]
        built = replace(built, parts=None if None in parts else tuple(parts))
        wrapped = []
    if wrapped or taken:  # a wrapper module: the wrapped modules keep their own modes
        parts = [next((o.built for o in w.origins if o.built is not None), None) for w in wrapped]
        parts += [part for _, part, _ in taken]
        steps = {id(o): () for o in wrapped}
        wrapped += [root for root, _, _ in taken]
        steps.update((id(root), path) for root, _, path in taken)
        covered = _argument_ids(node, args, wrapped)
        fixed = _fixed_parts(builds.sem.walk.func, node, built, args, wrapped, env) if not taken else {}
        built = replace(
            built,
            parts=None if None in parts else tuple(parts),
            wrapped=covered,
            fixed_parts=frozenset(fixed),
            fixed_args=frozenset(fixed.values()),
        )
        origin = Origin(CONSTRUCTED, node, built=built, passed=passed)
        if any(f.state != "train" for o in wrapped for f in env.facts(o)) and not keeps_given_modes(built, True):
            # `W(net.eval())` of a class with a Dropout of its own: that part starts in
            # train mode, whatever mode the module given is in (`given_modes`).
            return _handed_back(built, new_value(env, node, "", origin), env)
        # What the wrapped modules were built as is now what the wrapper holds; of a part
        # taken out, only the switches of that part still apply (`part_modes`).
        facts = {
            replace(f, origin=replace(f.origin, built=built)) if f.origin and f.origin.kind == CONSTRUCTED else f
            for o in wrapped
            for f in (taken_part(g, steps[id(o)]) for g in env.facts(o))
        }
        return _handed_back(built, new_value(env, node, "", origin, facts), env)
    origin = Origin(CONSTRUCTED, node, built=built, passed=passed)
    if built.cls is not None and sets_eval(built.cls):
        return new_value(env, node, "", origin, {ModeFact("eval", node, origin)})
    return _handed_back(built, new_value(env, node, "", origin), env)


def _closure_given(builds, built: Built, env: Env) -> list[Obj]:
    """The modules a class written in this function takes from its names in `__init__`
    (`self.model = model.model`), as a construction given them would (`closure_parts`):
    only when each is in eval mode on every path, or when another method runs one at the
    capture (`return net.body(x)`: no part the class's own content shows). One that may
    be in train mode leaves the construction a fresh module in train mode, as before, and
    its message as it was. `held_parts` is handed what the class holds of them: a later
    `model.train()` reaches it."""
    found = closure_objects(builds.sem, built, env, is_module)
    if found is None or not found[3]:
        return []
    modules = [o for o in found[0] if is_module(o, env)]
    if not modules or (not found[2] and any(f.state != "eval" for o in modules for f in env.facts(o))):
        return []  # (a module `forward` runs is in no part the class's own content shows)
    if not keeps_given_modes(built, False):
        return []
    builds.closure_held[id(built.call)] = found[1]
    return modules


def _runs_closure(sem, built: Built, env: Env) -> bool | None:
    """A class written in this function whose `forward` (or another method) runs a module
    of the function (`return net.body(x)`): whatever its `__init__` evals, the capture runs
    that module in the mode it is in then. True when that is known (`closure_parts`), False
    when a switch or a helper may have changed it where the walk does not follow; None for
    any other class (as its `__init__` left it, as before)."""
    if not runs_closure(sem, built) or not keeps_given_modes(built, False):
        return None
    found = closure_objects(sem, built, env, is_module)
    if found is None or not found[2]:
        return None
    return found[3]


def _taken_parts(sem, node: ast.AST, args: list[Obj | None], env: Env) -> list[tuple[Obj, Built | None, tuple]]:
    """Arguments that are parts taken from a module named here (`Wrapper(m.encoder)`, or `enc`
    after `enc = m.encoder`): `Module.eval()`/`.train()` reach every submodule, so each part is in the
    mode of the module it was taken from; with what the part was built as, when that is
    known (for the message)."""
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        return []
    exprs = [*node.args, *(kw.value for kw in node.keywords if kw.arg)]
    if len(exprs) != len(args):
        return []
    held = sem.held_parts
    taken = []
    for obj, expr in zip(args, exprs, strict=True):
        if (obj is not None and is_module(obj, env)) or not isinstance(expr, ast.Attribute | ast.Name):
            continue  # a module is one of the `wrapped`
        path = held.path(expr, env)
        if path is not None and path[1] and is_module(path[0], env) and not _part_trained(sem, path, env):
            taken.append((path[0], part_build(sem.owner, path), path[1]))
    return taken


def _part_trained(sem, path, env: Env) -> bool:
    """A `.train()` anywhere in the function of the part at `path`, of a part inside it, or
    of a part on the way to it (`m.encoder.train()`): the walk keeps no mode per part, so
    the part's mode is not the module's."""
    root, steps = path
    for node in kept_on_node(sem.walk.func, _TRAIN_CALLS, _train_calls):
        receiver = node.func.value
        while isinstance(receiver, ast.Subscript):  # `m.encoder[1]`: a part inside `m.encoder`
            receiver = receiver.value
        switched = sem.held_parts.path(receiver, env)
        if switched is None or switched[0] != root or not switched[1]:
            continue
        short = min(len(steps), len(switched[1]))
        if switched[1][:short] == steps[:short]:
            return True
    return False


def _handed_back(built: Built, obj: Obj, env: Env) -> Obj:
    """A construction holding slots (`held_slots`) or parts fixed in eval mode (`_fixed_parts`)
    keeps the modes it was built in: a call of its building function binds them only while the
    function hands it back so, and a capture reads those parts as fixed only while it sees them."""
    if built.slots or built.fixed_parts:
        built.returned = modes_of(env.facts(obj))
    return obj


def _built_once(root: Obj, attr: str) -> bool:
    """`root` is one construction of a class whose `__init__` builds `attr` once in a statement
    of its own body and whose code touches it otherwise only by calling it (`init_parts`)."""
    builts = [o.built for o in root.origins if o.kind == CONSTRUCTED and o.built is not None]
    return (
        len(builts) == len(root.origins) == 1
        and builts[0].cls is not None
        and attr in built_in_init(builts[0].cls.node)
    )


_SEQUENTIAL = frozenset({"torch.nn.Sequential", "torch.nn.modules.container.Sequential"})


def _fixed_parts(
    func, node: ast.AST, built: Built, args: list[Obj | None], wrapped: list[Obj], env: Env
) -> dict[int, int]:
    """The positions among `wrapped` of the modules `nn.Sequential(net.eval(), nn.Linear(3, 3))`
    is handed in eval mode on every path, passed positionally, and, when passed by name, read
    nowhere else in `func` but to eval it (`_only_evaled_here`). A torch.nn container switches
    none of its parts; its own training flag is True, but only its parts' modes matter, so a
    mode-free layer beside them leaves nothing that depends on the mode. Each position maps to
    the id of the argument that passed it."""
    if not isinstance(node, ast.Call):
        return {}
    sequential = built.resolver.qualname(node.func) in _SEQUENTIAL
    if not sequential and (built.cls is None or built.cls.summarised):
        return {}
    # `Holder(net.eval(), head)` of a project class: the arguments it stores as it came.
    kept = None if sequential else stored_as_given(built, node)
    if kept is not None and not kept:
        return {}
    passed = {id(obj): expr for expr, obj in zip(node.args, args, strict=False) if obj is not None}
    out = {}
    for position, obj in enumerate(wrapped):
        expr, facts = passed.get(id(obj)), env.facts(obj)
        if expr is None or isinstance(expr, ast.Starred) or not facts or any(f.state != "eval" for f in facts):
            continue
        if kept is not None and node.args.index(expr) not in kept:
            continue
        if isinstance(expr, ast.Name) and not _only_evaled_here(func, expr.id, node):
            continue
        out[position] = id(expr)
    if out and not sequential and not keeps_given_modes(built, False):
        return {}  # the class holds something of its own found mode-dependent, or switches (`given_modes`)
    return out


def _only_evaled_here(func, name: str, node: ast.Call) -> bool:
    """`func` reads `name` only to eval it (`n.eval()`) and to hand it to the container `node`:
    no `n.train()`, no alias, no call it is handed to (a fine-tuning helper may switch it), so
    the module the container holds stays in eval mode."""
    if func is None:
        return False
    above = parents(func)
    for n in name_loads(func, name):
        parent = above.get(id(n))
        if parent is node and n in node.args:
            continue
        evaled = isinstance(parent, ast.Attribute) and parent.attr == "eval"
        if evaled and isinstance(call := above.get(id(parent)), ast.Call) and call.func is parent and not call.args:
            continue
        return False
    return True


def _argument_ids(node: ast.AST, args: list[Obj | None], wrapped: list[Obj]) -> frozenset[int] | None:
    """The ids of the arguments of `node` that pass one of `wrapped` (`Built.wrapped`); None when
    the arguments do not line up with `args` (a starred one, `**kwargs`)."""
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    exprs = [*node.args, *(kw.value for kw in node.keywords if kw.arg)]
    if len(exprs) != len(args) or len(exprs) != len(node.args) + len(node.keywords):
        return None
    ids = {id(o) for o in wrapped}
    return frozenset(id(e) for e, obj in zip(exprs, args, strict=True) if obj is not None and id(obj) in ids)


def _mirrored_arg(node: ast.AST, built: Built, args: list[Obj | None]) -> Obj | None:
    """What a construction passed for the parameter whose mode its class takes."""
    name = mirrored_param(built.cls) if built.cls is not None else None
    if name is None or not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    init = own_init(built.cls.node)
    positional = [a.arg for a in (*init.args.posonlyargs, *init.args.args[1:])]
    if name in positional and positional.index(name) < len(node.args):
        return args[positional.index(name)]
    keywords = [kw.arg for kw in node.keywords]
    if name in keywords and None not in keywords:
        return args[len(node.args) + keywords.index(name)]
    return None


def _plain_instance(obj: Obj, env: Env) -> bool:
    """An instance of a class of the project without bases (never an `nn.Module`), as its
    construction left it: nothing switched or given since."""
    for origin in obj.origins:
        built = origin.built
        if origin.kind != CONSTRUCTED or built is None or built.cls is None:
            return False
        node = built.cls.node
        if node.bases or node.keywords or not all(_dataclass(d, built.cls.scope) for d in node.decorator_list):
            return False
    return all(
        f.state == "train" and not f.parts and f.origin in obj.origins and f.node is f.origin.node
        for f in env.facts(obj)
    )


def _dataclass(decorator: ast.expr, scope) -> bool:
    """`@dataclass`, `@dataclasses.dataclass` or either called: hands back the class it is given."""
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(func, ast.Name):
        return scope.imports.get(func.id) == "dataclasses.dataclass"
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "dataclass"
        and isinstance(func.value, ast.Name)
        and scope.imports.get(func.value.id) == "dataclasses"
    )


def is_module(obj: Obj, env: Env) -> bool:
    """Known to be an nn.Module: built here, loaded pretrained, or its mode was set."""
    if obj.is_graph:
        return False
    if obj.kinds & {CONSTRUCTED, PRETRAINED}:
        return True
    return any(f.state in ("eval", "train") for f in env.facts(obj))


def _train_calls(func: ast.AST) -> tuple[ast.Call, ...]:
    """The `<x>.train(...)` calls under `func`, in `ast.walk` order: asked for each part taken
    from a module in the function's walk (kept on the function's node, one walk per body)."""
    return tuple(n for n in walk_kinds(func, _CALLS) if isinstance(n.func, ast.Attribute) and n.func.attr == "train")


_CALLS = frozenset({ast.Call})
_TRAIN_CALLS = "_qlint_train_calls"

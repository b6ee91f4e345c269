"""A project class wrapping the modules it is given: whose mode is the wrapper's.

`W(model)` with `class W(nn.Module)` storing `self.model = model` beside caches and buffers,
its forward reading no `self.training`: a construction switches none of the modules it is
given, so the wrapper is in the mode of what it holds. A local evaled module given to it
(`W(net.eval())`) made it so already (`constructed_values.construct`); a parameter of the function
building it (`def export_it(model): return export(W(model, n))`) counted as a module "built
in train mode" at that line, whatever the function's callers passed. Now the construction
takes the parameter's mode, which the callers bind (`helper_calls.apply`): an evaled model is
right to capture, a train-mode one holding batch norm or dropout is reported naming it, and
without callers it is "in whatever mode the caller left it", as a bare parameter is.

Both readings hold only while the wrapper's own content holds nothing found to depend on the
mode and its `__init__` switches nothing (`.train(...)`, `training = ...`): `W(net.eval())`
with a Dropout of its own starts that Dropout in train mode, so the construction is then in
train mode, its content naming the Dropout (`keeps_given_modes`). What the wrapper's own
parts cannot be read (a class of an uninstalled package, e.g. transformers' `StaticCache`)
counts as nothing found, as it did for a local evaled module before; classes of installed
packages are not read for this either (`class_contents.ClassContents.content_without_installed`: memory).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.built_models import Built
from qlint.analysis.flow.class_facts import mirrored_param
from qlint.analysis.flow.evaled_parts import switches_no_part
from qlint.analysis.flow.model_classes import in_check
from qlint.analysis.flow.model_values import PARAM
from qlint.analysis.names.scope import own_init, parameter_args
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk_kinds


def keeps_given_modes(built: Built, unread: bool) -> bool:
    """The construction is in the modes of the modules it is given: a torch.nn container or a
    class not resolved (as before), or a class of the project whose own content holds nothing
    found to depend on the mode and whose `__init__` switches nothing. A class of another
    module whose body no check read (`ModelClass.summarised`) is not read for this: `unread`
    answers (its content pulls in what checks otherwise never read, ~7% more peak memory on
    ExecuTorch)."""
    cls = built.cls
    if cls is not None and cls.summarised:
        return unread
    if cls is None or mirrored_param(cls) is not None:
        return True  # (`self.train(model.training)`: the mode of what it is given, again)
    if kept_on_node(cls.node, _SWITCHES, _init_switches):
        return False
    own = in_check(built.index).contents.content_without_installed(built.call, cls, built.resolver, built.name)
    return not own.dependent


def wrapped_param(cap, callee) -> int | None:
    """The parameter of the helper `callee` whose module its capture `cap` wraps: the captured
    model is one construction of a project class (`export(W(m))`) in the mode of that parameter
    as it came (`given_params`, `keeps_given_modes`), whose own content is known in full and
    holds nothing found mode-dependent, and whose call passes nothing else that may be a module
    (`W(m, 3)`). Such a wrapper is what it is given as far as the mode goes, so the caller's
    capture is of what the caller passed (its construction's content judged, `mode_free`);
    None otherwise."""
    facts, origins = cap.modes, cap.origins
    if len(origins) != 1 or not facts:
        return None
    (origin,) = origins
    built = origin.built
    if built is None or built.cls is None or built.cls.summarised or not isinstance(built.call, ast.Call):
        return None
    indexes = {f.origin.index if f.origin is not None and f.origin.kind == PARAM else None for f in facts}
    if len(indexes) != 1 or any(f.state != "unset" or f.origin.node is not callee.node for f in facts):
        return None
    (index,) = indexes
    if index is None or index >= len(callee.params) or not keeps_given_modes(built, False):
        return None
    call, name = built.call, callee.params[index]
    positions = stored_as_given(built, call)
    stored = kept_on_node(built.cls.node, _STORED, _stored_params)
    kept = stored[1] if stored else frozenset()
    wrapped = [
        *(a for i, a in enumerate(call.args) if i in positions),
        *(k.value for k in call.keywords if k.arg in kept),
    ]
    if not any(isinstance(a, ast.Name) and a.id == name for a in wrapped):
        return None
    slots = [*((i, None) for i in range(len(call.args))), *((None, k.arg) for k in call.keywords)]
    for (position, keyword), arg in zip(slots, [*call.args, *(k.value for k in call.keywords)], strict=True):
        if any(arg is a for a in wrapped):
            if not (isinstance(arg, ast.Name) and arg.id == name):
                return None  # another module it wraps
        elif not built.hyperparameter(arg, position, keyword):
            return None
    own = in_check(built.index).contents.content_without_installed(call, built.cls, built.resolver, built.name)
    return index if own.complete and not own.dependent else None


def given_params(func: ast.AST | None, node: ast.AST, built: Built, args: list, env) -> list:
    """The objects of the arguments of the construction `node` (met in `func`'s walk) that pass
    a parameter of `func` in the mode its callers left it (no switch since) and that the
    class's `__init__` stores as it came (`self.model = model`): the modules it wraps."""
    cls = built.cls
    if cls is None or cls.summarised or func is None or not isinstance(node, ast.Call):
        return []
    if any(isinstance(a, ast.Starred) for a in node.args) or any(kw.arg is None for kw in node.keywords):
        return []
    stored = kept_on_node(cls.node, _STORED, _stored_params)
    if not stored:
        return []
    names, kept = stored
    exprs = [*((names[i] if i < len(names) else None) for i in range(len(node.args))), *(k.arg for k in node.keywords)]
    out = []
    for name, obj in zip(exprs, args, strict=False):
        if name is None or name not in kept or obj is None:
            continue
        if not obj.origins or any(o.kind != PARAM or o.node is not func for o in obj.origins):
            continue
        facts = env.facts(obj)
        if facts and all(f.state == "unset" and f.origin is not None and f.origin.kind == PARAM for f in facts):
            out.append(obj)
    return out


def stored_as_given(built: Built, node: ast.Call) -> frozenset[int]:
    """The positions of `node`'s arguments whose `__init__` parameter the class stores as it
    came (`self.body = body`): the container holds that very module."""
    stored = kept_on_node(built.cls.node, _STORED, _stored_params)
    if not stored or any(isinstance(a, ast.Starred) for a in node.args):
        return frozenset()
    names, kept = stored
    return frozenset(i for i in range(min(len(node.args), len(names))) if names[i] in kept)


def evaled_arguments(built: Built, node: ast.Call, args: list) -> list:
    """The objects `node` passes for parameters the class's `__init__` evals whenever it runs
    (`self.a = a.eval()`, or `a.eval()`, a statement of its own body; the parameter never
    rebound there): `Module.eval` switches the very module the caller handed, so it is in eval
    mode after the construction, whatever mode it came in. Not for a class of another module
    no check read (`ModelClass.summarised`), a starred argument or `**kwargs`."""
    passed = _filled_parameters(built, node, _EVALED, _evaled_params)
    if passed is None:
        return []
    names, evaled = passed
    return [obj for name, obj in zip(names, args, strict=False) if obj is not None and name in evaled]


def attribute_arguments(built: Built, node: ast.Call, args: list) -> list[tuple[object, ast.expr, str]]:
    """(object, argument, attribute) for what `node` passes for a parameter the class's
    `__init__` reads only to store one attribute of it (`self.head = full.head`, a statement
    of its own body; the parameter read nowhere else, never rebound): the instance holds that
    part, not the module it was taken from (`HeadOnly(Full())` holds `Full().head`)."""
    passed = _filled_parameters(built, node, _TAKEN, _attribute_params)
    if passed is None:
        return []
    names, attrs = passed
    exprs = [*node.args, *(k.value for k in node.keywords)]
    return [(obj, e, attrs[n]) for n, e, obj in zip(names, exprs, args, strict=False) if obj is not None and n in attrs]


def _filled_parameters(built: Built, node: ast.Call, key: object, read) -> tuple[list, object] | None:
    """The `__init__` parameter each argument of `node` fills (None past the positional ones
    `read` lists), beside the rest of what `read` finds in the class, kept under `key`: None for
    a class of another module no check read (`ModelClass.summarised`), a starred argument or
    `**kwargs`, or a class where `read` finds nothing."""
    cls = built.cls
    if cls is None or cls.summarised or not isinstance(node, ast.Call):
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(kw.arg is None for kw in node.keywords):
        return None
    found = kept_on_node(cls.node, key, read)
    if not found:
        return None
    positional, rest = found
    names = [
        *((positional[i] if i < len(positional) else None) for i in range(len(node.args))),
        *(k.arg for k in node.keywords),
    ]
    return names, rest


def _attribute_params(cls: ast.ClassDef) -> tuple:
    """`__init__`'s positional parameters after `self`, and, for each one read only in a
    statement `self.<x> = <param>.<attr>` of its own body (once), that attribute; () without."""
    init = own_init(cls)
    if init is None:
        return ()
    params = [a.arg for a in parameter_args(init, star=False)][1:]
    taken = {}
    for stmt in init.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target, value = stmt.targets[0], stmt.value
        on_self = isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
        of_param = isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id in params
        if on_self and of_param:
            taken[value.value.id] = value.attr
    if not taken:  # the walks below only for the few classes with such a statement
        return ()
    rebound = set()
    loads: dict[str, int] = {}
    for n in walk_kinds(init, _NAMES):
        if isinstance(n.ctx, ast.Load):
            loads[n.id] = loads.get(n.id, 0) + 1
        else:
            rebound.add(n.id)
    attrs = {name: attr for name, attr in taken.items() if name not in rebound and loads.get(name) == 1}
    if not attrs:
        return ()
    positional = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    return (positional, attrs)


def _evaled_params(cls: ast.ClassDef) -> tuple:
    """`__init__`'s positional parameters after `self`, and those a statement of its own body
    evals (`self.a = a.eval()`, `a.eval()`) and none rebinds; () without such a statement, or
    when code of the class may switch a part back (`evaled_parts.switches_no_part`: a method
    running `self.a.train()` later)."""
    init = own_init(cls)
    if init is None:
        return ()
    params = [a.arg for a in parameter_args(init, star=False)][1:]
    rebound = {n.id for n in walk_kinds(init, _NAMES) if not isinstance(n.ctx, ast.Load)}
    evaled = set()
    for stmt in init.body:
        value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "eval"):
            continue
        receiver = value.func.value
        plain = not value.args and not value.keywords and isinstance(receiver, ast.Name)
        if plain and receiver.id in params and receiver.id not in rebound:
            evaled.add(receiver.id)
    # The walk of the whole class only for the few whose `__init__` evals a parameter.
    if not evaled or not switches_no_part(cls):
        return ()
    positional = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    return (positional, frozenset(evaled))


def _stored_params(cls: ast.ClassDef) -> tuple:
    """`__init__`'s positional parameters after `self`, and those its own statements store as
    they came (`self.model = model`, never rebound) in an attribute a method of the class runs
    as a module (`self.model(x)`): a module it wraps, not a config it keeps (`self.cfg = cfg`);
    () without such a store."""
    init = own_init(cls)
    if init is None:
        return ()
    params = [a.arg for a in parameter_args(init, star=False)]
    rebound = {n.id for n in walk_kinds(init, _NAMES) if not isinstance(n.ctx, ast.Load)}
    run = _run_attributes(cls)
    kept = set()
    for stmt in init.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
            on_self = isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
            on_self = on_self and target.value.id == "self" and target.attr in run
            if on_self and isinstance(value, ast.Name) and value.id in params[1:] and value.id not in rebound:
                kept.add(value.id)
    positional = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    return (positional, frozenset(kept)) if kept else ()


def _run_attributes(cls: ast.ClassDef) -> frozenset[str]:
    """The attributes `self.<name>(...)` calls in the class's methods."""
    return frozenset(
        n.func.attr
        for n in walk_kinds(cls, _CALLS)
        if isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"
    )


def _init_switches(cls: ast.ClassDef) -> bool:
    """`__init__` switches a module's mode: `.train(...)` of anything (not `.train(False)`),
    or sets `training`."""
    init = own_init(cls)
    if init is None:
        return False
    for node in walk_kinds(init, _SWITCH_NODES):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr == "train" and not _false(node):
                return True
        elif isinstance(node, ast.Attribute) and node.attr == "training" and not isinstance(node.ctx, ast.Load):
            return True
    return False


def _false(call: ast.Call) -> bool:
    """`.train(False)`: an eval switch."""
    args = [*call.args, *(kw.value for kw in call.keywords)]
    return len(args) == 1 and isinstance(args[0], ast.Constant) and args[0].value is False


_NAMES = frozenset({ast.Name})
_CALLS = frozenset({ast.Call})
_SWITCH_NODES = frozenset({ast.Call, ast.Attribute})
_STORED = "_qlint_given_params"
_EVALED = "_qlint_evaled_params"
_TAKEN = "_qlint_attribute_params"
_SWITCHES = "_qlint_init_switches"

"""`holder.model` of an instance built in the function, whose class's `__init__` builds the part
(issue 14, items 1 and 2): `holder = Holder()` with `self.model = Net()` in `Holder.__init__`,
then `export(holder.model, ...)`.

The read was of no known value, so neither QL201 (a train-mode capture) nor QL202 (a QAT capture
after `holder.eval()`) saw it, while a capture of `holder` itself was judged. The part is the
construction `__init__` made, and its mode follows the holder's switches: `Module.train(mode)`
sets every submodule, so an `nn.Module` holder's whole switch is the part's too, and a switch of
the part itself (`holder.model.eval()`, kept on the holder's facts by `part_switches`) is its
own. A holder that is no `nn.Module` hands nothing down: its `.eval()` is a method of its own.

Only what the class and the function guarantee is followed, else the read stays unknown (quiet):
`__init__` assigns the attribute once, in a statement of its own body (no branch), a call that
names what it builds; neither `__init__` nor another method reads it other than by calling it
(`self.model(x)`), hands `self` on, or switches `self` in `__init__`; the class's bases are
`torch.nn` classes or none. In the function, the holder is a local name used only for attribute
reads and mode switches (not handed to a call, stored, returned, or read in a nested function),
and nothing replaced the attribute (`holder.model = ...`, `add_module`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.held_parts import part_build
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_torch_nn import SELF_RETURNING_METHODS
from qlint.analysis.flow.model_values import CONSTRUCTED, CONTAINER, ModeFact, Obj, Origin
from qlint.analysis.flow.stored_fields import passed_for
from qlint.analysis.flow.switched_parts import PART_SETTERS
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import own_init
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import name_loads, parents
from qlint.value_classes import replace

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
# What a class's own code may do with `self` and stay followed: read its attributes, call
# `super()`, ask about it.
_LOOKS = frozenset({"super", "isinstance", "hasattr", "getattr", "type", "id", "len", "repr", "str"})
_MODE_CALLS = frozenset({"eval", "train"})
_SEQUENTIAL = frozenset({"torch.nn.Sequential", "torch.nn.modules.container.Sequential"})
# Methods of an `nn.Sequential` that keep the modules it holds.
_KEPT_BY = SELF_RETURNING_METHODS


def init_part(sem, holder: Obj | None, e: ast.Attribute, env: Env) -> Obj | None:
    """The value of `e` (`holder.<attr>`) when `holder` is such an instance; None otherwise."""
    found = _source(sem, holder, e.attr, e.value)
    if found is None:
        return None
    origin, module = found
    facts = _facts(env.facts(holder), e.attr, origin, module)
    if facts is None:
        return None
    obj = Obj(e, "", frozenset((origin,)))
    env.modes[obj] = facts
    return obj


def refresh(sem, receiver: Obj, env: Env) -> None:
    """After a mode switch of `receiver` (or of a part through it): the modules an `nn.Module`
    receiver stores as they were passed to its construction are switched with it (`net = Net();
    h = Stores(net); h.eval()`: `h.model` is `net`, now in eval mode); the names bound to a part
    `__init__` built (`net = holder.model`) hold its mode as the holder's facts now say, as a fresh
    read would."""
    _hand_down(sem, receiver, env, 0)
    names = sem.held_parts.names
    if not names:
        return
    for obj, (root, steps) in list(names.items()):
        if obj is receiver or len(steps) != 1 or obj not in env.modes or len(obj.origins) != 1:
            continue
        (origin,) = obj.origins
        if origin.kind != CONSTRUCTED or root not in env.modes:
            continue
        found = _source(sem, root, steps[0], None)
        if found is None or found[0] != origin:
            continue
        facts = _facts(env.facts(root), steps[0], origin, found[1])
        if facts is not None:
            env.modes[obj] = facts


def _hand_down(sem, receiver: Obj, env: Env, depth: int) -> None:
    """`Module.train(mode)` reaches the submodules: the objects the receiver's construction passed
    for the attributes its class stores take its new facts."""
    if depth > 3 or len(receiver.origins) != 1 or receiver not in env.modes:
        return
    (origin,) = receiver.origins
    built = origin.built
    if origin.kind != CONSTRUCTED or not origin.passed or built is None:
        return
    positional, keywords = origin.passed
    if built.cls is None:
        if built.resolver.qualname(built.call.func) in _SEQUENTIAL and _parts_kept(sem.walk.func, built.call):
            # `nn.Sequential(model, head)` holds the very modules it is given, positionally
            # (`held_parts`): `wrapped.eval()` evals `model` (a copy passed is another object).
            _hand_to(sem, receiver, positional, env, depth)
        return
    if not any(o is not None and o in env.modes for o in (*positional, *(o for _, o in keywords))):
        return  # nothing passed that the walk holds a mode for: the class is not read
    if _is_module(built.cls, sem.owner) is not True:
        return
    # A parameter `__init__` stores once and no method rebinds (`held_fields`, read already for
    # the construction by `held_parts`): whatever mode a method switches it to, it stays a part.
    fields = sem.owner.stored_fields(built.cls, held=True)
    _hand_to(sem, receiver, [passed_for(spec, *origin.passed) for spec in fields.values()], env, depth)


def _hand_to(sem, receiver: Obj, parts, env: Env, depth: int) -> None:
    """The receiver's new facts to each of `parts` the walk holds a mode for, and down from it."""
    facts = env.modes[receiver]
    for obj in parts:
        if obj is None or obj is receiver or obj.is_graph or obj not in env.modes or CONTAINER in obj.kinds:
            continue
        env.modes[obj] = facts
        _hand_down(sem, obj, env, depth + 1)


def _parts_kept(func: ast.AST | None, call: ast.Call) -> bool:
    """The container `call` builds is bound to a name of `func` read only for its forward
    (`wrapped(x)`) and for calls that return it or switch it (`wrapped.eval()`, `.to(d)`), in
    `func`'s own code: no item stored, deleted or inserted (`wrapped[0] = Other()`), nothing it
    is handed to, so the modules it was given are the ones it holds."""
    if func is None:
        return False
    above = parents(func)
    stmt = above.get(id(call))
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    for load in name_loads(func, stmt.targets[0].id):
        parent = above.get(id(load))
        if isinstance(parent, ast.Attribute) and parent.attr in _KEPT_BY:
            parent, load = above.get(id(parent)), parent
        if not (isinstance(parent, ast.Call) and parent.func is load):
            return False
        node = parent
        while (node := above.get(id(node))) is not None and node is not func:
            if isinstance(node, _NESTED):
                return False  # a switch the walk does not run where it is written
    return True


def _source(sem, holder: Obj | None, attr: str, spelled: ast.expr | None) -> tuple[Origin, bool] | None:
    """(the part's construction, whether the holder is an `nn.Module`) for `holder.<attr>`."""
    if holder is None or len(holder.origins) != 1 or holder.is_graph:
        return None
    (origin,) = holder.origins
    built = origin.built
    if origin.kind != CONSTRUCTED or built is None or built.cls is None:
        return None
    if (holder, attr) in sem.builds.overwritten:
        return None  # `holder.model = Other()`
    cls = built.cls
    if attr not in built_in_init(cls.node):
        return None
    if spelled is not None and (not isinstance(spelled, ast.Name) or spelled.id in _escaping(sem.walk.func)):
        return None
    module = _is_module(cls, sem.owner)
    if module is None:
        return None
    part = part_build(sem.owner, (holder, (attr,)))
    if part is None:
        return None
    return Origin(CONSTRUCTED, part.call, built=part), module


def _facts(holder_facts: frozenset[ModeFact], attr: str, origin: Origin, module: bool) -> frozenset | None:
    """The part's facts from the holder's: the holder's mode (an `nn.Module`'s reaches every
    submodule) or, for a plain holder, the mode the part was built in (train), with the switches
    of the part and of modules inside it that the holder's facts keep (`part_modes`)."""
    out = set()
    for fact in holder_facts:
        if not module:
            held = fact.origin
            if fact.state != "train" or held is None or held.kind != CONSTRUCTED or fact.node is not held.node:
                return None  # a plain holder's `.eval()` is its own method: what it does is not read
        state, node, parts = fact.state, fact.node, []
        for p in fact.parts:
            if not p.steps:
                parts.append(p)  # modules of some classes, anywhere in the holder
            elif p.steps[0] != attr:
                continue
            elif len(p.steps) == 1 and p.kinds is None:
                state, node = p.state, p.switch
                parts = [q for q in parts if not q.steps]  # `switched` left none inside it
            else:
                parts.append(replace(p, steps=p.steps[1:]))
        out.add(ModeFact(state, node, origin if fact.origin is not None else None, fact.guard, tuple(parts)))
    return frozenset(out)


def built_in_init(cls: ast.ClassDef) -> frozenset[str]:
    """The attributes `__init__` builds once in a statement of its own body and nothing else in
    the class touches except by calling them (kept on the class node)."""
    return kept_on_node(cls, "_qlint_init_parts", _init_parts)


def _init_parts(cls: ast.ClassDef) -> frozenset[str]:
    init = own_init(cls)
    if init is None or not init.args.args:
        return frozenset()
    built = set()
    for stmt in init.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call):
            target = stmt.targets[0]
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                built.add(target.attr)
    if not built:
        return frozenset()
    stores: dict[str, int] = {}
    spoiled: set[str] = set()
    for method in cls.body:
        if not isinstance(method, _FUNCTIONS):
            continue
        me = method.args.args[0].arg if method.args.args else None
        if me is None:
            continue
        up = parents(method)
        for node in name_loads(method, me):
            parent = up.get(id(node))
            if isinstance(parent, ast.Attribute):
                above = up.get(id(parent))
                use = _field_use(parent, above, method is init)
                if use == "store":
                    stores[parent.attr] = stores.get(parent.attr, 0) + 1
                elif use == "spoil":
                    spoiled.add(parent.attr)
                elif use == "switch":
                    return frozenset()  # `self.eval()` in `__init__`: where it runs decides
            elif not (isinstance(parent, ast.Call) and _looks(parent, node)):
                return frozenset()  # `self` handed on: anything may happen to its parts
    return frozenset(a for a in built if stores.get(a) == 1 and a not in spoiled)


def _field_use(attribute: ast.Attribute, parent: ast.AST, in_init: bool) -> str:
    """How a method uses `self.<attr>` (`attribute`, under `parent`): "store", "call"
    (`self.model(x)`, or a method of `self`), "switch" (`self.eval()` in `__init__`) or "spoil"."""
    if isinstance(attribute.ctx, ast.Store):
        return "store" if isinstance(parent, ast.Assign) and parent.targets == [attribute] else "spoil"
    if not isinstance(attribute.ctx, ast.Load):
        return "spoil"
    if isinstance(parent, ast.Call) and parent.func is attribute:
        if attribute.attr in _MODE_CALLS and in_init:
            return "switch"
        return "call"
    return "spoil"


def _looks(call: ast.Call, node: ast.Name) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id in _LOOKS and call.func is not node


def _escaping(func: ast.AST) -> frozenset[str]:
    """The local names of `func` used otherwise than for an attribute read or a mode switch
    (handed to a call, stored, returned, read in a nested function): kept on the function."""
    return kept_on_node(func, "_qlint_escaping_names", _escapes)


def _escapes(func: ast.AST) -> frozenset[str]:
    out: set[str] = set()
    stack = [(child, func, False) for child in ast.iter_child_nodes(func)]
    while stack:
        node, parent, nested = stack.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            attribute = isinstance(parent, ast.Attribute) and parent.value is node
            called = isinstance(parent, ast.Call) and parent.func is node  # `holder(x)`: its forward
            if nested or not (attribute or called) or (attribute and parent.attr in PART_SETTERS):
                out.add(node.id)
        inner = nested or isinstance(node, _NESTED)
        stack.extend((child, node, inner) for child in ast.iter_child_nodes(node))
    return frozenset(out)


def _is_module(cls, owner) -> bool | None:
    """Whether the class is an `nn.Module` (its bases `torch.nn` classes), is not (no base at
    all), or None (a base of another kind: its methods are not read). The bases are named in
    the class's own module: the answer is kept on the class node."""
    found = kept_on_node(cls.node, "_qlint_module_bases", lambda node: _module_bases(node, cls, owner))
    return None if found == "other" else found == "module"


def _module_bases(node: ast.ClassDef, cls, owner) -> str:
    if node.keywords:
        return "other"
    if not node.bases:
        return "plain"
    resolver = Resolver(cls.scope, owner.project, owner.optable)
    if all((resolver.qualname(base) or "").startswith("torch.nn.") for base in node.bases):
        return "module"
    return "other"


__all__ = ["built_in_init", "init_part", "refresh"]

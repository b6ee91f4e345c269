"""A class held in a registry of its own module that only hands out instances to call on.

`HANDLERS = {"ptq": PtqHandler, "copy": CopyHandler}` and `HANDLERS[kind](q).quantize(m)`:
the class name is loaded into the registry, not into a construction, so by the letter its
instances could go anywhere. They cannot when the registry is closed: written once, at
module level, as a literal, named by no other module, and every load of it in the module a
dispatch that builds an instance and calls a method on it at once (`HANDLERS[kind](q)
.quantize(m)`, `HANDLERS.get(kind)(q).quantize(m)`) or binds it to a local only ever used
that way (`handler = HANDLERS[kind](q)`), or binds the class looked up to a local only ever
called so (`cls = HANDLERS.get(kind)`, then `cls(q).quantize(m)`). Such a registry keeps its
classes' instances in the module as a construction bound to a receiver does
(`confined_instances`), and the walk reads each such method call as one of every class it
holds (`registry_dispatch`).

A list of stage instances written where a loop runs them (`for stage in [Quantize(q),
Lower()]: stage.run(artifact)`) keeps them there too, when the loop's variable is only ever
a method's receiver in its function.

Anything else (the registry stored into, updated, handed to a function, returned, iterated,
looked up by another module, a class looked up and handed on) leaves it open: its classes'
methods may be called where qlint cannot see.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.names.scope import parameter_args

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LITERALS = (ast.List, ast.Tuple)


def registered_loads(
    ctx, name: str, receiver_only: Callable[[str, ast.AST], bool], named_elsewhere: Callable[[str], bool]
) -> set[int]:
    """The ids of the loads of class `name` that are elements of a closed registry of the
    module, or constructions in a list of stages run in turn (`receiver_only(local, func)`:
    the local is only ever a method's receiver in `func`; `named_elsewhere(word)`: another
    module of the project may name it)."""
    parents, loops = _module_facts(ctx)
    out = _staged(loops, name, parents, receiver_only)
    for stmt in ctx.tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        elements = _elements(stmt.value)
        held = [e for e in elements or () if isinstance(e, ast.Name) and e.id == name]
        if not held:
            continue
        registry = stmt.targets[0].id
        if _closed(ctx.tree, registry, stmt, parents, receiver_only) and not named_elsewhere(registry):
            out.update(id(e) for e in held)
    return out


def _elements(value: ast.expr) -> list[ast.expr] | None:
    if isinstance(value, ast.Dict):
        return None if any(k is None for k in value.keys) else list(value.values)  # `**other`: open
    if isinstance(value, (ast.List, ast.Tuple)):
        return None if any(isinstance(e, ast.Starred) for e in value.elts) else list(value.elts)
    return None


def _module_facts(ctx) -> tuple[dict[int, ast.AST], list[ast.For]]:
    """Each node's parent, and the loops over a list or tuple written in place: one walk of
    the module, made for the first class some load of which is no construction."""
    found = ctx.cache.get(_FACTS)
    if found is None:
        parents: dict[int, ast.AST] = {}
        loops = []
        for node in ast.walk(ctx.tree):
            if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and isinstance(node.iter, _LITERALS):
                loops.append(node)
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
        found = ctx.cache[_FACTS] = (parents, loops)
    return found


_FACTS = "closed_registries.module_facts"


def _staged(loops: list[ast.For], name: str, parents, receiver_only) -> set[int]:
    """`for stage in [Quantize(q), Lower()]: stage.run(artifact)` in a function whose every
    read of `stage` is a method call on it: the constructions of `name` in the list."""
    out: set[int] = set()
    for loop in loops:
        built = [
            e.func
            for e in loop.iter.elts
            if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == name
        ]
        func = _enclosing(loop, parents)
        if built and func is not None and receiver_only(loop.target.id, func):
            out.update(id(b) for b in built)
    return out


def _closed(tree: ast.Module, registry: str, binding: ast.Assign, parents, receiver_only) -> bool:
    """Every other appearance of `registry` in the module is a dispatch."""
    target = binding.targets[0]
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and registry in node.names:
            return False
        if not (isinstance(node, ast.Name) and node.id == registry) or node is target:
            continue
        if not isinstance(node.ctx, ast.Load) or _shadowed(node, registry, parents):
            return False  # rebound, deleted, or a local of that name in some function (not told apart)
        lookup = _lookup(node, parents)
        if lookup is None:
            return False
        if _dispatch(parents.get(id(lookup)), lookup, parents, receiver_only):
            continue
        if not _class_bound(lookup, parents, receiver_only):
            return False
    return True


def _shadowed(node: ast.Name, registry: str, parents) -> bool:
    """A function holding the load binds a name `registry` of its own (a parameter, a local)."""
    parent = parents.get(id(node))
    while parent is not None:
        if isinstance(parent, (*_FUNCS, ast.Lambda)):
            if any(a.arg == registry for a in parameter_args(parent)):
                return True
            if not isinstance(parent, ast.Lambda) and any(_binds(n, registry) for n in ast.walk(parent)):
                return True
        parent = parents.get(id(parent))
    return False


def _binds(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)


def _lookup(node: ast.Name, parents) -> ast.expr | None:
    """`registry[key]` or `registry.get(key)`: the expression that is one of its classes."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Load):
        return parent
    if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr == "get":
        call = parents.get(id(parent))
        if isinstance(call, ast.Call) and call.func is parent and len(call.args) == 1 and not call.keywords:
            return call  # `get(key, default)`: the default is no class of the registry
    return None


def _dispatch(call: ast.AST | None, lookup: ast.expr, parents, receiver_only) -> bool:
    """`call` builds an instance of the class `lookup` gives (`lookup(...)`), which is at once
    the receiver of a method call, or bound to a local that is only ever one."""
    if not (isinstance(call, ast.Call) and call.func is lookup):
        return False
    parent = parents.get(id(call))
    if isinstance(parent, ast.Attribute) and parent.value is call:
        outer = parents.get(id(parent))
        return isinstance(outer, ast.Call) and outer.func is parent
    if isinstance(parent, ast.Assign) and parent.value is call:
        func = _enclosing(parent, parents)
        target = parent.targets[0] if len(parent.targets) == 1 else None
        return func is not None and isinstance(target, ast.Name) and receiver_only(target.id, func)
    return False


def _class_bound(lookup: ast.expr, parents, receiver_only) -> bool:
    """`cls = registry.get(key)` in a function whose every other appearance of `cls` is a
    dispatch `cls(...)` (a test `if cls is None:` included)."""
    assign = parents.get(id(lookup))
    if not (isinstance(assign, ast.Assign) and assign.value is lookup and len(assign.targets) == 1):
        return False
    target = assign.targets[0]
    func = _enclosing(assign, parents)
    if not isinstance(target, ast.Name) or func is None:
        return False
    for node in ast.walk(func):
        if not (isinstance(node, ast.Name) and node.id == target.id) or node is target:
            continue
        if not isinstance(node.ctx, ast.Load):
            return False
        parent = parents.get(id(node))
        if isinstance(parent, ast.Compare) and _none_test(parent, node):
            continue
        if not _dispatch(parent, node, parents, receiver_only):
            return False
    return True


def _none_test(compare: ast.Compare, node: ast.Name) -> bool:
    return (
        compare.left is node
        and len(compare.ops) == 1
        and isinstance(compare.ops[0], (ast.Is, ast.IsNot))
        and isinstance(compare.comparators[0], ast.Constant)
        and compare.comparators[0].value is None
    )


def _enclosing(node: ast.AST, parents) -> ast.AST | None:
    parent = parents.get(id(node))
    while parent is not None and not isinstance(parent, _FUNCS):
        if isinstance(parent, (ast.Lambda, ast.ClassDef)):
            return None
        parent = parents.get(id(parent))
    return parent


__all__ = ["registered_loads"]

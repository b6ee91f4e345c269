"""Stores that put back, over a part of a model, a kept form of the very module they replace.

`model.model = torch.compile(model.model)` and, in a loop over `model.named_children()`,
`setattr(model, name, torch.compile(child))` (or a copy of `child` that takes its whole state)
give the model no module of another mode: the call hands back what it was given in the mode it
was in (`kept_calls`, recorded as `FunctionFlow.kept`). Anything else stored there may be.

The loop's names must be its own: the key bound by the loop alone, the child by the loop or by
`child = <kept call of child>` only, and the value stored a kept call of the child or a name
every assignment binds to one; the object looped over is the one the setter writes to.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.mode_keeping import own_scope, rebound


def kept_stores(func: ast.AST | None, nodes: list[ast.AST], held: dict, kept: dict | None, chain) -> frozenset[int]:
    """The ids of the store targets and `setattr` calls among `nodes` (of `func`) that put back
    a kept form of what they replace (`chain(expr, held)`: the attributes `expr` takes from the
    model, as `switched_parts` reads them)."""
    if not kept:
        return frozenset()
    found: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute):
            given = kept.get(id(node.value))
            target = node.targets[0]
            if given is not None and _same_part(chain(target, held), chain(given, held)):
                found.add(id(target))
        elif isinstance(node, ast.For) and func is not None:
            found.update(_loop_setters(node, func, held, kept, chain))
    return frozenset(found)


def _same_part(a, b) -> bool:
    return isinstance(a, tuple) and a == b


def _loop_setters(loop: ast.For, func: ast.AST, held: dict, kept: dict, chain) -> list[int]:
    """`for key, child in owner.named_children(): setattr(owner, key, <kept child>)`."""
    target, it = loop.target, loop.iter
    if not (
        isinstance(target, ast.Tuple)
        and len(target.elts) == 2
        and all(isinstance(e, ast.Name) for e in target.elts)
        and isinstance(it, ast.Call)
        and isinstance(it.func, ast.Attribute)
        and it.func.attr == "named_children"
        and not it.args
        and not it.keywords
    ):
        return []
    owner = chain(it.func.value, held)
    if not isinstance(owner, tuple):
        return []
    key, child = (e.id for e in target.elts)
    scope = list(own_scope(func))
    body = [n for stmt in loop.body for n in ast.walk(stmt)]
    # In the body the key is the loop's, and the child the loop's or a kept call's of it.
    if key == child or _stores(body, key) or _declared(func, scope, key) or _declared(func, scope, child):
        return []
    values = _assigned(body, child)
    if values is None or not all(_kept_of(v, child, kept) for v in values):
        return []
    out = []
    for node in body:
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "setattr"
            and len(node.args) == 3
            and not node.keywords
        ):
            continue
        obj, name, value = node.args
        if not (isinstance(name, ast.Name) and name.id == key and chain(obj, held) == owner):
            continue
        if _kept_child(value, child, func, scope, body, kept):
            out.append(id(node))
    return out


def _kept_child(
    value: ast.expr, child: str, func: ast.AST, scope: list[ast.AST], body: list[ast.AST], kept: dict
) -> bool:
    """`value` is the loop's child (as the loop or a kept call of it bound it), a kept call of
    it, or a name bound only in the loop's body, each time to a kept call of it."""
    if isinstance(value, ast.Call):
        return _kept_of(value, child, kept)
    if not isinstance(value, ast.Name):
        return False
    if value.id == child:
        return True  # its bindings in the body were checked with the loop
    if _declared(func, scope, value.id):
        return False
    values = _assigned(body, value.id)
    return (
        bool(values)
        and len(_stores(scope, value.id)) == len(_stores(body, value.id))
        and all(_kept_of(v, child, kept) for v in values)
    )


def _kept_of(value: ast.expr, child: str, kept: dict) -> bool:
    given = kept.get(id(value))
    return isinstance(given, ast.Name) and given.id == child


def _stores(scope: list[ast.AST], name: str) -> list[ast.Name]:
    return [n for n in scope if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]


def _declared(func: ast.AST, scope: list[ast.AST], name: str) -> bool:
    """`name` is declared global or nonlocal (in `func` or a function in it), imported, or a
    `def`/`class` of the scope."""
    if rebound(func, name):
        return True
    for node in scope:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            (a.asname or a.name.split(".")[0]) == name for a in node.names
        ):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
    return False


def _assigned(nodes: list[ast.AST], name: str) -> list[ast.expr] | None:
    """What each `name = value` among `nodes` binds, when those are all their stores of it
    (no loop, `with`, unpacking, `+=` or `:=` of it)."""
    values = []
    plain = 0
    for node in nodes:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            values.append(node.value)
            plain += sum(1 for t in node.targets if isinstance(t, ast.Name) and t.id == name)
    return values if len(_stores(nodes, name)) == plain else None


__all__ = ["kept_stores"]

"""Children replaced by converted graphs or evaled modules: no part that makes the mode matter.

torchao's `test_mixing_qat_ptq` quantizes some children of a model on their own and puts
each back with `setattr(model, name, converted)` in a loop over `named_children()` before it
captures the whole model. A store of a part after the build usually means the model may hold
more than its class says (`capture_content.changed_after_build`); these stores do not:

- a converted graph (`convert_pt2e(...)`): its behaviour was fixed by the capture that made it
  (judged there, as `replaced_parts` says), and a whole-model `.train()`/`.eval()` changes no
  graph;
- an evaled module (`child.eval()`): its parts stay in eval mode while nothing switches the
  whole model again. Only that caller knows (`mode_free`: a model never switched), so these
  stores are told apart from the converted ones.

Read by syntax, in the function that stores: `setattr(obj, key, value)` or
`obj._modules[key] = value`, where `value` is such a call, or a name every binding of which in
the function is one (`converted = convert_pt2e(child)`, then `setattr(model, name, converted)`).
A name also bound by a loop, a parameter, an unpacking or a second kind of value is not.

A loop that puts a converted graph in the place of a child on every pass (`looped_children`)
also tells which parts are gone: the names it iterates (`for name in ("conv_bn", "head")`), or
every child (`for name, child in model.named_children()`); `replaced_parts` then leaves those
parts of the class out of what the model holds. Every pass: the store is a statement of the
loop's own body, and nothing in the body leaves the pass early or rebinds the names read.
"""

from __future__ import annotations

import ast

from qlint.analysis import tree_walk
from qlint.analysis.flow.model_apis import last_name

CONVERTED = "converted"
EVALED = "evaled"
EVERY_CHILD = "*"  # `looped_children`: the loop replaces every child (no attribute is named so)


def replacement_kind(node: ast.AST, fn: ast.AST) -> str | None:
    """CONVERTED or EVALED when `node` stores a child whose value is one (see above), else None."""
    value = _stored_child(node)
    if value is None:
        return None
    kind = _call_kind(value)
    if kind is None and isinstance(value, ast.Name):
        kind = _bound_kind(fn, value.id)
    return kind


def _stored_child(node: ast.AST) -> ast.expr | None:
    """The value of `setattr(obj, key, value)` or `obj._modules[key] = value`."""
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "setattr" and len(node.args) == 3 and not node.keywords:
            return node.args[2]
        return None
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Attribute)
            and target.value.attr == "_modules"
        ):
            return node.value
    return None


def _call_kind(value: ast.expr) -> str | None:
    if not isinstance(value, ast.Call):
        return None
    if last_name(value.func) == "convert_pt2e":
        return CONVERTED
    if isinstance(value.func, ast.Attribute) and value.func.attr == "eval" and not value.args and not value.keywords:
        return EVALED
    return None


def _bound_kind(fn: ast.AST, name: str) -> str | None:
    """The one kind every binding of `name` in `fn`'s own code gives it, or None."""
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = fn.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        if any(a is not None and a.arg == name for a in every):
            return None
    kinds: set[str | None] = set()
    plain: set[int] = set()  # the ids of the names bound as the single target of an `=`
    nodes = tree_walk.own_nodes(fn)
    for node in nodes:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            kinds.add(_call_kind(node.value) if len(node.targets) == 1 else None)
            plain.add(id(node.targets[0]))
    for node in nodes:
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            if id(node) not in plain:
                return None  # a loop, `with ... as`, an unpacking, `+=`, a walrus, `del`, ...
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
    return kinds.pop() if len(kinds) == 1 else None


def looped_children(loop: ast.stmt, name: str, fn: ast.AST) -> tuple[frozenset[str], list[int]] | None:
    """The attributes of `name` a `for` loop replaces by converted graphs on every pass
    ({EVERY_CHILD} for a loop over its `named_children()`), with the rows of the stores."""
    if not isinstance(loop, ast.For) or loop.orelse:
        return None
    target, items = loop.target, loop.iter
    if isinstance(target, ast.Name) and isinstance(items, (ast.Tuple, ast.List)):
        if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in items.elts):
            return None
        attrs, key = frozenset(e.value for e in items.elts), target.id
    elif _children_of(items, name) and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        first = target.elts[0]
        if not isinstance(first, ast.Name):
            return None
        attrs, key = frozenset({EVERY_CHILD}), first.id
    else:
        return None
    for node in ast.walk(loop):
        if isinstance(node, (ast.Break, ast.Continue, ast.Return, ast.Raise, ast.Yield, ast.YieldFrom)):
            return None  # a pass may end before its store (a nested loop's `break` too: read simply)
        rebound = isinstance(node, ast.Name) and node.id in (name, key) and not isinstance(node.ctx, ast.Load)
        if rebound and node is not target and node not in getattr(target, "elts", ()):
            return None
    rows = [
        stmt.lineno
        for stmt in loop.body
        if _stores_child_of(stmt, name, key) and replacement_kind(_store_node(stmt), fn) == CONVERTED
    ]
    return (attrs, rows) if rows else None


def _children_of(items: ast.expr, name: str) -> bool:
    """`name.named_children()`."""
    return (
        isinstance(items, ast.Call)
        and not items.args
        and not items.keywords
        and isinstance(items.func, ast.Attribute)
        and items.func.attr == "named_children"
        and isinstance(items.func.value, ast.Name)
        and items.func.value.id == name
    )


def _store_node(stmt: ast.stmt) -> ast.AST:
    return stmt.value if isinstance(stmt, ast.Expr) else stmt


def _stores_child_of(stmt: ast.stmt, name: str, key: str) -> bool:
    """`setattr(name, key, ...)` or `name._modules[key] = ...` as a statement."""
    node = _store_node(stmt)
    if isinstance(node, ast.Call) and _stored_child(node) is not None:
        obj, attr = node.args[0], node.args[1]
    elif isinstance(node, ast.Assign) and _stored_child(node) is not None:
        sub = node.targets[0]
        obj, attr = sub.value.value, sub.slice
    else:
        return False
    return _is_name(obj, name) and _is_name(attr, key)


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


__all__ = ["CONVERTED", "EVALED", "EVERY_CHILD", "looped_children", "replacement_kind"]

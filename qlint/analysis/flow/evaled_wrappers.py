"""A wrapper written in a function around a model that function put in eval mode.

`inner = Net().eval()`, then a class written beside it storing `self.inner = inner`, then the
capture of a fresh instance of that class: the wrapper starts in train mode, but a module's
mode is its own, and a construction does not switch its children; `inner` and every part of
it stay in eval mode, so only what the wrapper itself holds can make its mode matter.
`stored_values` counts `inner` as an unknown part; this says when it is known to be evaled.

Read from the function's syntax, conservatively: the name is bound once, by a statement of the
function's own body (no branch, loop or `try` around it); it is evaled there (`= X.eval()`) or
by a later statement of that body (`inner.eval()`), before the statement that builds the
wrapper; nothing in the function, the wrapper included, reads `.train` or `.training` of
anything, binds another name or object to it, or reads it in a function or lambda other than
the wrapper's methods. What the function hands it to or gives it is asked by the caller
(`capture_content`), as for the wrapper itself.
"""

from __future__ import annotations

import ast

from qlint.analysis import tree_walk
from qlint.analysis.flow.stored_values import local_values, object_names, stored_names
from qlint.analysis.names.scope import parameter_args

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def evaled_candidates(func: ast.AST | None, cls: ast.ClassDef, call: ast.Call) -> frozenset[str]:
    """The names `cls` (written in `func`) stores that hold a model `func` evaled before the
    statement building it with `call`, on the syntax alone (see the module docstring)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return frozenset()
    nodes = tree_walk.own_nodes(func)
    if not any(n is cls for n in nodes):
        return frozenset()  # not written in this function: its free names are not this function's
    params = {a.arg for a in parameter_args(func)}
    bound = local_values(nodes)
    built_at = _statement_of(func.body, call)
    if built_at is None:
        return frozenset()
    out = set()
    for name in {n.id for n in stored_names(cls)}:
        if name in params or len(bound.get(name, ())) != 1:
            continue
        evaled_at = _evaled_at(func.body, name)
        if evaled_at is not None and evaled_at < built_at and _untouched(func, cls, nodes, name):
            out.add(name)
    return frozenset(out)


def _statement_of(body: list[ast.stmt], node: ast.AST) -> int | None:
    """The position in `body` of the statement holding `node`."""
    for i, stmt in enumerate(body):
        if stmt.lineno <= node.lineno and node.end_lineno <= stmt.end_lineno:
            return i
    return None


def _evaled_at(body: list[ast.stmt], name: str) -> int | None:
    """Where in `body` the one binding of `name` (a statement of it) leaves it in eval mode."""
    for i, stmt in enumerate(body):
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target = stmt.targets[0]
        if not (isinstance(target, ast.Name) and target.id == name):
            continue
        if _eval_call(stmt.value):
            return i
        for j in range(i + 1, len(body)):
            later = body[j]
            if isinstance(later, ast.Expr) and _eval_call(later.value, name):
                return j
        return None
    return None


def _eval_call(value: ast.expr, name: str | None = None) -> bool:
    """`X.eval()` (with `name`: `name.eval()`), with no argument."""
    if not (isinstance(value, ast.Call) and not value.args and not value.keywords):
        return False
    func = value.func
    if not (isinstance(func, ast.Attribute) and func.attr == "eval"):
        return False
    return name is None or (isinstance(func.value, ast.Name) and func.value.id == name)


def _untouched(func: ast.AST, cls: ast.ClassDef, nodes: list[ast.AST], name: str) -> bool:
    """Nothing switches `name` back or reaches it another way: no `.train` or `.training` in
    the function at all (`wrapper.inner.train()` switches it through the wrapper), no other
    binding made from it, no read of it in a function or lambda other than the wrapper's
    methods."""
    inside = {id(n) for n in tree_walk.walk(cls)}
    for node in tree_walk.walk(func):
        if isinstance(node, ast.Attribute) and node.attr in ("train", "training"):
            return False  # a switch of anything here may reach it (`wrapper.inner.train()`)
        if isinstance(node, _SCOPES) and node is not func and id(node) not in inside:
            if any(isinstance(n, ast.Name) and n.id == name for n in tree_walk.walk(node)):
                return False
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
    # `alias = inner`, `holder.m = inner`: reached another way.
    binds = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)
    values = [n.value for n in nodes if isinstance(n, binds) and n.value is not None]
    return not any(n.id == name for value in values for n in object_names(value))

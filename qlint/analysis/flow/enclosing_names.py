"""Where a free name of a function is bound: the module's top level, or a function it is
written in (`applied_lambdas`: `to_eval = lambda m: m.eval()` in a test, `m.apply(to_eval)` in
a helper written there).

A function written in another reads a name it does not bind from the nearest enclosing
function that binds it, else from the module (class bodies on the way are no scope of its
names). Read from the syntax of the top-level function holding it: every way a function binds
a name counts (assignments, loop and `with` targets, `del`, imports, `def` and `class`,
parameters, `except ... as`), so an enclosing function binds the name once only when exactly
one of these names it; a `global` or `nonlocal` of the name anywhere there, or a function
the module's tables do not hold (a class written in a class), is not read.
"""

from __future__ import annotations

import ast

from qlint.analysis.names.scope import ModuleScope, parameter_args
from qlint.analysis.names.summary import held_entry
from qlint.analysis.tree_walk import own_nodes, parents, walk

MODULE = "module"
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def binding_scope(scope: ModuleScope, func: ast.AST, class_scope, name: str) -> str | ast.AST | None:
    """MODULE when `name`, free in `func`, is the module's; the enclosing function binding it
    (`bindings` tells how); None when that is not known."""
    if isinstance(func, ast.Module):
        return MODULE
    fname = getattr(func, "name", None)
    # Identities only (`held_entry`, not the tables' reads of bodies): where the function
    # stands is the module's outline, which an edit of one body leaves as it was.
    if class_scope is None and held_entry(scope.functions, fname) is func:
        return MODULE
    if (
        class_scope is not None
        and held_entry(scope.classes, class_scope.key_node().name) is class_scope
        and held_entry(class_scope.methods, fname) is func
    ):
        return MODULE
    top = _holding(scope, func)
    if top is None or any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in walk(top)):
        return None
    tree_parents = parents(top)
    node = func
    while node is not top:
        node = tree_parents.get(id(node))
        if node is None:
            return None
        if isinstance(node, _FUNCTIONS) and bindings(node, name):
            return node
    return MODULE


def bindings(func: ast.AST, name: str) -> list[ast.AST]:
    """The nodes of `func`'s own code that bind `name` (a comprehension's target counts too:
    more than the function binds, never less)."""
    out: list[ast.AST] = [a for a in parameter_args(func) if a.arg == name]
    for node in own_nodes(func):
        if node is not func and name in _bound(node):
            out.append(node)
    return out


def binding_table(func: ast.AST) -> dict[str | None, list[ast.AST]]:
    """`bindings` of every name `func` binds, in one walk of its code."""
    out: dict[str | None, list[ast.AST]] = {}
    for arg in parameter_args(func):
        out.setdefault(arg.arg, []).append(arg)
    for node in own_nodes(func):
        if node is not func:
            for name in _bound(node):
                out.setdefault(name, []).append(node)
    return out


def _bound(node: ast.AST) -> tuple[str | None, ...]:
    """The names `node` binds by itself."""
    if isinstance(node, ast.Name):
        return () if isinstance(node.ctx, ast.Load) else (node.id,)
    if isinstance(node, (*_FUNCTIONS, ast.ClassDef, ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return (node.name,)
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return tuple(a.asname or a.name.split(".")[0] for a in node.names)
    if isinstance(node, ast.MatchMapping):
        return (node.rest,)
    return ()


def assigned_once(func: ast.AST, name: str) -> ast.expr | None:
    """The value of `name = value`, when that is the one binding of `name` in `func`."""
    found = bindings(func, name)
    if len(found) != 1 or not isinstance(found[0], ast.Name):
        return None
    stmt = parents(func).get(id(found[0]))
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is found[0]:
        return stmt.value
    return None


def _holding(scope: ModuleScope, func: ast.AST) -> ast.AST | None:
    """The top-level function (or method of a top-level class) whose rows hold `func`, read
    through the scope's tables (a read of its body, as the carrying of flows counts it)."""
    row = getattr(func, "lineno", None)
    if row is None or not isinstance(scope.functions, dict):
        return None  # a summarised module's tables (`summary.held_entry`): their outline is not read here
    for fname, top in dict.items(scope.functions):
        if top.lineno <= row <= top.end_lineno:
            return scope.functions[fname]
    for cls in dict.values(scope.classes):
        node = cls.key_node()
        if node.lineno <= row <= node.end_lineno:
            for mname, method in dict.items(cls.methods):
                if method.lineno <= row <= method.end_lineno:
                    return cls.methods[mname]
    return None


__all__ = ["MODULE", "assigned_once", "binding_scope", "binding_table", "bindings"]

"""The statement lists of a function's own body (`statement_lists`) and the `f(...)` call
statements in them, indexed by callee in one walk kept on the module's tree
(`call_statements`): the passes a check asks about (`stripped_later`, `compiled_next`) are
found by name there instead of by a walk of the whole module each.
"""

from __future__ import annotations

import ast

from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import name_loads, walk_kinds

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Statements that cannot leave the statement list early nor hold another one.
SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Import, ast.ImportFrom, ast.Pass)


def calls_of(tree: ast.Module, name: str) -> list[tuple[ast.AST, list[ast.stmt], int]] | None:
    """Each `name(x)` statement of the module: (the function holding it, its statement list,
    its index). None when the name is used otherwise (handed on, called in an expression, at
    module level): what runs it then is not known."""
    uses = name_loads(tree, name)
    if not uses:
        return None  # not even named: no walk (asked for every insertion into a graph parameter)
    sites = call_sites(tree, name)
    found = [(owner, stmts, i) for owner, stmts, i in sites if call_statement(stmts[i], name) is not None]
    return found if found and len(uses) == len(found) else None


def call_statements(tree: ast.AST) -> dict[str, list[tuple[ast.AST, list[ast.stmt], int]]]:
    """The `f(...)` statements of the functions under `tree` (`tree` itself if one), by the
    name `f`: (the function or, for `tree` itself, None; its statement list; the index), in
    `ast.walk` order of the functions. One walk, kept on `tree`, for every pass the check asks
    about (`call_sites`). Shared: not to be changed."""
    return kept_on_node(tree, _CALL_STATEMENTS, _index_call_statements)


def call_sites(tree: ast.AST, name: str) -> list[tuple[ast.AST, list[ast.stmt], int]]:
    """`call_statements(tree)`'s statements calling `name`, each with its function."""
    sites = call_statements(tree).get(name, ())
    if type(tree) not in _FUNC_KINDS:
        return sites
    return [(tree if owner is None else owner, stmts, index) for owner, stmts, index in sites]


def _index_call_statements(tree: ast.AST) -> dict[str, list[tuple[ast.AST | None, list[ast.stmt], int]]]:
    found: dict[str, list[tuple[ast.AST | None, list[ast.stmt], int]]] = {}
    for func in walk_kinds(tree, _FUNC_KINDS):
        # A function's own statements are under None: the index is kept on it (`node_memo`).
        owner = None if func is tree else func
        for stmts in statement_lists(func):
            for index, stmt in enumerate(stmts):
                if (
                    isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Call)
                    and isinstance(stmt.value.func, ast.Name)
                ):
                    found.setdefault(stmt.value.func.id, []).append((owner, stmts, index))
    return found


_CALL_STATEMENTS = "_qlint_call_statements"
_FUNC_KINDS = frozenset(_FUNCS)


def statement_lists(func: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists of a function's own body (not of its nested functions)."""
    out = []
    todo = [func]
    while todo:
        node = todo.pop()
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            value = getattr(node, field, None)
            if not isinstance(value, list):
                continue
            stmts = [s for s in value if isinstance(s, ast.stmt)]
            if stmts:
                out.append(stmts)
            todo.extend(s for s in value if not isinstance(s, (*_FUNCS, ast.ClassDef, ast.Lambda)))
    return out


def call_statement(stmt: ast.stmt, name: str) -> str | None:
    """The graph's name in `name(graph)` written as a statement of its own."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    if not (isinstance(call.func, ast.Name) and call.func.id == name):
        return None
    if call.args and isinstance(call.args[0], ast.Name):
        return call.args[0].id
    return None

"""Split a module into bodies: each function, class body and the module itself.

Rules that resolve local names need to know which body an expression sits in. The split
walks statements only; expressions are walked on demand and only on the lines a rule's
trigger text appears on, which is what keeps the linter near the speed of the parser.
"""

from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator

from qlint.analysis.names.local_imports import LocalNames, bind_imports
from qlint.analysis.names.scope import ClassScope, ModuleScope, bind_local, parameters
from qlint.analysis.node_memo import kept_on_node, kept_on_node_by
from qlint.analysis.statement_walk import statement_lists
from qlint.analysis.tree_walk import spans_rows, walk, walk_kinds

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_NESTED = ("body", "orelse", "finalbody", "handlers", "cases")
_CACHE_KEY = "functions.bodies"
_LOCAL = "_qlint_body_local"
# `Body.nodes` walks with rows, kept on the function or class node: (kinds, its rows) -> nodes.
_WALKS = "_qlint_body_walks"
_WALKS_KEPT = 16
# Statements `bind_local` records something for (the others bind nothing it tracks).
_BINDING = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)
_IMPORTS = frozenset((ast.Import, ast.ImportFrom))
_FUNC_TYPES = frozenset(_FUNCS)
_BINDING_TYPES = frozenset(_BINDING)
# Statements that hold statements; every other kind is a leaf of the statement tree.
_COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    getattr(ast, "TryStar", ast.Try),
    ast.Match,
)
_COMPOUND_TYPES = frozenset(_COMPOUND)


class Body:
    """`node`: Module, FunctionDef, AsyncFunctionDef or ClassDef; `stmts`: its statements,
    nested ones included (not those of nested functions and classes), in source order;
    `local`: a function's parameters and local bindings (empty for other bodies)."""

    __slots__ = ("_local", "class_scope", "node", "stmts")

    def __init__(
        self,
        node: ast.AST,
        local: dict[str, list[ast.AST]] | None,
        class_scope: ClassScope | None,
        stmts: list[ast.stmt] | None = None,
    ):
        self.node = node
        self._local = local  # None: a function's, bound when first asked
        self.class_scope = class_scope
        self.stmts = stmts if stmts is not None else []

    @property
    def local(self) -> dict[str, list[ast.AST]]:
        # Rules read the bindings of the few functions spanning their rows: binding every
        # function's statements up front cost most of the split on big modules.
        # Kept on the node too: an editor's next check reuses the unchanged functions' nodes
        # (`statement_reuse`), whose statements bind what they bound.
        if self._local is None:
            self._local = kept_on_node(self.node, _LOCAL, self._bind)
        return self._local

    def _bind(self, node: ast.AST) -> dict[str, list[ast.AST]]:
        local = LocalNames(parameters(node))
        for stmt in self.stmts:
            if type(stmt) in _BINDING_TYPES:
                bind_local(local, stmt)
            elif type(stmt) in _IMPORTS:
                bind_imports(local, stmt)
            elif type(stmt) in _FUNC_TYPES:
                # Not a binding `bind_local` records: a lazy import's callable (`callable_results`).
                local.functions.setdefault(stmt.name, []).append(stmt)
        return local

    def __repr__(self) -> str:
        return f"Body({type(self.node).__name__} at row {getattr(self.node, 'lineno', 1)})"

    def nodes(
        self, lines: frozenset[int] | set[int] | None = None, kinds: frozenset[type] | None = None
    ) -> Iterable[ast.AST]:
        """Statements of this body and the expressions they hold (lambdas and comprehensions
        included, nested function bodies not). With `lines`, only statements and expressions
        that span one of those lines are walked; with `kinds`, only nodes of those types are
        yielded (the same ones, in the same order)."""
        if lines is None:
            return self._walk(None, kinds)
        rows = _sorted(lines)
        node = self.node
        if type(node) is ast.Module:
            return self._walk(rows, kinds)
        first, end = node.lineno, node.end_lineno or node.lineno
        low = bisect_left(rows, first)
        if low == len(rows) or rows[low] > end:
            return ()  # its statements lie within its rows: none spans one (most methods of a class)
        # A function's or class's statements lie within its rows, so what the walk yields
        # depends on its subtree and on the rows among its own alone: kept on the node, it
        # answers the next check of an editor, which reuses the unchanged functions' nodes
        # (`statement_reuse`), for every rule walking them with the same rows.
        key = (kinds, tuple(rows[low : bisect_right(rows, end, low)]))
        return kept_on_node_by(node, _WALKS, key, _WALKS_KEPT, lambda: tuple(self._walk(rows, kinds)))

    def _walk(self, rows: list[int] | None, kinds: frozenset[type] | None) -> Iterator[ast.AST]:
        last = len(rows) if rows is not None else 0
        for stmt in self.stmts:
            if rows is not None:
                i = bisect_left(rows, stmt.lineno)
                if i == last or rows[i] > stmt.end_lineno:
                    continue
            if kinds is None or type(stmt) in kinds:
                yield stmt
            for name in _EXPR_FIELDS.get(type(stmt)) or _expr_fields(type(stmt)):
                value = getattr(stmt, name, None)
                for expr in value if isinstance(value, list) else (value,):
                    if isinstance(expr, ast.AST) and (rows is None or spans_rows(expr, rows)):
                        yield from walk(expr) if kinds is None else walk_kinds(expr, kinds)


# The fields of a statement that hold expressions, not the statements nested in it (each
# is a statement of the body in its own right): `ast.iter_fields` order, found once per class.
_EXPR_FIELDS: dict[type, tuple[str, ...]] = {}


def _expr_fields(cls: type) -> tuple[str, ...]:
    fields = _EXPR_FIELDS[cls] = tuple(f for f in cls._fields if f not in _NESTED)
    return fields


# Rules walk every body with the same row set: sort it once, not once per body. The entry
# holds the set itself, so its id cannot be reused while it is cached.
_last_sorted: tuple[object, list[int]] | None = None


def _sorted(lines: frozenset[int] | set[int]) -> list[int]:
    global _last_sorted
    last = _last_sorted
    if last is not None and last[0] is lines and isinstance(lines, frozenset):
        return last[1]
    rows = sorted(lines)
    _last_sorted = (lines, rows)
    return rows


def bodies(tree: ast.Module, scope: ModuleScope, cache: dict | None = None) -> list[Body]:
    if cache is not None and _CACHE_KEY in cache:
        return cache[_CACHE_KEY]
    module = Body(tree, {}, None)
    out = [module]
    stack: list[tuple[ast.stmt, Body, ClassScope | None]] = [(s, module, None) for s in reversed(tree.body)]
    pop, push = stack.pop, stack.append
    # Node types, not isinstance chains: two thousand statements per big module.
    while stack:
        stmt, body, cls = pop()
        body.stmts.append(stmt)
        kind = type(stmt)
        if kind is ast.ClassDef:
            cls_scope = scope.classes.get(stmt.name) if body is module else ClassScope.build(stmt)
            inner = Body(stmt, {}, None)
            out.append(inner)
            stack.extend((s, inner, cls_scope) for s in reversed(stmt.body))
        elif kind in _FUNC_TYPES:
            inner = Body(stmt, None, cls if type(body.node) is ast.ClassDef else None)
            out.append(inner)
            stack.extend((s, inner, None) for s in reversed(stmt.body))
        else:
            if kind in _COMPOUND_TYPES:
                for child in _child_statements(stmt):
                    push((child, body, cls))
    if cache is not None:
        cache[_CACHE_KEY] = out
    return out


def module_function(body: Body | None, scope: ModuleScope) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function `body` is, when the module defines it at its top level under its name (not a
    method, a nested function, or one its name was bound to anew)."""
    if body is None or not isinstance(body.node, _FUNCS):
        return None
    return body.node if scope.functions.get(body.node.name) is body.node else None


def innermost_body(tree: ast.Module, scope: ModuleScope, cache: dict | None, row: int) -> Body | None:
    """The body of the innermost function holding `row` (None at module level)."""
    inner = None
    for body in bodies(tree, scope, cache):
        func = body.node
        if (
            type(func) in _FUNC_TYPES
            and func.lineno <= row <= (func.end_lineno or row)
            and (inner is None or func.lineno >= inner.node.lineno)
        ):
            inner = body
    return inner


def _child_statements(stmt: ast.stmt) -> Iterator[ast.stmt]:
    return reversed([child for block in statement_lists(stmt) for child in block])

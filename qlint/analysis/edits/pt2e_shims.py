"""Old PT2E imports that are compatibility paths, not breaks (QL401's quiet cases).

An import from `torch.ao.quantization`'s removed modules breaks nothing on torch 2.13 when it
is one branch of a fallback whose other branch binds the same names (`try`/`except
ImportError`, `if`/`else`), sits under a torch-version check torch 2.13 does not take, or
follows a shim's old import in the same `try` body (that one raises first). What is not
one: a fallback whose `try` body's import fails itself with torchao 0.18, so the handler's
old import runs on torch 2.13 and raises there. The table of what moved and where it
fails is `pt2e_moves`; the branch reading is `import_edits.guarded`.
"""

from __future__ import annotations

import ast
from collections import deque

from qlint.analysis.context import FileContext
from qlint.analysis.edits import import_edits as ie
from qlint.analysis.edits.pt2e_moves import OLD_PACKAGE, Moves
from qlint.analysis.tree_walk import parents as tree_parents
from qlint.analysis.version_gates import ModuleConstants

_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))


def after_shim(ctx: FileContext, moves: Moves, stmt: ast.stmt, parents) -> bool:
    """An old import placed after a shim's old import in the same `try` body.

    The earlier import is a compatibility path (its handler imports the same names from
    elsewhere): on torch 2.13 it raises, the handler runs, and nothing after it in the body
    does. This one runs only where the old package still imports, so it breaks nothing on
    2.13; the handler's own imports are judged as ever. An earlier import that is itself
    reported (no working alternative) quiets nothing: fixing it makes this one run.
    """
    parent = parents.get(id(stmt))
    if not isinstance(parent, _TRY) or stmt not in parent.body:
        return False
    if not any(ie.catches_import_failure(h) for h in parent.handlers):
        return False
    for earlier in parent.body[: parent.body.index(stmt)]:
        names = _old_import_names(ctx, moves, earlier)
        if names and guarded(ctx, moves, earlier, parents, names):
            return True
    return False


def guarded(ctx: FileContext, moves: Moves, stmt: ast.stmt, parents, names: set[str]) -> bool:
    """`ie.guarded`, where a `try` body's import that fails with torchao 0.18 (`from
    torchao.quantization.pt2e import prepare_pt2e`: it is in `.quantize_pt2e`) is no working
    alternative: the handler's old import runs on torch 2.13 and raises there."""
    return ie.guarded(stmt, parents, names, versions(ctx), lambda s: _failing_module(ctx, moves, s) is not None)


def _failing_module(ctx: FileContext, moves: Moves, stmt: ast.stmt) -> str | None:
    """The module `stmt` imports from (or imports) where the table shows it failing."""
    if isinstance(stmt, ast.ImportFrom):
        base = ie.import_base(ctx, stmt)
        if base is not None and (moves.lacks(base) or any(moves.lacks(base, a.name) for a in stmt.names)):
            return base
    elif isinstance(stmt, ast.Import):
        return next((a.name for a in stmt.names if moves.lacks(a.name)), None)
    return None


def reached_handler(ctx: FileContext, moves: Moves, stmt: ast.stmt, parents) -> str:
    """A subject's tail when `stmt` sits in an import-error handler that runs because its `try`
    body's import fails (the user wrote it as a fallback: say why it is not one)."""
    child, parent = stmt, parents.get(id(stmt))
    while isinstance(parent, (*_TRY, ast.ExceptHandler)):
        if isinstance(parent, _TRY) and child in parent.handlers:
            failing = next((m for s in parent.body if (m := _failing_module(ctx, moves, s))), None)
            if failing is not None:
                return f" (the `try` body's import from `{failing}` fails with torchao 0.18, so this handler runs)"
        child, parent = parent, parents.get(id(parent))
    return ""


def _old_import_names(ctx: FileContext, moves: Moves, stmt: ast.stmt) -> set[str]:
    """The names `stmt` binds from where torch 2.13 has nothing (empty: it imports there)."""
    if isinstance(stmt, ast.ImportFrom):
        base = ie.import_base(ctx, stmt)
        if base is None or not (base == OLD_PACKAGE or moves.removed_module(base)):
            return set()
        return {
            a.asname or a.name
            for a in stmt.names
            if (moves.find(f"{base}.{a.name}") if a.name != "*" else moves.find(base)) is not None
        }
    if isinstance(stmt, ast.Import):
        return {a.asname or a.name.split(".")[0] for a in stmt.names if moves.removed_module(a.name)}
    return set()


def versions(ctx: FileContext) -> ModuleConstants:
    """Module constants (here or imported from the project) that version checks are read through."""
    found = ctx.cache.get("ql401.versions")
    if found is None:
        found = ctx.cache["ql401.versions"] = ModuleConstants(ctx.scope, ctx.project, ctx.path)
    return found


def import_statements(ctx: FileContext) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement in `ast.walk` order, from a breadth-first walk of statements
    and handlers only: statements never sit inside expressions, most of the tree."""
    found = ctx.cache.get("ql401.imports")
    if found is None:
        found = []
        queue: deque[ast.AST] = deque([ctx.tree])
        while queue:
            node = queue.popleft()
            cls = type(node)
            if cls is ast.Import or cls is ast.ImportFrom:
                found.append(node)
                continue
            fields = _BLOCK_FIELDS.get(cls)
            if fields is None:
                fields = _BLOCK_FIELDS[cls] = tuple(f for f in cls._fields if f in _BLOCKS)
            for name in fields:
                queue.extend(getattr(node, name))
        ctx.cache["ql401.imports"] = found
    return found


# The fields that hold statements, handlers and match cases (in `_fields` order, as
# `ast.iter_child_nodes` visits them): every other field holds expressions only.
_BLOCKS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
_BLOCK_FIELDS: dict[type, tuple[str, ...]] = {}


class LazyParents:
    """id(child) -> parent, built on the first question: most files have nothing to ask."""

    def __init__(self, ctx: FileContext):
        self._ctx = ctx
        self._map: dict[int, ast.AST] | None = None

    def get(self, key: int) -> ast.AST | None:
        """The parent of the node whose id is `key` (`tree_walk.parents`' keys)."""
        if self._map is None:
            self._map = tree_parents(self._ctx.tree)
        return self._map.get(key)

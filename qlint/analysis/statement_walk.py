"""Walks of statements alone: a function, class or module holds statements in statement lists
alone, so walks that look for statements (defs, imports, assignments) skip the expressions,
most of a body's nodes (`tree_walk` walks every node). And the names an assignment's target
binds."""

from __future__ import annotations

import ast
from collections.abc import Iterator

# Nested functions and classes: listed by `own_statements`, not entered.
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def target_names(target: ast.AST) -> list[str]:
    """The names a target binds: itself, or those a tuple, list or starred unpacking binds. An
    attribute or an item stored (`gm._param_name_to_source[name] = ...`) binds no name: the
    object it reaches stays what it was."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for elt in target.elts for name in target_names(elt)]
    return []


def statement_lists(node: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists a statement holds: its body, else and finally blocks, then the
    bodies of its handlers and match cases (none for most statements: asked of each)."""
    kinds = _BLOCK_KINDS.get(type(node))
    if kinds is None:
        kinds = _BLOCK_KINDS[type(node)] = _block_kinds(type(node))
    if not kinds:
        return []
    blocks, nested = kinds
    out = [block for block in (getattr(node, name, None) for name in blocks) if isinstance(block, list)]
    for name in nested:
        out.extend(part.body for part in getattr(node, name, ()))
    return out


_BLOCK_KINDS: dict[type, tuple[tuple[str, ...], tuple[str, ...]] | tuple[()]] = {}


def _block_kinds(cls: type):
    fields = set(cls._fields)
    blocks = tuple(n for n in ("body", "orelse", "finalbody") if n in fields)
    nested = tuple(n for n in ("handlers", "cases") if n in fields)
    return (blocks, nested) if blocks or nested else ()


def statements(node: ast.AST) -> list[ast.stmt]:
    """Every statement under `node`, at any depth, nested functions' and classes' included:
    the statements `walk` finds, without visiting an expression (where none can be: a
    lambda's body is an expression). Not in `walk` order."""
    out: list[ast.stmt] = []
    stack = [node]
    while stack:
        for block in statement_lists(stack.pop()):
            out.extend(block)
            stack.extend(block)
    return out


def own_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of `body` and of the blocks in it (`if`, `for`, `while`, `try`, `with`,
    `match`), each before those it holds, its blocks in `statement_lists` order (source order
    but for a `try`'s handlers, after its `else` and `finally`); nested functions and classes
    are listed, not entered (their statements run apart)."""
    for stmt in body:
        yield stmt
        if not isinstance(stmt, _DEFS):
            for block in statement_lists(stmt):
                yield from own_statements(block)


__all__ = ["own_statements", "statement_lists", "statements", "target_names"]

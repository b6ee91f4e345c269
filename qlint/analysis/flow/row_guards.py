"""The conditions a row of a function runs under, in `dead_branches`' terms (QL101, QL102).

A pass that one call runs in full and another only in part (`transform_fx(g, quantized=True)`
before a strip, `transform_fx(g)` after it, with `if quantized: continue` above its f16
matchers) is judged call by call: a call runs the row only if its arguments leave every
condition on the way there possible (`dead_branches.contradicted_at_call`).

Read from the function's statement lists down to the statement holding the row:
- an `if` holding the row: its test holds in its body, fails in its `else`;
- an `if` without `else` earlier in a list holding the row, whose body ends by leaving that
  list (`continue`, `break`, `return`, `raise`): past it, its test failed;
- `a and b` holding the row in the body, and `a or b` failing, give each part.
Any other test gives nothing (the row is taken as possible whatever it says), and nothing
is read inside a nested function, a `match`, or the test of the `if` the row sits on.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.dead_branches import condition_of
from qlint.analysis.tree_walk import block_spans

Condition = tuple[str, bool]

_EXITS = (ast.Continue, ast.Break, ast.Return, ast.Raise)
_BODIES = (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)
_TRIES = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


def row_guard(func: ast.AST, row: int) -> frozenset[Condition]:
    """The conditions that hold whenever `func` (a function) runs the code on `row`."""
    found: set[Condition] = set()
    stmts = getattr(func, "body", [])
    while stmts:
        index = _holding(stmts, row)
        if index is None:
            break
        for earlier in stmts[:index]:
            if isinstance(earlier, ast.If) and not earlier.orelse and isinstance(earlier.body[-1], _EXITS):
                found |= _parts(earlier.test, ast.Or, False)
        stmts = _inner(stmts[index], row, found)
    return frozenset(found)


def _holding(stmts: list[ast.stmt], row: int) -> int | None:
    for index, stmt in enumerate(stmts):
        if stmt.lineno <= row <= (stmt.end_lineno or stmt.lineno):
            return index
    return None


def _inner(stmt: ast.stmt, row: int, found: set[Condition]) -> list[ast.stmt]:
    """The statement list of `stmt` holding `row` (none: the row is not in one), adding the
    conditions that list runs under."""
    if isinstance(stmt, ast.If):
        if block_spans(stmt.body, row):
            found |= _parts(stmt.test, ast.And, True)
            return stmt.body
        if block_spans(stmt.orelse, row):
            found |= _parts(stmt.test, ast.Or, False)
            return stmt.orelse
        return []
    if isinstance(stmt, _BODIES):
        for stmts in (stmt.body, getattr(stmt, "orelse", [])):
            if block_spans(stmts, row):
                return stmts
        return []
    if isinstance(stmt, _TRIES):
        for stmts in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
            if block_spans(stmts, row):
                return stmts
    return []


def _parts(test: ast.expr, joined: type, polarity: bool) -> set[Condition]:
    """The conditions `test` gives when it is `polarity`: each part of a `joined` test (`and`
    when true, `or` when false), or the test itself, where recognised."""
    values = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, joined) else [test]
    out = set()
    for value in values:
        found = condition_of(value, {})
        if found is not None:
            out.add((found[0], found[1] == polarity))
    return out

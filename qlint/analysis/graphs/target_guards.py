"""The node-target tests a statement runs only under: the ops a node must be for it to run.

A pass inserts inside the branch of a node match (`if n.target == P: ...insert...`), or after a
loop guard that skips every other node (`if n.op != "call_function" or n.target != P:
continue`). When the test can never hold on the graph the pass sees, the insertion never runs.
This module only reads the shape of the code: which ops each guard names; whether a test can
hold is the rule's question (it asks QL101's verdict on the same graph).

A guard counts only when the row cannot run without it holding:
- the row lies in the body of `if T:` (never its `else:`, which runs exactly when T fails), and
  T is a target test, or an `and` of tests one of which is; an `or` counts only when each of
  its sides is a target test (one side that may hold runs the branch);
- or an earlier statement of the same loop body is `if C: continue` (or `break`), and C is the
  negated test (`n.target != P`, `n.target not in {...}`, `not n.target == P`), or an `or` one
  of whose sides is: the row is reached only when every side is false;
- or the row lies in the body of `if xs:` / `if len(xs) > N:` and the same block bound
  `xs = [u for u in ... if u.target == P]` just before, untouched since: the list holds
  something only if the filter held once (torchao's `_remove_extra_dequantize`).
"""

from __future__ import annotations

import ast

from qlint.analysis.graphs.fx_targets import is_target_attr

# One guard: the op expressions a node target must equal (any one of them) for the row to run.
Guard = tuple[ast.expr, ...]


def target_guards(tree: ast.AST, row: int) -> list[Guard]:
    """Every guard the statement at `row` runs only under, outermost first."""
    guards: list[Guard] = []
    _descend(tree, row, guards)
    return guards


def _descend(node: ast.AST, row: int, guards: list[Guard]) -> None:
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        stmts = getattr(node, field, None)
        if not isinstance(stmts, list):
            continue
        if field == "cases":  # a case has no position of its own: its body's statements do
            stmts = [s for case in stmts for s in case.body]
        for i, stmt in enumerate(stmts):
            if not (stmt.lineno <= row <= (stmt.end_lineno or stmt.lineno)):
                continue
            if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and field == "body":
                # Loop guards written before the row's statement in the loop's own body.
                for earlier in stmts[:i]:
                    guards.extend(_skip_guards(earlier))
            if isinstance(stmt, ast.If) and _in_body(stmt, row):
                guards.extend(_holding(stmt.test))
                guards.extend(_filtered_nonempty(stmt.test, stmts[:i]))
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                guards.clear()  # a function's body runs when it is called, not under the guard
            _descend(stmt, row, guards)
            return


def _in_body(stmt: ast.If, row: int) -> bool:
    return bool(stmt.body) and stmt.body[0].lineno <= row <= (stmt.body[-1].end_lineno or row)


def _holding(test: ast.expr) -> list[Guard]:
    """The guards that hold whenever `test` is true."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [g for value in test.values for g in _holding(value)]
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        sides = [_holding(value) for value in test.values]
        if all(len(side) == 1 for side in sides):
            return [tuple(op for side in sides for op in side[0])]
        return []
    guard = _target_test(test, negated=False)
    return [guard] if guard else []


def _filtered_nonempty(test: ast.expr, earlier: list[ast.stmt]) -> list[Guard]:
    """`if xs:` / `if len(xs) > N:` where `xs = [u for u in ... if u.target == P]` was bound
    just before in the same block: the list holds something only if the filter held once."""
    name = _nonempty_name(test)
    if name is None:
        return []
    for k in range(len(earlier) - 1, -1, -1):
        stmt = earlier[k]
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == name
        ):
            continue
        later = earlier[k + 1 :]
        if not isinstance(stmt.value, (ast.ListComp, ast.SetComp)) or any(
            isinstance(n, ast.Name) and n.id == name for s in later for n in ast.walk(s)
        ):
            return []  # another value, or the name is touched again before the test
        return [g for gen in stmt.value.generators for cond in gen.ifs for g in _holding(cond)]
    return []


def _nonempty_name(test: ast.expr) -> str | None:
    """`xs`, `len(xs)`, `len(xs) > N` (N >= 0), `len(xs) >= N` (N >= 1): true only if xs holds one."""
    if isinstance(test, ast.Name):
        return test.id
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        bound = test.comparators[0]
        if not (isinstance(bound, ast.Constant) and type(bound.value) is int):
            return None
        op = test.ops[0]
        if not ((isinstance(op, ast.Gt) and bound.value >= 0) or (isinstance(op, ast.GtE) and bound.value >= 1)):
            return None
        test = test.left
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "len"
        and len(test.args) == 1
        and isinstance(test.args[0], ast.Name)
    ):
        return test.args[0].id
    return None


def _skip_guards(stmt: ast.stmt) -> list[Guard]:
    """The guards that hold after `if C: continue` once it falls through (C was false)."""
    if not (
        isinstance(stmt, ast.If)
        and not stmt.orelse
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], (ast.Continue, ast.Break))
    ):
        return []
    test = stmt.test
    sides = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    return [g for side in sides if (g := _target_test(side, negated=True))]


def _target_test(test: ast.expr, negated: bool) -> Guard | None:
    """The ops of `n.target == P` / `n.target in (P, ...)` (when `negated`, of the tests whose
    falsity says as much: `!=`, `not in`, `not (... == P)`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _target_test(test.operand, not negated)
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    op, left, right = test.ops[0], test.left, test.comparators[0]
    equal, member = (ast.NotEq, ast.IsNot), ast.NotIn
    if not negated:
        equal, member = (ast.Eq, ast.Is), ast.In
    if isinstance(op, equal):
        if is_target_attr(left):
            return (right,)
        if is_target_attr(right):
            return (left,)
        return None
    if isinstance(op, member) and is_target_attr(left) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        return tuple(right.elts) if right.elts else None
    return None

"""`row_guards.row_guard`: the conditions on a function's names that hold whenever a row of it
runs, read from the `if`s holding the row and the early exits above it."""

from __future__ import annotations

import ast
import textwrap

from qlint.analysis.flow.row_guards import row_guard

SOURCE = """
def f(a, b, mode="x"):
    if a:
        return
    for n in b:
        if not b or mode == "y":
            continue
        try:
            if mode != "z":
                raise ValueError
            row_try = 1
        except ValueError:
            row_handler = 1
        while n:
            if a and b:
                row_and = 1
            else:
                row_else = 1
        if a:
            pass
        row_after_pass = 1

        def inner():
            row_inner = 1

        if b:
            row_or_then = 1
        elif a or mode:
            row_elif = 1
    else:
        row_loop_else = 1
"""


def _guard(name: str) -> set[tuple[str, bool]]:
    text = textwrap.dedent(SOURCE)
    tree = ast.parse(text)
    row = next(i for i, line in enumerate(text.splitlines(), 1) if line.strip().startswith(f"{name} ="))
    return set(row_guard(tree.body[0], row))


LOOP = {("a", False), ("b", True), ("mode == 'y'", False)}


def test_early_exits_above_the_row():
    # `return` under `a`, then `continue` under `not b or mode == "y"` (each part of the `or`).
    assert _guard("row_try") == LOOP | {("mode == 'z'", True)}


def test_a_handler_does_not_follow_the_try_bodys_exits():
    assert _guard("row_handler") == LOOP


def test_if_and_else_of_a_conjunction():
    assert _guard("row_and") == LOOP | {("a", True), ("b", True)}
    assert _guard("row_else") == LOOP  # `not (a and b)`: neither part is known


def test_an_if_that_does_not_leave_guards_nothing_after_it():
    assert _guard("row_after_pass") == LOOP


def test_a_nested_function_is_not_entered():
    assert _guard("row_inner") == LOOP


def test_elif_runs_under_the_failed_test_and_its_own():
    assert _guard("row_or_then") == LOOP | {("b", True)}
    assert _guard("row_elif") == LOOP | {("b", False)}  # `a or mode` true: neither part known


def test_a_loops_else_is_outside_its_bodys_exits():
    assert _guard("row_loop_else") == {("a", False)}

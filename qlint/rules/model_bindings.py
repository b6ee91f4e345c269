"""How long a name holds the model that is captured, for the "given parts later" test.

`capture_content` asks whether a model was changed after it was built (`model.fc = head`,
`swap(model)`), by name. A name stops holding that model where it is rebound to something
else on every path (`m = export(m, x).module()`: what is done to `m` afterwards is done to the
graph), and a copy taken for the capture (`graph_model = copy.deepcopy(model)`) does not see
what is done to the original afterwards. Only statements that run on every path are read
(the function's own body and the bodies of its `with` blocks): a rebinding inside a branch or
a loop ends nothing. A model built in a block of a loop or a branch (`for x in inputs: m =
Net(); m = quantize(m, x); lower(m)`) is read the same way in that block, from its build:
each round builds another, which the name holds from there, so what the round does after
handing it over is done to a model already captured.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint.analysis.tree_walk import contains_any_id

_COPIES = frozenset({"deepcopy", "copy"})


def binding_ends(
    fn: ast.AST, names: set[str], captured: str | None, start: int, points: frozenset[int] = frozenset()
) -> dict[str, int]:
    """name -> the last line at which it may still hold the model built at line `start`
    (absent: to the end of the function). `points`: ids of the capture call and of the calls
    that hand the model to the helper that captures it; once a statement holding one has run,
    the graph is taken and what is done to the model afterwards is not in it."""
    ends: dict[str, int] = {}
    for stmt in _straight_line(_block_of(fn, start)):
        if stmt.lineno >= start and points and contains_any_id(stmt, points):
            for name in names:
                ends.setdefault(name, stmt.end_lineno or stmt.lineno)
            break
        if stmt.lineno <= start or not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target = stmt.targets[0]
        if not isinstance(target, ast.Name):
            continue
        source = _copied(stmt.value)
        if source in names and source != captured and target.id == captured:
            # `captured = copy.deepcopy(source)`: the copy is what is captured from here on.
            ends.setdefault(source, stmt.lineno)
        elif target.id in names and _elsewhere(stmt.value, names):
            ends.setdefault(target.id, stmt.lineno)
    return ends


def _block_of(fn: ast.AST, start: int) -> list[ast.stmt]:
    """The statements run one after the other with the one at line `start` (the model's
    build): the function's body, or the innermost block of a loop or branch holding it. A
    hand-over found after the build in that block takes the model that round built; what
    runs later (the rest of the round, the next rounds, the code after the loop) is done to
    a model already handed over, or to another. Blocks under a `try`, `match` or a nested
    definition are not entered (the function's body is read, as before); the bodies of
    `with` statements are part of the block around them (`_straight_line`)."""
    body = getattr(fn, "body", [])
    block = searched = body
    while True:
        found = next((s for s in searched if s.lineno <= start <= (s.end_lineno or s.lineno)), None)
        if found is None:
            return body
        if found.lineno == start:
            break
        if isinstance(found, (ast.With, ast.AsyncWith)):
            searched = found.body
            continue
        if not isinstance(found, (ast.For, ast.AsyncFor, ast.While, ast.If)):
            return body  # `try`, `match`, a function or class written here
        searched = next((b for b in (found.body, found.orelse) if b and _spans(b, start)), None)
        if searched is None:
            return body
        block = searched
    return block


def _spans(block: list[ast.stmt], row: int) -> bool:
    return block[0].lineno <= row <= (block[-1].end_lineno or block[-1].lineno)


def _straight_line(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            yield from _straight_line(stmt.body)


def _copied(value: ast.expr) -> str | None:
    if not (isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords):
        return None
    func = value.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    arg = value.args[0]
    return arg.id if last in _COPIES and isinstance(arg, ast.Name) else None


def _elsewhere(value: ast.expr, names: set[str]) -> bool:
    """The value is another object: it mentions no name of the model, or it is the graph of a
    program (`export(m, x).module()`, `ep.module()`). A call handed the model
    (`m = wrap(m)`) may return the model itself."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "module":
        return not value.args and not value.keywords
    return not any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(value))


def live(names: set[str], ends: dict[str, int], row: int) -> set[str]:
    """The names that may still hold the model at line `row`."""
    return {n for n in names if row <= ends.get(n, row)}


__all__ = ["binding_ends", "live"]

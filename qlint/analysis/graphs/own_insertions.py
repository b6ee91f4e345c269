"""A project's own insertions of a packet, as the rules that excuse a matcher or an insertion
by them find them: the modules spelling the packet (`spelled_packet`, the pattern their text
is searched with) and the functions of an inserting module that put the node into a graph
(`inserting_functions`). QL102's own consumers (`packet_consumers`), QL101's matchers beside
an insertion (`packet_origins`) and its matchers on a called insertion's graph
(`called_insertions`) share them.
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.context import FileContext


def spelled_packet(op: str) -> re.Pattern:
    """The packet spelled somewhere in a module: `.op` not followed by an overload (modules
    that only spell `.op.default` are not parsed)."""
    return re.compile(rf"\.{re.escape(op)}\b(?!\s*\.\s*\w)")


def inserting_functions(ctx: FileContext, rows: list[int]) -> set[str]:
    """The module-level functions of the inserting module holding the insertions on `rows`, and
    those of the module that call them: only a call of one of these puts the node in a
    graph, so a re-export after a call of the module's other passes (tt-xla's backend folds
    einsums in one branch and exports in the other, then inserts its argument markers) is
    not one between the insertion and its consumer. Empty (every name it defines may insert)
    when an insertion sits anywhere else: a method, a nested function, the module's body."""
    funcs = (ast.FunctionDef, ast.AsyncFunctionDef)
    top = {f.name: f for f in ctx.tree.body if isinstance(f, funcs)}
    holding = {n for n, f in top.items() if any(_spans(f, row) for row in rows)}
    if not rows or not all(any(_spans(f, row) for f in top.values()) for row in rows):
        return set()
    for f in top.values():
        for inner in ast.walk(f):
            if inner is not f and isinstance(inner, (*funcs, ast.ClassDef)) and any(_spans(inner, row) for row in rows):
                return set()
    # Callers: the module's functions and classes naming one (`AddPass.__call__` running the
    # pass makes `AddPass()(gm)` an insertion too); named anywhere else in the module (a list
    # of passes), what runs it is not known.
    owners = {d.name: d for d in ctx.tree.body if isinstance(d, (*funcs, ast.ClassDef))}
    grew = True
    while grew:
        callers = {n for n, d in owners.items() if n not in holding and _names_any(d, holding)}
        holding |= callers
        grew = bool(callers)
    if any(not isinstance(stmt, (*funcs, ast.ClassDef)) and _names_any(stmt, holding) for stmt in ctx.tree.body):
        return set()
    return holding


def _names_any(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _spans(node: ast.AST, row: int) -> bool:
    return node.lineno <= row <= (node.end_lineno or node.lineno)


__all__ = ["inserting_functions", "spelled_packet"]

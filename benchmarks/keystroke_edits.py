"""The buffers an editor hands the language server while someone types in a module: what
the in-process timings check (benchmarks/bench_trees.py and benchmarks/check_phases.py
use the same edits, so their figures compare).

Re-checking the identical text would measure nothing a user waits for: anything keyed on
the file's content answers it for free. Most keystrokes type a character into a line of one
function body: that body's text changes, every other line stays where it was. So edit `k`
types `; edited_k = k` after the last statement of the k-th of `runs` function bodies spread
evenly over the module (methods included), on top of the edits before it, as a buffer
accumulates them: each check differs from the one before in one function body. The new
statement assigns a fresh local: it parses, reads nothing and flows nowhere, so the findings
stay those of the file on disk (the benchmarks print their count).

`enter=True` types each statement on a new line of its own instead (an Enter, then the
statement): every line below it moves, which the reuse of unchanged statements
(`qlint.analysis.names.statement_reuse`) does not follow, so that figure is the slower case.
"""

from __future__ import annotations

import ast


def _bodies(text: str) -> list[tuple[int, int, str]]:
    """(last line, column after it, indentation) of the last statement of every function
    body that starts on a line of its own and ends in a simple statement, in source order."""
    lines = text.splitlines()
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first, last = node.body[0], node.body[-1]
            if first.lineno == node.lineno or hasattr(last, "body") or last.end_lineno is None:
                continue
            line = lines[first.lineno - 1]
            indent = line[: len(line) - len(line.lstrip())]
            end_line = lines[last.end_lineno - 1]
            column = len(end_line.encode("utf-8")[: last.end_col_offset].decode("utf-8"))
            rest = end_line[column:].strip()
            if not rest or rest.startswith("#"):  # nothing after it but a comment
                found.append((last.end_lineno, column, indent))
    return sorted(found)


def keystroke_edits(text: str, runs: int, enter: bool = False) -> list[str]:
    """`runs` successive buffers, each one statement further typed than the one before."""
    bodies = _bodies(text)
    if not bodies:  # a module without functions: a line at its end stands for the keystroke
        return [text + "".join(f"\nedited_{i} = {i}" for i in range(k + 1)) + "\n" for k in range(runs)]
    step = len(bodies) / runs
    order = [bodies[min(int(i * step), len(bodies) - 1)] for i in range(runs)]
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    buffers = []
    inserted: list[int] = []  # original line numbers after which a line was typed, so far
    for k, (end, column, indent) in enumerate(order):
        if enter:
            shift = sum(1 for at in inserted if at <= end)
            lines.insert(end + shift, f"{indent}edited_{k} = {k}\n")
            inserted.append(end)
        else:  # bodies chosen twice (more runs than bodies) get one more statement each time
            line = lines[end - 1]
            lines[end - 1] = f"{line[:column]}; edited_{k} = {k}{line[column:]}"
        buffers.append("".join(lines))
    return buffers

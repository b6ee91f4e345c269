"""Calling a torchao PT2E helper (`move_exported_model_to_eval`, `_train`) from a fix: the
name it goes by in the file, and the import edit when the file does not import it yet
(merged into an existing `from torchao.quantization.pt2e import ...` in its own style, or a
new line after the leading imports). QL201 and QL203 both switch exported graphs' modes.
"""

from __future__ import annotations

import ast

from qlint.analysis.tree_walk import first_row
from qlint.diagnostic import Edit, Range
from qlint.rules.base import FileContext
from qlint.source import line_ending

PT2E = "torchao.quantization.pt2e"
_ALSO_PROVIDED_BY = ("torch.ao.quantization.",)  # torch < 2.13 exported the same helpers


def pt2e_helper(ctx: FileContext, helper: str) -> tuple[str | None, tuple[Edit, ...]]:
    """The name to call `helper` by, and the edits that import it if the module does not yet."""
    imports = ctx.scope.imports
    for local, full in imports.items():
        if full in (f"{PT2E}.{helper}", *(f"{p}{helper}" for p in _ALSO_PROVIDED_BY)):
            return local, ()
    for local, full in imports.items():
        if full == PT2E:
            return f"{local}.{helper}", ()
    scope = ctx.scope
    if helper in imports or helper in scope.assigns or helper in scope.functions or helper in scope.classes:
        return None, ()  # the name means something else here
    existing = [
        s for s in ctx.tree.body if isinstance(s, ast.ImportFrom) and s.module == PT2E and s.level == 0 and s.names
    ]
    if existing and existing[0].names[0].name != "*":
        return helper, _merge(ctx, existing[0], helper)
    return helper, (_new_import(ctx, helper),)


def _merge(ctx: FileContext, node: ast.ImportFrom, helper: str) -> tuple[Edit, ...]:
    """Add `helper` to `from torchao.quantization.pt2e import ...` in the style it is written."""
    last = node.names[-1]
    end_col = ctx.lines.char_col(last.end_lineno, last.end_col_offset)
    at_end = Range.of(last.end_lineno, end_col, last.end_lineno, end_col)
    if last.end_lineno == node.end_lineno or last.lineno == node.lineno:
        return (Edit(at_end, f", {helper}"),)  # one line, or the closing paren after the last name
    line = ctx.lines.line(last.end_lineno)
    indent = line[: len(line) - len(line.lstrip())]
    tail = line[end_col:].split("#", 1)[0]
    line_end = Range.of(last.end_lineno, len(line), last.end_lineno, len(line))
    newline = line_ending(ctx.text)
    if "," in tail:
        return (Edit(line_end, f"{newline}{indent}{helper},"),)
    return (Edit(at_end, ","), Edit(line_end, f"{newline}{indent}{helper}"))


def _new_import(ctx: FileContext, helper: str) -> Edit:
    """A new import line after the module's leading imports (or its docstring)."""
    statement = f"from {PT2E} import {helper}"
    newline = line_ending(ctx.text)
    body = ctx.tree.body
    anchor = body[0] if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else None
    for stmt in body[1 if anchor is not None else 0 :]:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            break
        anchor = stmt
    if anchor is None:
        row = first_row(body[0])
        return Edit(Range.of(row, 0, row, 0), f"{statement}{newline}")
    eol = len(ctx.lines.line(anchor.end_lineno))
    return Edit(Range.of(anchor.end_lineno, eol, anchor.end_lineno, eol), f"{newline}{statement}")

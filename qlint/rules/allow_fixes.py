"""QL203's fixes that allow the switch: `allow_exported_model_train_eval(gm)` on a line of its own
before the statement that hands the graph on, so that the graph's `eval`/`train` switch its batch
norm and dropout instead of raising on torch 2.13.
"""

from __future__ import annotations

import ast

from qlint.analysis import tree_walk
from qlint.analysis.edits.import_edits import insert_before, owns_lines
from qlint.analysis.flow.model_flow import HandedSwitch
from qlint.diagnostic import Applicability, Fix
from qlint.rules.base import FileContext
from qlint.rules.pt2e_helpers import pt2e_helper

ALLOW = "allow_exported_model_train_eval"
# Statements a line can be added before: the call runs right after it.
_SIMPLE = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)


def allow_fix(ctx: FileContext, handed: HandedSwitch, graph: str) -> Fix:
    """`allow_exported_model_train_eval(gm)` on a line of its own before the statement.

    Unsafe: the graph's `eval`/`train` then switch dropout and batch norm for the rest of its
    life, also where the code relied on them raising. Display-only when the graph is no plain
    name or the statement shares its lines (a new line cannot go right before it)."""
    message = f"Call `allow_exported_model_train_eval({graph})` before this call"
    if handed.held:  # the helper takes the graph itself, not its container (no `.graph`)
        return Fix(Applicability.DISPLAY_ONLY, "Call `allow_exported_model_train_eval` on the graph it holds first")
    stmt = handed.stmt
    if not isinstance(handed.argument, ast.Name) or not isinstance(stmt, _SIMPLE) or not owns_lines(ctx, stmt):
        return Fix(Applicability.DISPLAY_ONLY, message)
    name, import_edits = pt2e_helper(ctx, ALLOW)
    if name is None:
        return Fix(Applicability.DISPLAY_ONLY, message)
    return Fix(Applicability.UNSAFE, message, (insert_before(ctx, stmt, f"{name}({graph})"), *import_edits))


# Expressions whose names are their own, or evaluated later: an argument written in one is no
# name the statement around it can use first.
_OWN_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def stored_allow_fix(ctx: FileContext, built: ast.Call, argument: ast.expr | None, cls: str) -> Fix:
    """`allow_exported_model_train_eval(gm)` on a line of its own before the statement that
    constructs `cls` with the graph `gm` (a plain name there: its value before that statement
    is the one the construction passes, unless the statement binds it first or evaluates the
    construction in a scope of its own). Unsafe, as `allow_fix`; display-only otherwise."""
    message = f"Call `allow_exported_model_train_eval` on the graph before `{cls}(...)` stores it"
    if not isinstance(argument, ast.Name):
        return Fix(Applicability.DISPLAY_ONLY, message)
    parents = tree_walk.parents(ctx.tree)
    stmt = tree_walk.statement_around(built, parents)
    if stmt is None or not isinstance(stmt, _SIMPLE) or not owns_lines(ctx, stmt):
        return Fix(Applicability.DISPLAY_ONLY, message)
    node = parents.get(id(built))
    while node is not None and node is not stmt:
        if isinstance(node, _OWN_SCOPES):
            return Fix(Applicability.DISPLAY_ONLY, message)
        node = parents.get(id(node))
    if any(isinstance(n, ast.NamedExpr) and n.target.id == argument.id for n in ast.walk(stmt)):
        return Fix(Applicability.DISPLAY_ONLY, message)
    name, import_edits = pt2e_helper(ctx, ALLOW)
    if name is None:
        return Fix(Applicability.DISPLAY_ONLY, message)
    message = f"Call `allow_exported_model_train_eval({argument.id})` before `{cls}(...)` stores it"
    return Fix(Applicability.UNSAFE, message, (insert_before(ctx, stmt, f"{name}({argument.id})"), *import_edits))


__all__ = ["ALLOW", "allow_fix", "stored_allow_fix"]

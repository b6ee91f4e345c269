"""`try` statements that report a failure rather than probe for an API.

A `try` around an attribute use of an API torch may lack reads as a probe: on a torch without
it, the handler does something else. That holds when the handler falls back (to another way of
capturing, an older API, a value the code after the `try` checks), or names the error a missing
API raises (`except AttributeError:`), or the `try` holds little but the use (a helper whose
caller falls back on its `None`). It does not hold for a `try` that wraps a pipeline and whose
broad handler only reports the failure and leaves: it logs, prints the traceback, re-raises,
returns `None` or falls off the end of the function. There the removed API's call is the only
path to the result, and on a torch without it every run fails (executorch-utils'
benchmark_logic.py wraps its whole benchmark so).
"""

from __future__ import annotations

import ast

from qlint.analysis.caught_errors import catches
from qlint.analysis.edits.import_edits import probes_attribute
from qlint.analysis.graphs.call_parts import callee_name
from qlint.analysis.statement_walk import statement_lists

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Module)
_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))
# What a missing API raises, and the broad errors that catch it too.
_MISSING = frozenset({"AttributeError", "ImportError", "ModuleNotFoundError"})
_CATCHING = _MISSING | {"Exception", "BaseException"}
# Calls that say something and change nothing: loggers, print, warnings, click/streamlit's
# echo/error, traceback printers; matched on the callee's last name.
_REPORTING = frozenset(
    {
        "print",
        "pprint",
        "echo",
        "warn",
        "warning",
        "error",
        "exception",
        "critical",
        "fatal",
        "info",
        "debug",
        "log",
        "print_exc",
        "print_exception",
        "print_stack",
        "format_exc",
    }
)
# Words of a project's own reporter's name (`log_callback`, `_log`, `print_error`, `report_failure`).
_REPORTING_WORDS = frozenset({"log", "print", "warn", "report", "notify"})
_EXITS = frozenset({"exit", "_exit", "abort"})
# A call on the captured result that only unwraps it (`export_for_training(...).module()`).
_UNWRAP = frozenset({"module"})


def failure_try(node: ast.AST, parents: dict) -> ast.stmt | None:
    """The outermost `try` around `node`, within its scope, that reports a failure (see the
    module's docstring), when every `try` on the way that catches a missing API's error does
    too; None when there is none. A probe `try` or an `if hasattr(...)` on the way ends the
    walk: what lies outside them is theirs to judge."""
    found = None
    path = [node]
    child, parent = node, parents.get(id(node))
    while parent is not None and not isinstance(parent, _SCOPES):
        path.append(parent)
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and probes_attribute(parent.test):
            break
        if isinstance(parent, _TRY) and child in parent.body:
            handlers = [h for h in parent.handlers if catches(h, _CATCHING)]
            if handlers:
                if not _reports_failure(parent, handlers, path, parents):
                    break
                found = parent
        child, parent = parent, parents.get(id(parent))
    return found


def _reports_failure(node: ast.stmt, handlers: list[ast.ExceptHandler], path: list[ast.AST], parents) -> bool:
    return (
        all(_broad(h) and _only_reports(h.body) for h in handlers)
        and (all(_leaves(h.body) for h in handlers) or _ends_scope(node, parents))
        and _works_beside(node, path)
    )


def _broad(handler: ast.ExceptHandler) -> bool:
    """A handler for any failure: it names no error a missing API raises (a bare `except:` names none)."""
    return handler.type is None or not catches(handler, _MISSING)


def _only_reports(body: list[ast.stmt]) -> bool:
    """Every statement reports, leaves or chooses between reports (`if strict: raise`)."""
    for stmt in body:
        if isinstance(stmt, ast.Raise):
            continue
        if isinstance(stmt, ast.Return):
            if stmt.value is not None and not _failure_value(stmt.value):
                return False
        elif isinstance(stmt, ast.Expr):
            if not isinstance(stmt.value, ast.Constant) and not _reporting_call(stmt.value):
                return False
        elif isinstance(stmt, ast.If):
            if not (_only_reports(stmt.body) and (not stmt.orelse or _only_reports(stmt.orelse))):
                return False
        else:
            return False  # an assignment, `pass`, a loop: perhaps the start of a fallback
    return bool(body)


def _leaves(body: list[ast.stmt]) -> bool:
    last = body[-1]
    if isinstance(last, (ast.Raise, ast.Return)):
        return True
    return isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and callee_name(last.value) in _EXITS


def _ends_scope(node: ast.stmt, parents) -> bool:
    """Is `node` the last statement its function (or module) runs, through trailing `if`/`with`
    blocks? A handler that falls through it then returns `None` from the function."""
    child = node
    while True:
        parent = parents.get(id(child))
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            return parent.body[-1] is child
        if not isinstance(parent, (ast.If, ast.With, ast.AsyncWith)):
            return False
        if not any(block and block[-1] is child for block in statement_lists(parent)):
            return False
        child = parent


def _works_beside(node: ast.stmt, path: list[ast.AST]) -> bool:
    """Does the `try` body (or its `else`) do work besides the use's own statement: a call, off the
    path from the `try` to the use, that neither reports nor unwraps? A `try` holding only the
    capture is a probe whose caller may fall back on what the handler returns."""
    on_path = {id(n) for n in path}
    blocks = [node.body, node.orelse]
    for ancestor in path:
        if isinstance(ancestor, ast.stmt) and ancestor is not node:
            blocks.extend(statement_lists(ancestor))
    for block in blocks:
        for stmt in block:
            if id(stmt) in on_path:
                continue
            for n in ast.walk(stmt):
                if isinstance(n, ast.Call) and not _reporting_call(n) and callee_name(n) not in _UNWRAP:
                    return True
    return False


def _failure_value(value: ast.expr) -> bool:
    """`None`, a constant, a message, or a container of them (`{"error": str(e)}`)."""
    if isinstance(value, (ast.Constant, ast.JoinedStr)):
        return True
    if isinstance(value, ast.UnaryOp):
        return _failure_value(value.operand)
    if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
        return all(_failure_value(e) for e in value.elts)
    if isinstance(value, ast.Dict):
        return all(k is None or _failure_value(k) for k in value.keys) and all(map(_failure_value, value.values))
    return isinstance(value, ast.Call) and callee_name(value) in ("str", "repr") and not value.keywords


def _reporting_call(value: ast.expr) -> bool:
    if not isinstance(value, ast.Call):
        return False
    name = callee_name(value) or ""
    return name in _REPORTING or name in _EXITS or not _REPORTING_WORDS.isdisjoint(name.lower().split("_"))

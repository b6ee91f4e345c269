"""Which statements of a module bind its names, looking into module-level `if`, `try` and
`with` blocks, and whether each runs whenever the module does; and the functions a failed
import's handler defines in place of what the `try` imported.

Apart from `scope` (which builds a module's scope from them) because `summary` reads the
same statements to summarise a module without building its scope.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint.analysis.caught_errors import catches

_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
_FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def binding_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that bind module names, looking into module-level if/try blocks."""
    for stmt, _ in top_level_bindings(body):
        yield stmt


def top_level_bindings(body: list[ast.stmt], sure: bool = True) -> Iterator[tuple[ast.stmt, bool]]:
    """`binding_statements`'s statements, each with whether it runs whenever the module does: not
    in an `if` or `try` branch (a `with` body and a `try`'s `finally` run, as far as names
    go; a `try` body may stop at any statement, an `else` after it may not run). A handler's
    restatement of the body's sibling import without the dot is left out (`_restates_sibling`)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            yield from top_level_bindings(stmt.body, False)
            yield from top_level_bindings(stmt.orelse, False)
        elif isinstance(stmt, ast.Try | getattr(ast, "TryStar", ast.Try)):
            yield from top_level_bindings(stmt.body, False)
            twins = _sibling_relative_names(stmt.body)
            for handler in stmt.handlers:
                for inner, inner_sure in top_level_bindings(handler.body, False):
                    if not (twins and _restates_sibling(inner, twins)):
                        yield inner, inner_sure
            yield from top_level_bindings(stmt.orelse, False)
            yield from top_level_bindings(stmt.finalbody, sure)
        elif isinstance(stmt, ast.With):
            yield from top_level_bindings(stmt.body, sure)
        else:
            yield stmt, sure


def _sibling_relative_names(body: list[ast.stmt]) -> set[tuple[str, str, str | None]]:
    """(module, name, alias) a `try` body imports from a sibling module: `from .m import a as b`
    gives ("m", "a", "b"), `from . import m` gives ("m", "", None)."""
    found: set[tuple[str, str, str | None]] = set()
    for stmt in body:
        if isinstance(stmt, ast.ImportFrom) and stmt.level == 1:
            for alias in stmt.names:
                if stmt.module:
                    found.add((stmt.module, alias.name, alias.asname))
                elif alias.asname is None:
                    found.add((alias.name, "", None))
    return found


def _restates_sibling(stmt: ast.stmt, twins: set[tuple[str, str, str | None]]) -> bool:
    """`stmt`, in a handler of the `try` whose body imported `twins`, binds only names of that
    body from the same sibling module spelt without the dot: `try: from .core import build /
    except ImportError: from core import build`, the idiom of a package module also run as a
    script (`python pkg/train.py`). Run so, the relative import fails and the plain one finds
    `core` in the script's directory, the first entry of `sys.path`: the same file the relative
    import names. The handler's binding adds nothing then, and taken last it would replace the
    body's, which resolves, by a name the package layout cannot (`from core` is no module of
    the project from inside a package)."""
    if isinstance(stmt, ast.ImportFrom):
        return stmt.level == 0 and all((stmt.module, a.name, a.asname) in twins for a in stmt.names)
    if isinstance(stmt, ast.Import):
        return all("." not in a.name and a.asname is None and (a.name, "", None) in twins for a in stmt.names)
    return False


def fallback_definitions(stmt: ast.Try) -> set[str]:
    """Names a handler of `stmt` that catches a failed import (`ImportError`,
    `ModuleNotFoundError`) defines a function for, after the `try` body imported them."""
    imported = {a.asname or a.name for s in stmt.body if isinstance(s, ast.ImportFrom) for a in s.names}
    found = set()
    for handler in stmt.handlers if imported else ():
        if catches(handler, _IMPORT_ERRORS) and handler.type is not None:
            found |= {s.name for s in handler.body if isinstance(s, _FUNCTION_DEFS) and s.name in imported}
    return found

"""References in another module that name a helper's name but cannot be the helper.

The search for a helper's callers in the project (`project_callers`) reads every reference
to its name in the modules that hold it; one it cannot resolve makes the callers unknown.
On ExecuTorch most such names are something else, and these are told apart for sure: a
local of the same name, a function the module (or the function) defines of its own (two
scripts directories both holding `export_deit.py` share a module name), a function-local
import of another module's function, and a call through an object whose arguments the
helper's signature could not bind (`compiled.export_model()` for `def export_model(model,
...)`: it would raise if it were the helper).
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.names.modules import resolve_relative


def cannot_bind(call: ast.Call | None, func: ast.AST) -> bool:
    """`call` passes arguments `func`'s signature rejects: too few for its required
    parameters, too many, or a keyword it lacks (no `*`/`**` on either side hides them)."""
    if call is None or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    args = func.args
    if args.vararg is not None or args.kwarg is not None:
        return False
    positional = [*args.posonlyargs, *args.args]
    if len(call.args) > len(positional):
        return True
    by_keyword = {k.arg for k in call.keywords}
    names = {a.arg for a in positional[len(args.posonlyargs) :]} | {a.arg for a in args.kwonlyargs}
    if by_keyword - names:
        return True
    required = positional[: len(positional) - len(args.defaults)]
    missing = [a for a in required[len(call.args) :] if a.arg not in by_keyword]
    keywords = zip(args.kwonlyargs, args.kw_defaults, strict=True)
    missing += [a for a, d in keywords if d is None and a.arg not in by_keyword]
    return bool(missing)


def imported_here(other: FileContext, body, name: str) -> str | None:
    """What an import statement of the function `body` binds `name` to, when one does and
    nothing else in the body binds it."""
    if not isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)) or name in body.local:
        return None
    found = None
    for stmt in body.stmts:
        if isinstance(stmt, ast.ImportFrom):
            base = resolve_relative(other.module, other.path, stmt.level, stmt.module)
            for alias in stmt.names:
                if (alias.asname or alias.name) == name:
                    if found is not None or base is None:
                        return None
                    found = f"{base}.{alias.name}"
        elif isinstance(stmt, ast.Import) and any((a.asname or a.name.split(".")[0]) == name for a in stmt.names):
            return None
    return found


def defines(body, name: str) -> bool:
    """The function `body` defines a function or class `name` of its own."""
    return isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and s.name == name for s in body.stmts
    )


def own_function(other: FileContext, name: str, body) -> bool:
    """`name`, read in `body`, is a function or class the module defines and imports under no
    name, bound by nothing else at module level, and no local of the body."""
    scope = other.scope
    if name in body.local or name in scope.imports or name in scope.assigns:
        return False
    return name in scope.functions or name in scope.classes


__all__ = ["cannot_bind", "defines", "imported_here", "own_function"]

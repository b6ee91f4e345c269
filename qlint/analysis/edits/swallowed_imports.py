"""An old import in a function whose failure a `try` swallows (QL401's message says what follows).

An import in a function binds its names as locals of the whole function:
`import torch.ao.quantization.quantizer.quantizer` makes `torch` one. Under `try: ...
except ImportError: pass`, torch 2.13 (module gone) raises at the import, the handler swallows
it, and the name is left unbound: the function's next use of it raises UnboundLocalError, not
the import (Memeget's `_quantize_dynamic_int8`, benchmarks/corpus/README.md, stop 65; measured
on Python 3.11 for both `import torch.ao...` and `from torch.ao.quantization import ...`). At
module level the name is a global that an earlier import may have bound, so nothing is said.

Only that case is told: the name bound nowhere else in the function (no parameter, assignment,
other import, `global`/`nonlocal`), the handler that catches the failure falling through to
what follows, and a use of the name after the import read directly by the function (not in a
nested function, lambda, class or comprehension, which read it as a free variable, nor in the
rest of the `try` body or its `else:`, which do not run).
"""

from __future__ import annotations

import ast

from qlint.analysis.caught_errors import catches

_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_FUNCTIONS, ast.ClassDef, ast.Lambda, ast.Module)
# Scopes of their own inside a function: a name there is read as a free variable.
_NESTED = (*_SCOPES, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# What a failing `import a.b` / `from a.b import c` raises when the module is gone
# (ModuleNotFoundError), or `from a import c` when only the name is (ImportError).
_MODULE_ERRORS = frozenset({"ModuleNotFoundError", "ImportError", "Exception", "BaseException"})
_NAME_ERRORS = frozenset({"ImportError", "Exception", "BaseException"})
_LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)
# What binds the name it carries: definitions, `except ... as e`, `case x:` / `case [*rest]:`.
_NAMED = (*_FUNCTIONS, ast.ClassDef, ast.ExceptHandler, ast.MatchAs, ast.MatchStar)


def unbound_note(stmt: ast.Import | ast.ImportFrom, parents, module_gone: bool) -> str:
    """The message's tail for an old import (`module_gone`: the module itself is gone, not only
    a name of it) whose swallowed failure leaves a local name unbound at a later use; empty
    when that is not what happens."""
    found = _catching_try(stmt, parents, module_gone)
    if found is None:
        return ""
    func, try_, handler = found
    names = _bound_names(stmt)
    skipped = {id(s) for s in (*try_.body, *try_.orelse)}  # they do not run after the failure
    locals_, declared = _bindings(func)
    first: ast.Name | None = None
    for node in _own_nodes(func, skipped):
        if type(node) is ast.Name and node.id in names and isinstance(node.ctx, ast.Load):
            if (node.lineno, node.col_offset) < (stmt.end_lineno, stmt.end_col_offset):
                continue
            if locals_.get(node.id, 0) != 1 or node.id in declared:
                continue  # bound elsewhere too (`torch = None` in the handler), or a global
            if first is None or (node.lineno, node.col_offset) < (first.lineno, first.col_offset):
                first = node
    if first is None:
        return ""
    return (
        f"; the `except` at line {handler.lineno} swallows that failure and leaves `{first.id}` unbound in"
        f" `{func.name}` (this import makes it a local name there), so line {first.lineno} raises"
        " UnboundLocalError"
    )


def _catching_try(stmt: ast.stmt, parents, module_gone: bool):
    """(function, `try`, handler): the innermost `try` of the function holding `stmt` in its
    body with a handler catching the failure, that handler (the first such, as Python picks
    it) falling through; None at module or class level, or when the failure propagates."""
    errors = _MODULE_ERRORS if module_gone else _NAME_ERRORS
    found = None
    child, parent = stmt, parents.get(id(stmt))
    while parent is not None and not isinstance(parent, _SCOPES):
        if found is None and isinstance(parent, _TRY) and child in parent.body:
            handler = next((h for h in parent.handlers if catches(h, errors)), None)
            if handler is not None:
                if not handler.body or isinstance(handler.body[-1], _LEAVES):
                    return None  # the handler returns or raises: no later use runs
                found = (parent, handler)
        child, parent = parent, parents.get(id(parent))
    if found is None or not isinstance(parent, _FUNCTIONS):
        return None
    return parent, *found


def _bound_names(stmt: ast.Import | ast.ImportFrom) -> set[str]:
    if isinstance(stmt, ast.Import):
        return {a.asname or a.name.split(".")[0] for a in stmt.names}
    return {a.asname or a.name for a in stmt.names if a.name != "*"}


def _own_nodes(func: ast.AST, skipped=frozenset()):
    """The nodes of `func`'s own scope (its decorators, defaults and annotations aside), less
    the statements whose ids are in `skipped`."""
    stack = [*reversed(func.body)]
    while stack:
        node = stack.pop()
        if id(node) in skipped:
            continue
        yield node
        if isinstance(node, _NESTED):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _bindings(func: ast.AST) -> tuple[dict[str, int], set[str]]:
    """How many times the function's own scope binds each name (parameters, targets, imports,
    definitions, `except ... as`), and the names it declares `global` or `nonlocal`."""
    counts: dict[str, int] = {}
    declared: set[str] = set()
    args = func.args
    for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if a is not None:
            counts[a.arg] = counts.get(a.arg, 0) + 1
    for node in _own_nodes(func):
        names: list[str] = []
        if type(node) is ast.Name and not isinstance(node.ctx, ast.Load):
            names = [node.id]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = list(_bound_names(node))
        elif isinstance(node, _NAMED) and node.name:
            names = [node.name]
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return counts, declared

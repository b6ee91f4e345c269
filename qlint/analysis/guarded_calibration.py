"""Calibration a helper runs only when its caller hands it the data.

    def quantize(model, x, quantizer, calibration_data=None):
        prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
        if calibration_data:
            for batch in calibration_data:
                prepared(*batch)
        return convert_pt2e(prepared)

The calibration walk (`calibration_walk`) joins the two paths of the `if` as "may have run",
which is right for a branch on anything it cannot read. Here the test names nothing but a
parameter whose default is falsy, so which path runs is each caller's choice, and a call of
the same module that leaves the parameter out (or passes `None` or an empty literal) converts
the fresh model: every observer still holds no range.

Read from the syntax of one module: the helper is a module-level function; between the
`prepare_pt2e` result's binding and its `convert_pt2e`, in one statement list (through `with`
bodies), every statement that names the result is an `if` on that parameter with no `else`
naming it; neither the result nor the parameter is bound again. Callers in other modules are
not searched; a call passing `*args`/`**kwargs`, or any other value, counts as passing data.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from qlint.analysis.flow.model_apis import api_kind
from qlint.analysis.tree_walk import mentions_name
from qlint.value_classes import value_class


@value_class(frozen=True)
class GuardedConvert:
    convert: ast.Call  # the convert_pt2e call of the helper
    prepare: ast.Call  # the prepare_pt2e call whose result it converts
    model: str  # the name bound to the prepared model
    param: str  # the parameter the calibration waits for
    caller: ast.Call  # a call of the helper that leaves it empty


QualnameOf = Callable[[ast.expr], str | None]


def guarded_converts(
    tree: ast.Module,
    qualnames: Callable[[ast.AST], QualnameOf],
    text: str | None = None,
    starts: list[int] | None = None,
) -> Iterator[GuardedConvert]:
    """`qualnames(func)` resolves names as seen in `func` (its own imports included). `text`
    and `starts` (the offset of each of its rows, `LineIndex.starts`): the module's source,
    when the caller has it, of which `tree` is the parse."""
    helpers = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for func in helpers:
        falsy = _falsy_defaults(func)
        if not falsy or not _spells(func, "convert_pt2e", text, starts):
            continue
        for convert, prepare, model, param in _guarded(func, falsy, qualnames(func)):
            caller = _empty_call(tree, func, param)
            if caller is not None:
                yield GuardedConvert(convert, prepare, model, param, caller)


def _falsy_defaults(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, int]:
    """Parameters (by name, with their position; -1 for keyword-only) defaulting to a falsy literal."""
    args = func.args
    positional = args.posonlyargs + args.args
    out = {}
    for arg, default in zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True):
        if _is_falsy(default):
            out[arg.arg] = positional.index(arg)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is not None and _is_falsy(default):
            out[arg.arg] = -1
    return out


def _is_falsy(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return not node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return not node.elts
    return isinstance(node, ast.Dict) and not node.keys


def _guarded(func, falsy: dict[str, int], qualname) -> Iterator[tuple[ast.Call, ast.Call, str, str]]:
    stmts = list(_straight_line(func.body))
    rebound = _assigned_names(func)
    for i, stmt in enumerate(stmts):
        bound = _prepared_binding(stmt, qualname)
        if bound is None:
            continue
        model, prepare = bound
        guards: set[str] = set()
        for later in stmts[i + 1 :]:
            convert = _convert_of(later, model, qualname)
            if convert is not None:
                if len(guards) == 1 and rebound.get(model, 0) == 1:
                    (param,) = guards
                    if param in falsy and param not in rebound:
                        yield convert, prepare, model, param
                break
            if not mentions_name(later, model):
                continue
            param = _guard_param(later)
            if param is None or any(mentions_name(s, model) for s in later.orelse):
                break  # run, handed on or rebound outside a guard: the walk judges it
            guards.add(param)


def _straight_line(stmts: list[ast.stmt]) -> Iterator[ast.stmt]:
    for stmt in stmts:
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            yield from _straight_line(stmt.body)
        else:
            yield stmt


def _prepared_binding(stmt: ast.stmt, qualname) -> tuple[str, ast.Call] | None:
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    call = stmt.value
    if not isinstance(call, ast.Call):
        return None
    return (stmt.targets[0].id, call) if api_kind(call, qualname) == "prepare" else None


def _convert_of(stmt: ast.stmt, model: str, qualname) -> ast.Call | None:
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.Return, ast.Expr)) else None
    if not isinstance(value, ast.Call) or not value.args:
        return None
    first = value.args[0]
    if api_kind(value, qualname) == "convert" and isinstance(first, ast.Name) and first.id == model:
        return value
    return None


def _guard_param(stmt: ast.stmt) -> str | None:
    """`P` for `if P:`, `if P is not None:`, `if len(P):` or `if len(P) > 0:`."""
    if not isinstance(stmt, ast.If):
        return None
    test = stmt.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        (op,), (right,) = test.ops, test.comparators
        none = isinstance(right, ast.Constant) and right.value is None
        zero = isinstance(right, ast.Constant) and right.value == 0 and not isinstance(right.value, bool)
        if not ((isinstance(op, ast.IsNot) and none) or (isinstance(op, ast.Gt) and zero and _len_of(test.left))):
            return None
        test = test.left
    inner = _len_of(test)
    test = inner if inner is not None else test
    return test.id if isinstance(test, ast.Name) else None


def _len_of(node: ast.expr) -> ast.expr | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and len(node.args) == 1
        and not node.keywords
    ):
        return node.args[0]
    return None


def _spells(func: ast.FunctionDef | ast.AsyncFunctionDef, word: str, text: str | None, starts) -> bool:
    if text is not None and starts is not None:
        # Each node of the function stands on its rows, its decorators' included: an ASCII
        # name is spelled there as it is named (ExecuTorch: ~4 in 5 functions asked spell no
        # `convert_pt2e`, each walked whole before). A non-ASCII one may normalise (NFKC) to
        # the word: those rows are walked.
        first = min([func.lineno, *(d.lineno for d in func.decorator_list)])
        end = starts[func.end_lineno] if func.end_lineno < len(starts) else len(text)
        rows = text[starts[first - 1] : end]
        if word not in rows and rows.isascii():
            return False
    return any(
        (isinstance(n, ast.Name) and n.id == word) or (isinstance(n, ast.Attribute) and n.attr == word)
        for n in ast.walk(func)
    )


def _assigned_names(func) -> dict[str, int]:
    """How often each name is bound in the function's own body (nested scopes included)."""
    counts: dict[str, int] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            counts[node.id] = counts.get(node.id, 0) + 1
    return counts


def _empty_call(tree: ast.Module, func, param: str) -> ast.Call | None:
    """A call of the helper in its module that leaves `param` at its default or passes an
    empty literal; the first one, in source order."""
    positional = func.args.posonlyargs + func.args.args
    index = next((i for i, a in enumerate(positional) if a.arg == param), -1)
    calls = [
        n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == func.name
    ]
    for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            continue
        given = next((k.value for k in call.keywords if k.arg == param), None)
        if given is None and 0 <= index < len(call.args):
            given = call.args[index]
        if given is None or _is_falsy(given):
            return call
    return None

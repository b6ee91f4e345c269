"""Which parameter a call's keyword fills, as Python binds it (checked on 3.11).

A keyword fills the parameter of its name unless that parameter is positional-only
(`def helper(m, is_qat=False, /)`): then `helper(m, is_qat=True)` leaves `is_qat` to its default
and puts the keyword in the callee's `**kw`, or, when the callee has none, raises `TypeError`
before the body runs. Bound by name, the flag chose the wrong arm of the helper: its QAT arm
for a call that runs the PTQ one (QL201 quiet), a switch ruled out that runs (QL203 quiet).
`forwarded_kwargs` reads the same rule for a keyword reaching the callee through `**kwargs`.
"""

from __future__ import annotations

import ast

from qlint.analysis.node_memo import kept_on_node


def bound_keywords(callee: ast.AST, params: list[str], call: ast.Call) -> list[tuple[int, ast.keyword]]:
    """(index in `params`, keyword) of the keywords of `call` that fill a parameter of `callee`."""
    args = getattr(callee, "args", None)
    only = {a.arg for a in args.posonlyargs} if isinstance(args, ast.arguments) and args.posonlyargs else ()
    return [(params.index(kw.arg), kw) for kw in call.keywords if kw.arg in params and kw.arg not in only]


def raises(callee: ast.AST, call: ast.Call, offset: int | None = None) -> bool:
    """`call` names a positional-only parameter of `callee`, which has no `**` to take it, or
    which nothing else fills (no default, no argument at its position): Python raises
    `TypeError` at the call, and nothing of the body runs. `offset`: 1 when the receiver fills
    the first parameter, 0 when it does not, None when the caller does not know (then only
    the first reading is made)."""
    args = getattr(callee, "args", None)
    if not isinstance(args, ast.arguments) or not args.posonlyargs:
        return False
    only = [a.arg for a in args.posonlyargs]
    named = [only.index(kw.arg) for kw in call.keywords if kw.arg in only]
    if not named:
        return False
    if args.kwarg is None:
        return True
    if offset is None or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    # Defaults fill the last parameters before `*`: positional-only ones among them.
    required = len(only) + len(args.args) - len(args.defaults)
    return any(i < required and i >= len(call.args) + offset for i in named)


def unread_keywords(callee: ast.AST, params: list[str], call: ast.Call) -> set[int]:
    """The ids of the keywords of `call` that no parameter of `callee` takes and that land in
    a `**` its body never names (`def h(m, flag=False, /, **options)` without `options` in
    the body): nothing of the callee reads what they pass. Empty when `callee` has no `**`."""
    args = getattr(callee, "args", None)
    if not isinstance(args, ast.arguments) or args.kwarg is None or kept_on_node(callee, _NAMED, _names_kwarg):
        return set()
    filled = {id(kw) for _, kw in bound_keywords(callee, params, call)}
    return {id(kw) for kw in call.keywords if kw.arg is not None and id(kw) not in filled}


_NAMED = "_qlint_names_kwarg"


def _names_kwarg(callee: ast.AST) -> bool:
    """The body names its `**` parameter, or may read it without naming it (`locals()`, `vars()`)."""
    name = callee.args.kwarg.arg
    return any(type(n) is ast.Name and n.id in (name, "locals", "vars") for n in ast.walk(callee))


__all__ = ["bound_keywords", "raises", "unread_keywords"]

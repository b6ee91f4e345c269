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


def bound_keywords(callee: ast.AST, params: list[str], call: ast.Call) -> list[tuple[int, ast.keyword]]:
    """(index in `params`, keyword) of the keywords of `call` that fill a parameter of `callee`."""
    args = getattr(callee, "args", None)
    only = {a.arg for a in args.posonlyargs} if isinstance(args, ast.arguments) and args.posonlyargs else ()
    return [(params.index(kw.arg), kw) for kw in call.keywords if kw.arg in params and kw.arg not in only]


def raises(callee: ast.AST, call: ast.Call) -> bool:
    """`call` names a positional-only parameter of `callee`, which has no `**` to take it:
    Python raises `TypeError` at the call, and nothing of the body runs."""
    args = getattr(callee, "args", None)
    if not isinstance(args, ast.arguments) or not args.posonlyargs or args.kwarg is not None:
        return False
    only = {a.arg for a in args.posonlyargs}
    return any(kw.arg in only for kw in call.keywords)


__all__ = ["bound_keywords", "raises"]

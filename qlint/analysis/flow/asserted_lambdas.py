"""`self.assertRaises(Error, lambda: helper(model, ...))`: unittest calls the callable once, at
once, with no arguments, so the lambda's calls are read where it is written (issue 14, item 7).

ao's test_quantize_pt2e.py checks that a bad quantizer is refused with
`self.assertRaises(RuntimeError, lambda: self._test_quantizer(m_eager, ...))`: a call of the
capture helper the flow did not read, which left its callers unknown. The callable follows the
exception (and the pattern, for the `...Regex` forms) as unittest's signature places it; a
lambda with parameters, one handed by keyword, or a method the class (or a base of its
module) defines under that name is no such call, and is left unread.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

# unittest.TestCase's assertions that call the callable given after their leading arguments.
_LEADING = {"assertRaises": 1, "assertWarns": 1, "assertRaisesRegex": 2, "assertWarnsRegex": 2}


def asserted_lambda(node: ast.Call, cls, defines: Callable[[str], bool]) -> ast.Lambda | None:
    """The parameterless lambda `node` (a `self.assertRaises(...)`-like call in a method of the
    class `cls`, which neither it nor a base of its module defines: `defines(name)`) runs
    right away."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
        return None
    leading = _LEADING.get(func.attr)
    if leading is None or cls is None or defines(func.attr):
        return None
    if len(node.args) <= leading or any(isinstance(a, ast.Starred) for a in node.args[: leading + 1]):
        return None
    lam = node.args[leading]
    if not isinstance(lam, ast.Lambda):
        return None
    args = lam.args
    if args.posonlyargs or args.args or args.vararg or args.kwonlyargs or args.kwarg:
        return None
    return lam


__all__ = ["asserted_lambda"]

"""`functools.partial(f, ...)` of a function of the project, read as `f` (issue 14, item 8).

ExecuTorch's llama `Rope` keeps `self.precompute_freqs_cis = partial(precompute_freqs_cis,
use_scaled=...)` and calls it in `__init__`. Reading what a model holds (`class_contents`), the
callable a `partial` is handed is called later, unseen, so it may build anything; when it is
a function of the model's module or of another module of the project, what the partial runs
is that function, with more arguments: what it builds is read in its own module, as a direct
call of it is. The partial's own arguments are calls read with the model's, or values the
function receives as parameters (a callable among them, called there, is anything).
"""

from __future__ import annotations

import ast

_PARTIAL = "functools.partial"


def partial_callee(call: ast.Call, name: str) -> ast.expr | None:
    """The function `call` (of the callee named `name`) makes a partial of, when it is written
    as a name or a dotted name; None otherwise."""
    if name != _PARTIAL or not call.args or isinstance(call.args[0], ast.Starred):
        return None
    first = call.args[0]
    return first if isinstance(first, (ast.Name, ast.Attribute)) else None


__all__ = ["partial_callee"]

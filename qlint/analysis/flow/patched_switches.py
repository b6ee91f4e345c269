"""A graph whose `eval`/`train` are replaced on the instance by functions that switch nothing
(issue 14; voyager-compiler's ImageNet script):

    model = prepare_pt2e(exported_model, quantizer)

    def _eval(self, mode: bool = True):
        pass

    model.eval = types.MethodType(_eval, model)
    model.train = types.MethodType(_eval, model)

An attribute set on the instance shadows the class's method, so the later `model.eval()` (in
the script's validation helper) calls `_eval`, and the exported graph's raising override never
runs: the value counts as allowed, as after `allow_exported_model_train_eval`.

Only a replacement that cannot reach a switch counts: `types.MethodType(f, ...)`, a lambda or
a function name, where `f` is a lambda or an undecorated function written in the same function
whose body calls nothing at all (a call of anything, `original()` bound to the graph's own
method, `super().eval()`, may be the raising switch). Anything else (a function of another
module, `functools.partial(orig, ...)`) leaves the value as it was.
"""

from __future__ import annotations

import ast

_SWITCHES = frozenset({"eval", "train"})
_METHOD_TYPES = frozenset({"types.MethodType"})
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def replaces_switch(target: ast.expr, value: ast.expr | None, qualname, nested: dict, func: ast.AST) -> bool:
    """`target = value` sets `eval` or `train` on an instance to a function that switches
    nothing (`qualname`: how `func`'s names resolve; `nested`: its local functions)."""
    if not (isinstance(target, ast.Attribute) and target.attr in _SWITCHES) or value is None:
        return False
    if isinstance(value, ast.Call) and qualname(value.func) in _METHOD_TYPES:
        if len(value.args) != 2 or value.keywords:
            return False
        value = value.args[0]
    if isinstance(value, ast.Lambda):
        return _switches_nothing(value.body)
    if isinstance(value, ast.Name):
        found = nested.get(value.id)
        if not isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)) or found.decorator_list:
            return False
        # One definition of the name in the function: which of two the name is bound to is not read.
        defs = sum(isinstance(n, _DEFS) and n.name == value.id for n in ast.walk(func))
        return defs == 1 and all(_switches_nothing(s) for s in found.body)
    return False


def _switches_nothing(node: ast.AST) -> bool:
    """Nothing under `node` is a call."""
    return not any(isinstance(n, ast.Call) for n in ast.walk(node))


__all__ = ["replaces_switch"]

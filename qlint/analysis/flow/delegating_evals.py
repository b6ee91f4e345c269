"""An `eval` override that evals the one field it delegates to (issue 14):

    def eval(self):
        self.model.eval()
        return self            # or: return self.model.eval()

Read on torch 2.13 from the exported graph's `batch_norm` and `dropout`: `w.eval()` runs the
override, which evals what the field holds (every module in it) and nothing else; the wrapper's
own flag stays True, and a batch norm or dropout of its own (outside the field) still captures
in train mode. So `w.eval()` is read as `w.model.eval()` (`evaled_fields` decides whether the
field holds all of the wrapper's mode-dependent content), and such an override does not make
the class's content unknown (`content_syntax`), as any other `eval` of its own does. Read by
syntax alone: an undecorated `def eval(self)` whose body (past a docstring) is exactly one of
the two forms above, on an attribute of `self`.
"""

from __future__ import annotations

import ast


def delegated_field(method: ast.AST) -> str | None:
    """The field `method`, a class's `eval`, evals in one of the forms above; else None."""
    if not isinstance(method, ast.FunctionDef) or method.name != "eval" or method.decorator_list:
        return None
    args = method.args
    if len(args.args) != 1 or args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg:
        return None
    me = args.args[0].arg
    body = method.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # a docstring
    if len(body) == 1 and isinstance(body[0], ast.Return):
        return _field_eval(body[0].value, me)
    if len(body) == 2 and isinstance(body[0], ast.Expr) and isinstance(body[1], ast.Return):
        returned = body[1].value
        if isinstance(returned, ast.Name) and returned.id == me:
            return _field_eval(body[0].value, me)
    return None


def _field_eval(expr: ast.expr | None, me: str) -> str | None:
    """`F` of `<me>.F.eval()`."""
    if not (isinstance(expr, ast.Call) and not expr.args and not expr.keywords):
        return None
    func = expr.func
    if not (isinstance(func, ast.Attribute) and func.attr == "eval" and isinstance(func.value, ast.Attribute)):
        return None
    field = func.value
    return field.attr if isinstance(field.value, ast.Name) and field.value.id == me else None


__all__ = ["delegated_field"]

"""Loops that freeze a model's parameters: `for p in model.parameters(): p.requires_grad = False`
(issue 14, item 2: Ultralytics' exporter freezes the copy it evals and stores).

Such a loop sets a flag of each parameter tensor: it reads no module's `training` and sets
none, and hands the module to nothing but its own iterator, so the model it walks is after it
the object it was before, in the mode it was in, as after `model.requires_grad_(False)`
(`MODE_KEEPING_METHODS`). Read exactly: the iterator is `parameters()`, `named_parameters()`,
`buffers()` or `named_buffers()` of the model itself (a local name or `self.<attr>`) with
constant arguments only (`recurse=False`); the loop has no `else`, its target is one name or
a pair of names (the key and the tensor of the named iterators); its body holds only stores
of a constant in the tensor's `requires_grad` and calls of its `requires_grad_` with constant
arguments. Anything else in the body (a `p.data` store, a call of a function with the tensor,
`break`) and the loop is not one of them.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_apis import key

_PLAIN = frozenset({"parameters", "buffers"})
_NAMED = frozenset({"named_parameters", "named_buffers"})


def freezes_only(stmt: ast.stmt, model: str) -> bool:
    """`stmt` is such a loop over the tensors of `model` (`"model"` or `"self.model"`)."""
    if not isinstance(stmt, ast.For) or stmt.orelse:
        return False
    call = stmt.iter
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) or key(call.func.value) != model:
        return False
    kind = call.func.attr
    if kind not in _PLAIN and kind not in _NAMED:
        return False
    if not _constants([*call.args, *(kw.value for kw in call.keywords)]) or any(kw.arg is None for kw in call.keywords):
        return False
    item = _item(stmt.target, kind in _NAMED)
    if item is None or item == model.partition(".")[0]:
        return False  # `for model in model.parameters()`: the loop rebinds the model's own name
    return all(_sets_grad(s, item) for s in stmt.body)


def _item(target: ast.expr, named: bool) -> str | None:
    """The name bound to the tensor: the target itself, or the second of a `(name, p)` pair."""
    if not named:
        return target.id if isinstance(target, ast.Name) else None
    if not isinstance(target, ast.Tuple) or len(target.elts) != 2:
        return None
    first, second = target.elts
    if not (isinstance(first, ast.Name) and isinstance(second, ast.Name)) or first.id == second.id:
        return None
    return second.id


def _sets_grad(stmt: ast.stmt, item: str) -> bool:
    """`p.requires_grad = False` or `p.requires_grad_(False)` (constants only)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        return _field_of(target, item) and _constants([stmt.value])
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if not (_field_of(call.func, item, "requires_grad_") and not any(kw.arg is None for kw in call.keywords)):
            return False
        return _constants([*call.args, *(kw.value for kw in call.keywords)])
    return False


def _field_of(node: ast.expr, item: str, field: str = "requires_grad") -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == field
        and isinstance(node.value, ast.Name)
        and node.value.id == item
    )


def _constants(values: list[ast.expr]) -> bool:
    return all(isinstance(v, ast.Constant) for v in values)


__all__ = ["freezes_only"]

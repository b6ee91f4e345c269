"""What counts as an FX node target in source: `<expr>.target`, `getattr(n, "target")`,
or a local name every assignment of which is one of those.

Normalizers (`node.target.overloadpacket`, `getattr(node.target, "overloadpacket", None)`)
are different expressions and therefore never count.
"""

from __future__ import annotations

import ast

from qlint.analysis.names.functions import Body


def is_target_attr(expr: ast.AST) -> bool:
    if isinstance(expr, ast.Attribute) and expr.attr == "target":
        return True
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "getattr"
        and len(expr.args) == 2
        and isinstance(expr.args[1], ast.Constant)
        and expr.args[1].value == "target"
    )


def target_names(body: Body) -> frozenset[str]:
    names = set()
    for name, values in body.local.items():
        if values and all(is_target_attr(v) for v in values):
            names.add(name)
    return frozenset(names)


def is_node_target(expr: ast.AST, names: frozenset[str]) -> bool:
    return is_target_attr(expr) or (isinstance(expr, ast.Name) and expr.id in names)

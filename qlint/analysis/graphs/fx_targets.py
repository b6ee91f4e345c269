"""What counts as an FX node target in source: `<expr>.target`, `getattr(n, "target")`,
or a local name every assignment of which is one of those.

Normalizers (`node.target.overloadpacket`, `getattr(node.target, "overloadpacket", None)`)
are different expressions and therefore never count.
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.context import FileContext
from qlint.analysis.names.functions import Body
from qlint.lazy_patterns import lazy

# Where a node target can be written, on a row holding "target": `<expr>.target` (not
# `.target_dtype`; the dot may end the row before), or the `"target"` of
# `getattr(n, "target")`. Rows of other mentions (`target_dtype=`, prose) are not walked.
_TARGET_TEXT = lazy(r"""(?:\.|^)\s*target\b|["']target["']""")
# `<expr>.target = value`, not `==`.
_TARGET_STORE = lazy(r"(?:\.|^)\s*target\s*=(?!=)")


def target_rows(ctx: FileContext) -> frozenset[int]:
    """Rows on which a node target (`n.target`, `getattr(n, "target")`) can end."""
    return _rows(ctx, _TARGET_TEXT)


def target_store_rows(ctx: FileContext) -> frozenset[int]:
    """Rows on which `<expr>.target = ...` can be written."""
    return _rows(ctx, _TARGET_STORE)


def _rows(ctx: FileContext, pattern: re.Pattern) -> frozenset[int]:
    key = ("graphs.rows", pattern.pattern)
    if key not in ctx.cache:
        # The substring search is shared with every rule asking for "target"; the pattern
        # only runs on those rows.
        line = ctx.word_lines.line  # the rows `lines_containing` found, as it read them
        ctx.cache[key] = frozenset(r for r in ctx.lines_containing("target") if pattern.search(line(r)))
    return ctx.cache[key]


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

"""What a QL101/QL102 fix writes in place of a packet, read back from its edits (torch-free).

The fixes come in two shapes (see `qlint.rules.overload_fixes`): an overload appended to
the packet expression (`.default`), or the expression replaced by a list of elements
(`p.default, p.tensor`, or `p, p.default` with fix-style "both"). Parsing the edit text,
rather than trusting the rule's message, checks the fix that would really be applied.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FixSpec:
    """What a QL101/QL102 fix puts where the packet was: overloads, maybe the packet too."""

    overloads: tuple[str, ...]
    keeps_packet: bool = False

    def describe(self) -> str:
        names = ", ".join(f"`.{o}`" for o in self.overloads)
        return f"the packet and {names}" if self.keeps_packet else names


def parse_fix(fix: dict[str, Any] | None) -> FixSpec | str | None:
    """The fix's edits as a FixSpec; a string says why they are not an overload rewrite."""
    if not fix or not fix.get("edits"):
        return None
    edits = fix["edits"]
    if len(edits) != 1:
        return "the fix has several edits"
    edit = edits[0]
    content = edit["content"]
    if edit["where"] == "append":
        name = content[1:]
        if content.startswith(".") and name.isidentifier():
            return FixSpec((name,))
    elif edit["where"] == "replace":
        return _parse_elements(content)
    return f"the fix edit {content!r} is not an overload rewrite"


def _parse_elements(content: str) -> FixSpec | str:
    """`p, p.default` (fix-style both) or `p.default, p.tensor` (several overloads), also as
    `target in (p, p.default)` and `p | p.default`."""
    try:
        expr = ast.parse(content.strip(), mode="eval").body
    except SyntaxError:
        return f"the fix text {content!r} does not parse"
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], (ast.In, ast.NotIn)):
        expr = expr.comparators[0]  # `target in (p, p.default)`: the membership collection
    elements = expr.elts if isinstance(expr, ast.Tuple) else _alternatives(expr)
    for base in dict.fromkeys(ast.unparse(e.value) for e in elements if isinstance(e, ast.Attribute)):
        overloads, keeps_packet = [], False
        for element in elements:
            if ast.unparse(element) == base:
                keeps_packet = True
            elif isinstance(element, ast.Attribute) and ast.unparse(element.value) == base:
                overloads.append(element.attr)
            else:
                break
        else:
            return FixSpec(tuple(overloads), keeps_packet)
    return f"the fix text {content!r} is not a list of overloads of one packet"


def _alternatives(expr: ast.expr) -> list[ast.expr]:
    """`p | p.default` in a `case` pattern: its alternatives."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
        return _alternatives(expr.left) + _alternatives(expr.right)
    return [expr]

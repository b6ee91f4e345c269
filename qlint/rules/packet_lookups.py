"""Op collections a body also looks up by a node target's packet (issue 14, FlatFlow's serializer).

`if node.target in TABLE: ... elif node.target.overloadpacket in TABLE: op = TABLE[node.target.overloadpacket]`
tries the overload first, then the op's packet: a packet key of `TABLE` matches there every
overload of its op, so the exact test beside it is no dead matcher of that packet. Only a
lookup in the same body counts (as QL101 judges each body's matchers): a function that looks
the table up exactly and nothing else still misses the packets, whatever another does.
"""

from __future__ import annotations

import ast

from qlint.analysis.graphs.fx_targets import is_node_target
from qlint.analysis.names.functions import Body
from qlint.analysis.names.resolver import Resolver

_KINDS = frozenset({ast.Compare, ast.Subscript, ast.Call})


def without_packet_lookups(
    ctx, body: Body, resolver: Resolver, names: frozenset[str], matched: list[tuple[ast.expr, list]]
) -> list[tuple[ast.expr, list]]:
    """`matched` (QL101's uses and their packet hits in `body`) without the hits of a
    collection the body also looks up by a node target's packet."""
    if not any(hits for _, hits in matched):
        return matched
    rows = ctx.lines_containing("overloadpacket")
    if not rows:
        return matched
    looked_up = {_key(c, resolver) for c in _looked_up_by_packet(body, rows, names)}
    if not looked_up:
        return matched
    return [(use, [] if hits and _key(use, resolver) in looked_up else hits) for use, hits in matched]


def _looked_up_by_packet(body: Body, rows, names: frozenset[str]):
    """The collections `body` meets with a node target's packet: `t.overloadpacket in C`,
    `C[t.overloadpacket]`, `C.get(t.overloadpacket)` (or `getattr(t, "overloadpacket", d)`)."""
    for node in body.nodes(rows, _KINDS):
        if isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators, strict=True):
                if isinstance(op, (ast.In, ast.NotIn)) and _target_packet(left, names):
                    yield right
                left = right
        elif isinstance(node, ast.Subscript):
            if _target_packet(node.slice, names):
                yield node.value
        elif (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and _target_packet(node.args[0], names)
        ):
            yield node.func.value


def _target_packet(expr: ast.expr, names: frozenset[str]) -> bool:
    if isinstance(expr, ast.Attribute):
        return expr.attr == "overloadpacket" and is_node_target(expr.value, names)
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "getattr"
        and len(expr.args) >= 2
        and isinstance(expr.args[1], ast.Constant)
        and expr.args[1].value == "overloadpacket"
        and is_node_target(expr.args[0], names)
    )


def _key(expr: ast.expr, resolver: Resolver):
    """The collection an expression denotes: the value its name is bound to, or its spelling."""
    located = resolver.value_of(expr) if isinstance(expr, ast.Name) else None
    return id(located.node) if located is not None else ast.dump(expr)

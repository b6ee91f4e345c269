"""QL101's matchers in a body: where its code meets a node target (a comparison, a lookup in a
table by the target, a sink call or one of a helper forwarding to a sink, a `match` case), with
the ops each one is keyed on. A comparison that runs only once the target is known to be a
packet is none."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint.analysis.graphs.call_parts import call_arguments, callee_name
from qlint.analysis.graphs.forwarding import Forwarding
from qlint.analysis.graphs.fx_targets import is_node_target
from qlint.analysis.graphs.sinks import direct_sink_args
from qlint.analysis.names.functions import Body
from qlint.analysis.names.resolver import Located, Resolver
from qlint.rules.base import FileContext
from qlint.rules.overload_fixes import FixSite
from qlint.rules.packet_hits import Hit, arg_hits, collection_hits

# The nodes a matcher can be written as (every other node only holds them).
_MATCHER_KINDS = frozenset({ast.Compare, ast.Subscript, ast.Call, ast.Match})


def matchers(
    ctx: FileContext, body: Body, lines, resolver: Resolver, names: frozenset[str], sinks, forwarding: Forwarding
) -> Iterator[tuple[ast.expr, list[Hit]]]:
    for node in body.nodes(lines, _MATCHER_KINDS):
        if isinstance(node, ast.Compare):
            yield from _compare(ctx, body, node, resolver, names)
        elif isinstance(node, ast.Subscript) and is_node_target(node.slice, names):
            yield node.value, collection_hits(node.value, resolver)
        elif isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "get"
                and node.args
                and is_node_target(node.args[0], names)
            ):
                yield func.value, collection_hits(func.value, resolver)
            yield from _sink_call(node, resolver, sinks, forwarding)
        elif isinstance(node, ast.Match) and is_node_target(node.subject, names):
            for case in node.cases:
                for value in _case_values(case.pattern):
                    ref = resolver.op_ref(value)
                    if ref is not None:  # overloads too: they tell that both forms are matched
                        yield value, [Hit(ref, Located(value, resolver.scope), FixSite("case"))]


def _compare(
    ctx: FileContext, body: Body, node: ast.Compare, resolver: Resolver, names
) -> Iterator[tuple[ast.expr, list[Hit]]]:
    left = node.left
    for op, right in zip(node.ops, node.comparators, strict=True):
        if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            for a, b in ((left, right), (right, left)):
                if is_node_target(a, names):
                    ref = resolver.op_ref(b)
                    if ref is not None and ref.is_packet and _packet_typed(ctx, body, node, a, resolver):
                        continue  # the target is a packet here: comparing it with one is right
                    if ref is not None:
                        negated = isinstance(op, (ast.NotEq, ast.IsNot))
                        # A chained comparison cannot be rewritten as one membership test; an
                        # overload is never fixed (it only tells that both forms are matched).
                        single = len(node.ops) == 1 and ref.is_packet
                        whole = (ctx.range_of(node), ctx.source_of(a), negated) if single else None
                        yield b, [Hit(ref, Located(b, resolver.scope), FixSite("comparison", whole))]
        elif isinstance(op, (ast.In, ast.NotIn)) and is_node_target(left, names):
            hits = collection_hits(right, resolver)
            if hits and _packet_typed(ctx, body, node, left, resolver):
                hits = []  # the target is a packet here: a set of packets is the right test
            yield right, hits
        left = right


def _packet_typed(ctx: FileContext, body: Body, node: ast.Compare, target: ast.expr, resolver: Resolver) -> bool:
    """Whether the comparison runs only after `isinstance(target, OpOverloadPacket)` held."""
    if "OpOverloadPacket" not in ctx.words:
        return False
    from qlint.analysis.graphs.packet_typed_targets import compared_as_packet

    return compared_as_packet(body.node, node, target, resolver)


def _sink_call(
    node: ast.Call, resolver: Resolver, sinks, forwarding: Forwarding
) -> Iterator[tuple[ast.expr, list[Hit]]]:
    args = list(direct_sink_args(node, sinks))
    if not args and (node.args or node.keywords) and callee_name(node) in forwarding.helpers:
        # A helper that forwards a parameter to a sink is a sink too. Resolving the helper
        # may read another module: only worth it when an argument holds a packet.
        candidates = [(a, hits) for a in call_arguments(node) if (hits := arg_hits(a, resolver))]
        if candidates:
            forwarded = {id(a) for a in forwarding.forwarded_args(node, resolver)}
            for arg, (use, hits) in candidates:
                if id(arg) in forwarded:
                    yield use, hits
        return
    for arg in args:
        hit = arg_hits(arg, resolver)
        if hit:
            yield hit


def _case_values(pattern: ast.pattern) -> Iterator[ast.expr]:
    if isinstance(pattern, ast.MatchValue):
        yield pattern.value
    elif isinstance(pattern, ast.MatchOr):
        for p in pattern.patterns:
            yield from _case_values(p)


__all__ = ["matchers"]

"""The packets a value hands an exact-compare matcher: the op itself, or those in the collection
of ops it denotes (QL101, and the base-class matchers `inherited_matchers` follows)."""

from __future__ import annotations

import ast

from qlint.analysis.names.op_refs import OpRef
from qlint.analysis.names.resolver import Located, Resolver
from qlint.optable import OpTable
from qlint.rules.overload_fixes import FixSite
from qlint.rules.sibling_overloads import missed_overloads
from qlint.value_classes import replace, value_class


@value_class(frozen=True)
class Hit:
    ref: OpRef
    element: Located  # where the packet is written
    site: FixSite
    # Overloads graphs carry that the overloads beside a packet its table holds for others
    # leave unmatched (`aten.arange: ARANGE` beside `aten.arange.start: ARANGE_START` leaves
    # `.default`, `.start_step`).
    missed: tuple[str, ...] = ()
    # With `missed`: the overloads of its op keyed beside it (its table's, then the same
    # function's comparisons'), which the runtime check keys the table on with it.
    beside: tuple[str, ...] = ()


def collection_hits(expr: ast.expr, resolver: Resolver) -> list[Hit]:
    """Packets in a collection of ops, unless the collection also holds the overloads graphs
    carry of their op (`sibling_overloads`) or maps each packet to one of its overloads (a
    normalizer table)."""
    members = resolver.members(expr)
    if members is None:
        return []
    refs: list[tuple[OpRef, Located]] = []
    for m in members:
        sub = resolver.for_scope(m.scope)
        ref = sub.op_ref(unwrap_nodespec(m.node))
        if ref is None:
            continue
        if ref.is_packet and m.dict_value is not None:
            value = sub.op_ref(m.dict_value)
            if value is not None and value.key == ref.key and not value.is_packet:
                continue
        refs.append((ref, m))
    siblings: dict[tuple, set[str]] = {}
    sibling_values: dict[tuple, set[str]] = {}  # what a table maps the overloads to
    for r, m in refs:
        if not r.is_packet:
            siblings.setdefault(r.key, set()).add(r.overload)
            if m.dict_value is not None:
                sibling_values.setdefault(r.key, set()).add(ast.dump(m.dict_value))
    hits = []
    for ref, located in refs:
        if ref.is_packet:
            # A table entry mapping the packet to another value than each of its overloads'
            # (FlatFlow: `aten.arange: ARANGE`, `aten.arange.start: ARANGE_START`) stands for
            # the other overloads; one mapping it to the same value is an alias of them.
            distinct = located.dict_value is not None and ast.dump(located.dict_value) not in sibling_values.get(
                ref.key, ()
            )
            beside = siblings.get(ref.key, ())
            missed = missed_overloads(resolver.optable, ref, beside, distinct)
            if missed is not None:
                site = FixSite("other" if located.dict_key else "element")
                hits.append(Hit(ref, located, site, missed, tuple(sorted(beside)) if missed else ()))
    return hits


def overloads_compared(matched: list[tuple[ast.expr, list[Hit]]]) -> dict[tuple, set[str]]:
    """The overloads, by op, a body compares node targets with (outside collections)."""
    siblings: dict[tuple, set[str]] = {}
    for _, hits in matched:
        for h in hits:
            if not h.ref.is_packet:
                siblings.setdefault(h.ref.key, set()).add(h.ref.overload)
    return siblings


def packets_left(optable: OpTable, hits: list[Hit], siblings: dict[tuple, set[str]]) -> list[Hit]:
    """The packet hits that the body's own overloads of their op (`siblings`) leave reported:
    a packet its table holds for other overloads than its siblings' (`Hit.missed`) when those
    comparisons leave some of them unmatched, any other one when none is an overload graphs
    can carry (`sibling_overloads`)."""
    kept = []
    for h in hits:
        if not h.ref.is_packet:
            continue
        beside = siblings.get(h.ref.key, ())
        if h.missed:
            missed = tuple(o for o in h.missed if o not in beside)
            if not missed:
                continue
            keyed = tuple(sorted({*h.beside, *beside}))
            if missed != h.missed or keyed != h.beside:
                h = replace(h, missed=missed, beside=keyed)
        elif beside and missed_overloads(optable, h.ref, beside, distinct=False) is None:
            continue
        kept.append(h)
    return kept


def unwrap_nodespec(node: ast.expr) -> ast.expr:
    """`ns.call_function(op)` (the PT2E test helpers' NodeSpec) stands for `op`."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "call_function"
        and len(node.args) == 1
    ):
        return node.args[0]
    return node


def arg_hits(arg: ast.expr, resolver: Resolver) -> tuple[ast.expr, list[Hit]] | None:
    """A sink argument's packets: the packet itself, or those in the collection it denotes."""
    inner = unwrap_nodespec(arg)
    ref = resolver.op_ref(inner)
    if ref is not None:
        return (inner, [Hit(ref, Located(inner, resolver.scope), FixSite("other"))]) if ref.is_packet else None
    if not isinstance(arg, COLLECTION_EXPRS):
        return None
    hits = collection_hits(arg, resolver)
    return (arg, hits) if hits else None


COLLECTION_EXPRS = (ast.Name, ast.Attribute, ast.Set, ast.List, ast.Tuple, ast.Dict, ast.Call, ast.BinOp)

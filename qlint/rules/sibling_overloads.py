"""A packet compared beside overloads of its own op (QL101): do they handle what graphs carry?

`t == aten.sym_size or t == aten.sym_size.int` matches every exported `sym_size` node: the
packet is dead, but the overload beside it does the work. `aten.arange` beside
`aten.arange.start` does not: exported graphs carry `.default` for `arange(n)` and
`.start_step` for `arange(a, b, s)` too, and nothing matches those. The op table's probe
records every overload export puts in a graph for such ops (`carried`), so the siblings can be
held against that list; for an op it has no such record of, a sibling graphs can carry is
taken as handling both forms, as before. Edge-dialect ops keep that reading too: the table's
`carried` describes exported ATen graphs, not the core-ATen ones `to_edge` makes.
"""

from __future__ import annotations

from collections.abc import Iterable

from qlint.analysis.names.resolver import OpRef
from qlint.diagnostic import Applicability, Edit, Fix, Range
from qlint.optable import OpTable
from qlint.rules.overload_fixes import FixSite, graphs_carry, op_info
from qlint.value_classes import replace


def missed_overloads(optable: OpTable, packet: OpRef, siblings: Iterable[str]) -> tuple[str, ...] | None:
    """What the overloads `siblings` compared beside `packet` leave unmatched.

    None when they handle the packet's graphs (the packet is dead but harmless); () when no
    sibling graphs can carry is compared (the packet is reported as any other); otherwise the
    overloads graphs carry that no sibling names, in the table's order.
    """
    siblings = set(siblings)
    if not any(graphs_carry(optable, replace(packet, overload=o)) for o in siblings):
        return ()
    info = op_info(optable, packet)
    if packet.dialect != "aten" or info is None or not info.carried:
        return None
    return tuple(o for o in info.carried if o not in siblings) or None


def sibling_fix(spelled: str, expr_range: Range, site: FixSite, missed: tuple[str, ...], both: bool) -> Fix:
    """Fix for packet `spelled` written beside some of its overloads: name the ones `missed`.

    Never safe: the probe's list says which overloads exported graphs carry, not that a graph
    built by hand holds no other; and with `both` (the installed stack inserts the op as a
    packet) the packet stays."""
    names = [f"{spelled}.{o}" for o in missed]
    listed = ", ".join(f"`{n}`" for n in names)
    kept = [spelled] if both else []
    message = f"Match {listed} too (graphs carry {'them' if len(names) > 1 else 'it'})"
    if site.kind == "element":
        return Fix(Applicability.UNSAFE, message, (Edit(expr_range, ", ".join(kept + names)),))
    if site.kind == "comparison" and site.compare is not None:
        rng, target, negated = site.compare
        forms = kept + names
        text = f"{target} {'not in' if negated else 'in'} ({', '.join(forms)}{',' if len(forms) == 1 else ''})"
        return Fix(Applicability.UNSAFE, message, (Edit(rng, text),))
    if site.kind == "case":
        return Fix(Applicability.UNSAFE, message, (Edit(expr_range, " | ".join(kept + names)),))
    if len(names) == 1 and not both:
        end = Range(expr_range.end, expr_range.end)
        return Fix(Applicability.UNSAFE, message, (Edit(end, f".{missed[0]}"),))
    return Fix(Applicability.DISPLAY_ONLY, message)


def missed_text(missed: tuple[str, ...]) -> str:
    """The part of a message naming what the overloads beside a packet leave unmatched."""
    forms = ", ".join(f"`.{o}`" for o in missed)
    return f"the overloads beside it leave {forms} unmatched, which graphs carry too"

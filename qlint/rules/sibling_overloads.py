"""A packet compared beside overloads of its own op (QL101): do they handle what graphs carry?

`t == aten.sym_size or t == aten.sym_size.int` matches every exported `sym_size` node: the
packet is dead, but the overload beside it does the work, and the packet stands for the same
nodes (graphs normalised to packets carry it instead). So does `aten.view` beside
`aten.view.default` in a list of view ops, though exported graphs also carry `view.dtype`: the
code around it reads the shape argument `.default` takes. A table that maps the packet to
another value than its overloads' says otherwise: FlatFlow's serializer keys `aten.arange` to
its ARANGE code beside `aten.arange.start` to ARANGE_START, so the packet stands for the other
forms, and exported graphs carry `.default` for `arange(n)` and `.start_step` for
`arange(a, b, s)`, which no key matches. The op table's probe records every overload export
puts in a graph for such ops (`carried`); for an op it has no record of, and for edge-dialect
ops (the table's list describes exported ATen graphs, not the core-ATen ones `to_edge`
makes), a sibling graphs can carry handles both forms.
"""

from __future__ import annotations

from collections.abc import Iterable

from qlint.analysis.names.op_refs import OpRef
from qlint.diagnostic import Applicability, Edit, Fix, Range
from qlint.optable import OpTable
from qlint.rules.overload_fixes import graphs_carry, op_info
from qlint.value_classes import replace


def missed_overloads(
    optable: OpTable, packet: OpRef, siblings: Iterable[str], distinct: bool
) -> tuple[str, ...] | None:
    """What the overloads `siblings` compared beside `packet` leave unmatched.

    () when no sibling graphs can carry is compared (the packet is reported as any other).
    Otherwise, for a packet that stands for the same nodes as its siblings (`distinct` false:
    a set, a comparison, a table mapping it to the same value), None: the siblings handle them.
    For one a table maps to another value (`distinct`), the overloads graphs carry that no
    sibling names, or None when there are none (or the table records none for the op).
    """
    siblings = set(siblings)
    if not any(graphs_carry(optable, replace(packet, overload=o)) for o in siblings):
        return ()
    info = op_info(optable, packet)
    if not distinct or packet.dialect != "aten" or info is None or not info.carried:
        return None
    return tuple(o for o in info.carried if o not in siblings) or None


def sibling_fix(spelled: str, expr_range: Range, missed: tuple[str, ...], both: bool) -> Fix:
    """Fix for table key `spelled` (a packet beside some of its overloads): the overload
    `missed` when it is the only one, else a list of them.

    Never safe: the probe's list says which overloads exported graphs carry, not that a graph
    built by hand holds no other; and with `both` (the installed stack inserts the op as a
    packet) the packet stays, so nothing is rewritten."""
    names = ", ".join(f"`{spelled}.{o}`" for o in missed)
    if len(missed) == 1 and not both:
        end = Range(expr_range.end, expr_range.end)
        return Fix(Applicability.UNSAFE, f"Use {names} (graphs carry it)", (Edit(end, f".{missed[0]}"),))
    return Fix(Applicability.DISPLAY_ONLY, f"Key the entry on {names} (graphs carry them)")


def missed_text(missed: tuple[str, ...]) -> str:
    """The part of a message naming what the overloads beside a packet leave unmatched."""
    forms = ", ".join(f"`.{o}`" for o in missed)
    return f"the overloads beside it leave {forms} unmatched, which graphs carry too"

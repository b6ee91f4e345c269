"""Advice and fixes for a packet written where an overload is needed (QL101, QL102).

The op table decides how sure a fix can be: a single overload is a safe rewrite; several
overloads of which graphs carry one is a likely but unsafe one; otherwise only a list.
"""

from __future__ import annotations

from qlint.analysis.names import OpRef
from qlint.diagnostic import Applicability, Edit, Fix, Range
from qlint.optable import OpInfo, OpTable


def op_info(optable: OpTable, ref: OpRef) -> OpInfo | None:
    return optable.lookup(ref.namespace, ref.op)


def op_evidence(kind: str, refs: list[OpRef], info: OpInfo | None) -> dict:
    """What the runtime checker needs to rebuild the finding on real graphs: the ops as
    written (packets) and what the op table says about their overloads."""
    return {
        "kind": kind,
        "ops": [{"namespace": r.namespace, "op": r.op, "overload": r.overload, "dialect": r.dialect} for r in refs],
        "carried": list(info.carried) if info else [],
        "overloads": list(info.overloads) if info else [],
    }


def graph_overloads(info: OpInfo) -> tuple[str, ...]:
    """Overloads an FX graph can carry before ExecuTorch's out-variant pass: not `out`
    variants, not TorchScript-only ones (`aten.add.int`)."""
    return tuple(o for o in info.overloads if o not in info.jit_only and o != "out" and not o.endswith("_out"))


def overload_facts(info: OpInfo | None) -> str:
    """The part of a message that says which overloads exist and which graphs carry."""
    if info is None:
        return "its overloads are unknown to qlint's op table; use the one your graphs carry"
    functional = graph_overloads(info)
    overloads = ", ".join(f"`.{o}`" for o in functional)
    if len(functional) == 1:
        return f"graphs carry `.{functional[0]}`, its only functional overload"
    if len(info.carried) == 1:
        return f"graphs carry `.{info.carried[0]}` (overloads: {overloads})"
    if info.carried:
        carried = ", ".join(f"`.{o}`" for o in info.carried)
        return f"graphs carry {carried} (overloads: {overloads})"
    return f"overloads: {overloads}"


def chosen_overloads(info: OpInfo | None) -> tuple[tuple[str, ...], Applicability]:
    """Which overload(s) a fix should name, and how safe naming them is."""
    if info is None:
        return (), Applicability.DISPLAY_ONLY
    functional = graph_overloads(info)
    if len(functional) == 1:
        return functional, Applicability.SAFE
    if len(info.carried) == 1:
        return info.carried, Applicability.UNSAFE
    return info.carried, Applicability.DISPLAY_ONLY


def overload_fix(
    info: OpInfo | None,
    spelled: str,
    expr_range: Range,
    in_collection: bool,
    style: str = "overload",
) -> Fix:
    """Fix for a packet expression `spelled` at `expr_range`.

    `in_collection`: the expression is an element of a set/list/tuple literal, where it can
    be replaced by several elements. `style="both"` keeps the packet next to the overload
    (for code that must still match graphs from a producer that inserts packets).
    """
    overloads, applicability = chosen_overloads(info)
    if applicability is Applicability.DISPLAY_ONLY and in_collection and info is not None and graph_overloads(info):
        overloads, applicability = graph_overloads(info), Applicability.UNSAFE
    if applicability is Applicability.DISPLAY_ONLY:
        listed = ", ".join(f"`{spelled}.{o}`" for o in (graph_overloads(info) if info else ("default",)))
        return Fix(Applicability.DISPLAY_ONLY, f"Compare with the overload graphs carry: {listed}")
    names = [f"{spelled}.{o}" for o in overloads]
    if len(names) == 1 and not (style == "both" and in_collection):
        end = Range(expr_range.end, expr_range.end)
        return Fix(applicability, f"Use `{names[0]}`", (Edit(end, f".{overloads[0]}"),))
    if not in_collection:
        listed = ", ".join(f"`{n}`" for n in names)
        return Fix(Applicability.DISPLAY_ONLY, f"Compare with each of {listed}")
    elements = ([spelled] if style == "both" else []) + names
    message = f"Use {', '.join(f'`{n}`' for n in names)}" + (" next to the packet" if style == "both" else "")
    return Fix(applicability, message, (Edit(expr_range, ", ".join(elements)),))

"""Advice and fixes for a packet written where an overload is needed (QL101, QL102).

The op table decides how sure a fix can be: a single overload is a safe rewrite; several
overloads of which graphs carry one is a likely but unsafe one; otherwise only a list.
"""

from __future__ import annotations

from qlint import evidence
from qlint.analysis.names.op_refs import OpRef
from qlint.diagnostic import Applicability, Edit, Fix, Range
from qlint.evidence.ops import OpEvidence
from qlint.optable import OpInfo, OpTable
from qlint.value_classes import value_class


def op_info(optable: OpTable, ref: OpRef) -> OpInfo | None:
    return optable.lookup(ref.namespace, ref.op)


def op_evidence(
    kind: str, refs: list[OpRef], info: OpInfo | None, siblings: tuple[str, ...] = (), missed: tuple[str, ...] = ()
) -> OpEvidence:
    """What the runtime checker needs to rebuild the finding on real graphs: the ops as
    written (packets), what the op table says about their overloads, and for a packet keyed
    beside its own overloads, those and the ones they leave unmatched (`sibling_overloads`)."""
    return OpEvidence(
        kind=kind,
        ops=tuple(evidence.OpRef(r.namespace, r.op, r.overload, r.dialect) for r in refs),
        carried=tuple(info.carried) if info else (),
        overloads=tuple(info.overloads) if info else (),
        siblings=siblings,
        missed=missed,
    )


def graph_overloads(info: OpInfo) -> tuple[str, ...]:
    """Overloads an FX graph can carry before ExecuTorch's out-variant pass: not `out`
    variants, not TorchScript-only ones (`aten.add.int`)."""
    return tuple(o for o in info.overloads if o not in info.jit_only and o != "out" and not o.endswith("_out"))


def graphs_carry(optable: OpTable, ref: OpRef) -> bool:
    """Whether graphs can carry the overload `ref` names: `aten.sym_size.default` (a
    TorchScript-only overload; exported graphs carry `.int`) next to the packet does not
    make a matcher handle both forms. An op the table does not know gets the benefit of
    the doubt."""
    info = op_info(optable, ref)
    if info is None or ref.overload is None:
        return info is None
    if info.carried:
        return ref.overload in info.carried
    return ref.overload in graph_overloads(info)


def shown(spelled: str, ref: OpRef) -> str:
    """`dq_op (quantized_decomposed.dequantize_per_tensor)` when a name stands for the packet."""
    return f"`{spelled}`" if spelled.endswith(f"{ref.namespace}.{ref.op}") else f"`{spelled}` (`{ref.spelled()}`)"


def overload_facts(info: OpInfo | None) -> str:
    """The part of a message that says which overloads exist and which graphs carry."""
    if info is None:
        return "its overloads are unknown to qlint's op table; use the one your graphs carry"
    functional = graph_overloads(info)
    overloads = ", ".join(f"`.{o}`" for o in functional)
    if len(functional) == 1:
        return f"graphs carry `.{functional[0]}`, its only functional overload"
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


@value_class(frozen=True)
class FixSite:
    """Where a packet is written, which decides what a fix can put in its place.

    kind: "element" of a set/list/tuple (room for several elements), "comparison"
    (`target == packet`; `compare` is then the whole comparison's range, the target's
    source and whether it is negated), "case" (a `case` pattern), or "other" (a dict key,
    a call argument, an inserted target: one expression only).
    """

    kind: str
    compare: tuple[Range, str, bool] | None = None


def packet_producers(optable: OpTable, info: OpInfo | None) -> list[str]:
    """Flows of the installed stack that insert this op as a packet (torchao 0.18's affine
    observers do): graphs then carry the packet or the overload depending on their history."""
    if info is None:
        return []
    return optable.meta.get("probe", {}).get("packet_targets", {}).get(f"{info.namespace}.{info.name}", [])


def overload_fix(
    info: OpInfo | None,
    spelled: str,
    expr_range: Range,
    site: FixSite,
    style: str = "overload",
    producers: list[str] | None = None,
) -> Fix:
    """Fix for the packet expression `spelled` at `expr_range`.

    `style="both"` keeps the packet next to the overload, for code that must still match
    graphs from a producer that inserts packets. With `producers` (flows of the installed
    stack that insert this op as a packet) a fix that drops the packet breaks whatever
    checks freshly converted graphs, so it is never safe, whatever the op table says.
    """
    fix, keeps_packet = _overload_fix(info, spelled, expr_range, site, style)
    if producers and fix.applicability is Applicability.SAFE and not keeps_packet:
        flows = ", ".join(producers)
        return Fix(
            Applicability.UNSAFE, f"{fix.message} (drops the packet the installed {flows} flows insert)", fix.edits
        )
    return fix


def _overload_fix(info: OpInfo | None, spelled: str, expr_range: Range, site: FixSite, style: str) -> tuple[Fix, bool]:
    """The fix, and whether what it leaves still matches the packet."""
    overloads, applicability = chosen_overloads(info)
    if applicability is Applicability.DISPLAY_ONLY and site.kind == "element" and info and graph_overloads(info):
        overloads, applicability = graph_overloads(info), Applicability.UNSAFE
    if applicability is Applicability.DISPLAY_ONLY:
        listed = ", ".join(f"`{spelled}.{o}`" for o in (graph_overloads(info) if info else ("default",)))
        return Fix(Applicability.DISPLAY_ONLY, f"Compare with the overload graphs carry: {listed}"), False
    names = [f"{spelled}.{o}" for o in overloads]
    both = style == "both"
    suffix = " next to the packet" if both else ""
    if site.kind == "element" and (both or len(names) > 1):
        elements = ([spelled] if both else []) + names
        return Fix(applicability, f"Use {_listed(names)}{suffix}", (Edit(expr_range, ", ".join(elements)),)), both
    if len(names) == 1 and both and site.kind == "comparison" and site.compare is not None:
        rng, target, negated = site.compare
        text = f"{target} {'not in' if negated else 'in'} ({spelled}, {names[0]})"
        return Fix(applicability, f"Match `{spelled}` and `{names[0]}`", (Edit(rng, text),)), True
    if len(names) == 1 and both and site.kind == "case":
        return Fix(
            applicability, f"Match `{spelled}` and `{names[0]}`", (Edit(expr_range, f"{spelled} | {names[0]}"),)
        ), True
    if len(names) == 1:
        end = Range(expr_range.end, expr_range.end)
        return Fix(applicability, f"Use `{names[0]}`", (Edit(end, f".{overloads[0]}"),)), False
    return Fix(Applicability.DISPLAY_ONLY, f"Compare with each of {_listed(names)}"), False


def _listed(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names)

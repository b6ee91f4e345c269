"""QL101 for a packet a table keys beside overloads of its own op, on real graphs (worker side).

FlatFlow's serializer maps `aten.arange` to ARANGE beside `aten.arange.start` to
ARANGE_START and looks node targets up exactly: the packet stands for the other forms, and
the finding says which overloads graphs carry that no key matches (`.default`,
`.start_step`). Counting the packet's own matches, as `ql101.check_matcher` does, confirms
that the packet matches nothing but cannot judge the fix, which keeps the keys beside it:
`.default` alone misses the `.start` nodes the other key handles.

So the table is rebuilt as its keys: the packet and its siblings (`OpEvidence.siblings`),
looked up with the finding's comparison against every node of the op in the reference
graphs (for ATen ops the op table's call forms, `qlint.runtime.call_forms`, exported the
way its probe does). The nodes the packet stands for are those of the overloads no sibling
names. Confirmed when some of them exist and no key matches them; refuted when the
siblings already match every node graphs carry (the packet's entry stands for nothing).

The fix is judged as the keys after it: each overload it names keyed to the packet's value
beside the siblings, which keep theirs. An unsafe fix (one overload) is read from its edit;
a display-only one (several overloads, or a packet the installed stack inserts) names them
in its message, from the finding's `missed`, and `qlint fix` writes none of them: its keys
are checked all the same, and the verdict says it is display-only.
"""

from __future__ import annotations

from typing import Any

from qlint.evidence.ops import OpEvidence
from qlint.runtime import graphs
from qlint.runtime.checks.node_counts import Outcome, forms_text, graph_count, matches, no_graph, nodes_of, overloads_of
from qlint.runtime.checks.overload_edits import FixSpec
from qlint.runtime.ops import OpId, UnknownOp, op_id, resolve, spelled


def _names(overloads) -> str:
    return ", ".join("the packet" if o is None else f"`.{o}`" for o in overloads)


def _keys(ident: OpId, overloads, packet: bool) -> tuple[list[Any], list[str]]:
    """The registry's objects for `overloads` (with the packet), and the overloads it lacks."""
    objs, unknown = [], []
    if packet:
        objs.append(resolve(ident.namespace, ident.op, None, ident.dialect))
    for o in overloads:
        try:
            objs.append(resolve(ident.namespace, ident.op, o, ident.dialect))
        except UnknownOp:
            unknown.append(o)
    return objs, unknown


def check_siblings(evidence: OpEvidence, fix: FixSpec | str | None, display_only: bool) -> Outcome:
    """`fix`: the fix's edits read back (None when there are none or they are not judged);
    `display_only`: judge the display-only fix the finding's `missed` names."""
    (op,) = evidence.ops
    ident = OpId(op.dialect or "aten", op.namespace, op.op, None)
    try:
        keys, unknown = _keys(ident, evidence.siblings, packet=True)
    except UnknownOp as exc:
        return Outcome("skipped", f"op unknown to the installed registry: {exc}")
    siblings = tuple(o for o in evidence.siblings if o not in unknown)
    forms = graphs.forms_for(ident.namespace, ident.op, ident.dialect)
    rows = [(f.label, nodes) for f in forms if (nodes := nodes_of(f, ident.same_op))]
    name = f"`{spelled(ident)}` (packet)"
    if not rows:
        return no_graph(ident, forms)
    nodes = [n for _, ns in rows for n in ns]
    carried = overloads_of(nodes)
    kind = evidence.kind
    keyed = sum(matches(n.target, keys, kind) for n in nodes)
    meant = [n for n in nodes if op_id(n.target).overload not in siblings]  # what the packet stands for
    left = [n for n in meant if not matches(n.target, keys, kind)]
    per_form = "; ".join(f"{label} {forms_text(overloads_of(ns))}" for label, ns in rows)
    text = (
        f"{name} keyed beside {_names(siblings) or 'no overload the registry has'}: "
        f"{graph_count(len(rows))} carry {forms_text(carried)} ({per_form}); "
        f"the keys match {keyed} of {len(nodes)} `{ident.op}` nodes"
    )
    if unknown:
        text += f" (the registry has no {_names(unknown)})"
    if left:
        text += (
            f"; the {len(left)} nodes of {_names(overloads_of(left))} are the ones the packet's entry stands for, "
            "and no key matches them"
        )
        verdict = "confirmed"
    elif meant:
        text += f"; the packet itself matches the {len(meant)} nodes of {_names(overloads_of(meant))}"
        verdict = "refuted"
    else:
        text += f": {_names(siblings)} already match every node graphs carry, the packet's entry stands for none"
        verdict = "refuted"
    if isinstance(fix, str):
        return Outcome(verdict, f"{text}. Fix not checked: {fix}")
    if fix is None and not (display_only and evidence.missed):
        return Outcome(verdict, text)
    named = fix.overloads if fix is not None else evidence.missed
    packet_kept = fix is not None and fix.keeps_packet
    text, verified = _judge_fix(text, ident, nodes, siblings, named, packet_kept, kind)
    if fix is None:
        text += ". The fix is display-only: an entry per overload it names, which `qlint fix` does not write"
    return Outcome(verdict, text, verified)


def _judge_fix(text, ident, nodes, siblings, named, packet_kept, kind) -> tuple[str, bool]:
    """The keys after the fix: `named` (with the packet if kept) to the packet's value, the
    siblings to theirs. Verified when every node is matched, each by a key of the value the
    table meant for it: a sibling for its own overload, the fix's key for the others."""
    clash = [o for o in named if o in siblings]
    try:
        fixed, unknown = _keys(ident, [o for o in named if o not in siblings], packet_kept)
        own, _ = _keys(ident, siblings, packet=False)
    except UnknownOp:  # the packet resolved a moment ago
        fixed, unknown, own = [], list(named), []
    by_fix = sum(matches(n.target, fixed, kind) and not matches(n.target, own, kind) for n in nodes)
    by_sibling = sum(matches(n.target, own, kind) for n in nodes)
    unmatched = [n for n in nodes if not matches(n.target, fixed + own, kind)]
    own_text = f", {_names(siblings)} to {'its' if len(siblings) == 1 else 'their'} own" if siblings else ""
    text += (
        f". With the fix (keys {_names([*(None,) * packet_kept, *named])} to the packet's value{own_text}): "
        f"{by_fix + by_sibling} of {len(nodes)}"
    )
    if unmatched:
        text += f", missing the {len(unmatched)} nodes of {_names(overloads_of(unmatched))}"
    if clash:
        text += f"; it keys {_names(clash)} again, which the table maps to another value (a dict keeps one)"
    if unknown:
        text += f"; the registry has no {_names(unknown)}"
    return text, not unmatched and not clash and not unknown

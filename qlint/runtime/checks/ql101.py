"""QL101 packet-matcher and QL102 packet-insertion, confirmed on real graphs (worker side).

QL101: the finding's comparison (`node.target == op`) or collection (`node.target in {op}`)
is evaluated, as written and as fixed, against the targets of every node of that op in the
reference graphs that carry it (`qlint.runtime.graphs`). Confirmed when the packet misses
nodes of some graph form; refuted when it already matches every node of every form (a
graph family that really carries packets, or an op that is not a packet at all).

QL102: the packet is inserted the way the flagged pass does it, in place of the nodes of
that op in each reference graph; the module must still run with the same outputs (the bug
is silent), a matcher keyed on the overloads graphs carry must miss the inserted nodes,
and torch.export must turn them back into overloads. The fix's overload is inserted the
same way and must run, give the same outputs and be matched.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import torch

from qlint.evidence.ops import OpEvidence, OpRef
from qlint.runtime import graphs
from qlint.runtime.checks.node_counts import Outcome, forms_text, graph_count, matches, no_graph, nodes_of, overloads_of
from qlint.runtime.checks.overload_edits import FixSpec, parse_fix
from qlint.runtime.ops import OpId, UnknownOp, is_packet, op_id, resolve, spelled


@dataclass
class Row:
    """One graph form: how many nodes of the op it has, and how many each side matches."""

    label: str
    total: int
    original: int
    fixed: int | None
    carried: Counter = field(default_factory=Counter)


@dataclass(frozen=True)
class FixProblem:
    """A fix that could not be evaluated: `wrong` when it is known to be wrong (it names an
    overload the registry lacks), None when its edits are simply not an overload rewrite."""

    text: str
    wrong: bool | None = None


def _prepare(op: OpRef, fix: FixSpec | str | None) -> tuple[OpId, Any, list | FixProblem | None] | Outcome:
    """Resolve the op as written and the fix's objects on the installed registry."""
    ident = OpId(op.dialect or "aten", op.namespace, op.op, op.overload)
    try:
        written = resolve(ident.namespace, ident.op, ident.overload, ident.dialect)
    except UnknownOp as exc:
        return Outcome("skipped", f"op unknown to the installed registry: {exc}")
    if ident.overload is None and not is_packet(written):
        kind = type(written).__name__
        return Outcome("refuted", f"`{spelled(ident)}` is a {kind}, not an OpOverloadPacket, on the installed torch")
    if fix is None:
        return ident, written, None
    if isinstance(fix, str):
        return ident, written, FixProblem(fix)
    try:
        fixed = [written] if fix.keeps_packet else []
        fixed += [resolve(ident.namespace, ident.op, o, ident.dialect) for o in fix.overloads]
    except UnknownOp as exc:
        return ident, written, FixProblem(f"the fix names {exc}, which the installed registry does not have", False)
    return ident, written, fixed


def _unchecked_fix(verdict: str, text: str, problem: FixProblem) -> Outcome:
    return Outcome(verdict, f"{text}. Fix not checked: {problem.text}", problem.wrong)


def check_matcher(op: OpRef, kind: str, fix: FixSpec | str | None) -> Outcome:
    prepared = _prepare(op, fix)
    if isinstance(prepared, Outcome):
        return prepared
    ident, written, fixed = prepared
    forms = graphs.forms_for(ident.namespace, ident.op, ident.dialect)
    rows = []
    for form in forms:
        nodes = nodes_of(form, ident.same_op)
        if nodes:
            rows.append(
                Row(
                    form.label,
                    len(nodes),
                    sum(matches(n.target, [written], kind) for n in nodes),
                    sum(matches(n.target, fixed, kind) for n in nodes) if isinstance(fixed, list) else None,
                    overloads_of(nodes),
                )
            )
    if not rows:
        return no_graph(ident, forms)
    total = sum(r.total for r in rows)
    original = sum(r.original for r in rows)
    if ident.overload is None:
        name = f"`{spelled(ident)}` (packet)"
        verdict = "refuted" if original == total else "confirmed"
    else:  # the finding's claim, "a packet", is wrong whatever the counts
        name = f"`{spelled(ident)}` is an OpOverload, not a packet; it"
        verdict = "refuted"
    per_form = ", ".join(f"{r.label} {r.original}/{r.total} ({forms_text(r.carried)})" for r in rows)
    text = f"{name} matches {original} of {total} `{ident.op}` nodes in {graph_count(len(rows))}: {per_form}"
    if isinstance(fixed, FixProblem):
        return _unchecked_fix(verdict, text, fixed)
    if fixed is None:
        return Outcome(verdict, text)
    fixed_total = sum(r.fixed for r in rows)
    text += f". With the fix ({fix.describe()}): {fixed_total} of {total}"
    missed = [r for r in rows if r.fixed != r.total]
    if missed:
        text += ", missing " + ", ".join(f"{r.label} {r.fixed}/{r.total}" for r in missed)
        if any(None in r.carried for r in missed):
            text += (
                "; the graphs with packets come from a producer that inserts them (the installed torchao's "
                'convert_pt2e does, see QL102): fix-style "both" matches both forms'
            )
    return Outcome(verdict, text, fixed_total == total)


def _outputs_equal(a: Any, b: Any) -> bool:
    flat_a, _ = torch.utils._pytree.tree_flatten(a)
    flat_b, _ = torch.utils._pytree.tree_flatten(b)
    if len(flat_a) != len(flat_b):
        return False
    return all(
        torch.equal(x, y) if isinstance(x, torch.Tensor) else x == y for x, y in zip(flat_a, flat_b, strict=True)
    )


def _run(form: graphs.GraphForm) -> Any:
    """Same seed for both runs: train-mode graphs carry dropout."""
    torch.manual_seed(0)
    with torch.no_grad():
        return form.module(*form.inputs)


def _retarget(form: graphs.GraphForm, key, target) -> tuple[graphs.GraphForm, list[torch.fx.Node], str | None]:
    """A copy of `form` with every node of the op pointing at `target` (what a pass that
    inserts `target` produces), and what goes wrong when it runs, if anything."""
    copy = form.copy()
    nodes = nodes_of(copy, key)
    for node in nodes:
        node.target = target
    copy.module.recompile()
    try:
        result = _run(copy)
    except Exception as exc:
        return copy, nodes, f"fails to run ({type(exc).__name__}: {str(exc).splitlines()[0][:160]})"
    if not _outputs_equal(result, _run(form)):
        return copy, nodes, "runs but its outputs differ"
    return copy, nodes, None


def check_insertion(op: OpRef, fix: FixSpec | str | None) -> Outcome:
    prepared = _prepare(op, fix)
    if isinstance(prepared, Outcome):
        return prepared
    ident, written, fixed = prepared
    if isinstance(fixed, list) and len(fixed) != 1:
        fixed = FixProblem("a node takes one target; the fix names several")
    key = ident.same_op
    forms = [f for f in graphs.forms_for(ident.namespace, ident.op, ident.dialect) if nodes_of(f, key)]
    if not forms:
        return Outcome("skipped", f"no reference graph carries `{spelled(ident)}`")
    # Downstream matchers key on the overloads graphs carry; torchao's own convert output may
    # carry packets already (that is this bug), so only overloads define the matcher.
    carried = sorted({o for f in forms for o in overloads_of(nodes_of(f, key))} - {None})
    matcher = [resolve(ident.namespace, ident.op, o, ident.dialect) for o in carried]
    keyed = ", ".join(f"`.{o}`" for o in carried) or "overloads"
    counts, failures, fix_counts, fix_failures = [], [], [], []
    for form in forms:
        _, nodes, problem = _retarget(form, key, written)
        if problem is not None:
            failures.append(f"{form.label} {problem}")
            continue
        counts.append((form.label, sum(matches(n.target, matcher, "collection") for n in nodes), len(nodes)))
        if isinstance(fixed, list):
            _, nodes, problem = _retarget(form, key, fixed[0])
            if problem is not None:
                fix_failures.append(f"{form.label} {problem}")
            fix_counts.append((form.label, sum(matches(n.target, matcher, "collection") for n in nodes), len(nodes)))
    if not counts:
        return Outcome(
            "skipped", f"`{spelled(ident)}` cannot replace the op in any reference graph: " + "; ".join(failures)
        )
    found, total = sum(c[1] for c in counts), sum(c[2] for c in counts)
    name = f"`{spelled(ident)}`" + (" (packet)" if ident.overload is None else "")
    text = (
        f"{name} inserted in place of the {total} `{ident.op}` nodes of {graph_count(len(counts))}: they still run "
        f"with the same outputs, and a matcher keyed on {keyed} finds {found} of {total} ("
        + ", ".join(f"{label} {f}/{n}" for label, f, n in counts)
        + ")"
    )
    if failures:
        text += "; " + "; ".join(failures)
    reexported = _reexported_forms(forms[-1], key, written)
    if reexported:
        text += f". torch.export of such a graph turns the packets into {reexported}"
    verdict = "confirmed" if found < total else "refuted"
    if isinstance(fixed, FixProblem):
        return _unchecked_fix(verdict, text, fixed)
    if fixed is None:
        return Outcome(verdict, text)
    fix_found = sum(c[1] for c in fix_counts)
    ok = not fix_failures and fix_found == total
    text += f". With the fix ({fix.describe()}): "
    if ok:
        text += f"same outputs, matched {fix_found} of {total}"
    else:
        text += "; ".join(fix_failures) or f"matched {fix_found} of {total}"
    return Outcome(verdict, text, ok)


def _reexported_forms(form: graphs.GraphForm, key, written) -> str:
    """What torch.export makes of inserted packets: the op's two forms in the wild."""
    inserted, nodes, problem = _retarget(form, key, written)
    if problem is not None or not nodes:
        return ""
    try:
        again = torch.export.export(inserted.module, inserted.inputs).module()
    except Exception as exc:
        return f"nothing: re-exporting fails ({type(exc).__name__})"
    after = [n for n in again.graph.nodes if n.op == "call_function" and (i := op_id(n.target)) and i.same_op == key]
    return forms_text(overloads_of(after)) + f" ({len(after)} of {len(nodes)} nodes)"


def run(params: dict[str, Any]) -> dict[str, Any]:
    evidence = OpEvidence.from_json(params.get("evidence"))
    ops, kind = evidence.ops, evidence.kind
    if not ops:
        return {"verdict": "skipped", "evidence": "the finding carries no op to check", "fix_verified": None}
    # A fix is only ever written for a single op; several ops come with a display-only fix.
    fix = parse_fix(params.get("fix")) if params.get("verify_fix") and len(ops) == 1 else None
    if evidence.missed and kind != "insertion" and len(ops) == 1:
        # A packet keyed beside its own overloads: judged with them (`sibling_keys`).
        from qlint.runtime.checks.sibling_keys import check_siblings

        display_only = bool(params.get("verify_fix") and params.get("fix") and not params["fix"].get("edits"))
        outcome = check_siblings(evidence, fix, display_only)
        return {"verdict": outcome.verdict, "evidence": outcome.evidence, "fix_verified": outcome.fix_verified}
    check = check_insertion if kind == "insertion" else lambda op, fix: check_matcher(op, kind, fix)
    outcomes = [check(op, fix) for op in ops]
    # Several ops (a collection defined in another module): confirmed if any op is.
    verdicts = [o.verdict for o in outcomes]
    verdict = next((v for v in ("confirmed", "refuted") if v in verdicts), "skipped")
    fixes = [o.fix_verified for o in outcomes if o.fix_verified is not None]
    return {
        "verdict": verdict,
        "evidence": " | ".join(o.evidence for o in outcomes),
        "fix_verified": all(fixes) if fixes else None,
    }

"""What QL201 and QL202 share: why a capture is in the mode it is in, and the fix.

Both rules read the captures `qlint.analysis.flow.model_flow` found; they differ in which flow
they look at (PTQ or QAT) and which mode is wrong.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator

from qlint.analysis.flow.dead_branches import contradicted_at_call
from qlint.analysis.flow.decorator_registries import REGISTRY_RESULT
from qlint.analysis.flow.given_setters import given_target, gives_part
from qlint.analysis.flow.model_apis import last_name, mode_call
from qlint.analysis.flow.model_flow import (
    ATTRIBUTE,
    BUILT_PART,
    CALL,
    CONSTRUCTED,
    GRAPH_KINDS,
    PARAM,
    PARAM_PART,
    PRETRAINED,
    STORED,
    UNKNOWN,
    Capture,
    FunctionFlow,
    ModeFact,
    caller_facts,
    module_flows,
)
from qlint.analysis.flow.part_modes import described
from qlint.analysis.flow.test_fixtures import fixture_of
from qlint.diagnostic import Applicability, Edit, Fix, Range, RelatedInfo
from qlint.evidence.capture import CaptureEvidence, SinkPoint, SourcePoint
from qlint.rules.base import FileContext
from qlint.source import line_ending
from qlint.value_classes import replace, value_class

_NO_MODE_CHANGE = frozenset(
    {
        "torch.no_grad",
        "torch.inference_mode",
        "torch.autograd.no_grad",
        "torch.autograd.grad_mode.no_grad",
        "torch.autograd.grad_mode.inference_mode",
    }
)


@value_class(frozen=True)
class Reason:
    """One way a path reaches the capture: kind train | constructed | parameter | eval | pretrained."""

    kind: str
    node: ast.AST | None  # where the mode was set (for related information)
    text: str
    row: int = 0
    via: int = 0  # the line of the call that passes the model in, for a parameter


def captures(ctx: FileContext, flow: str) -> Iterator[tuple[Capture, list[FunctionFlow]]]:
    """Captures of this file whose program reaches `prepare_pt2e` ("ptq") or `prepare_qat_pt2e` ("qat")."""
    flows = module_flows(ctx)
    for function in flows:
        for cap in function.captures:
            if cap.flows(flow):
                yield cap, flows


def model_text(ctx: FileContext, cap: Capture) -> str:
    """The model as written, without an inline `.eval()`/`.train()`."""
    if cap.model is None:
        return "the model"
    inline = mode_call(cap.model)
    return ctx.source_of(inline[0] if inline else cap.model)


def reasons(ctx: FileContext, cap: Capture, flow: str, flows: list[FunctionFlow]) -> list[Reason]:
    """Why each path that reaches a `flow` sink reaches the capture in its mode."""
    found: set[Reason] = set()
    via: dict[Reason, set[int]] = {}  # what callers pass -> the lines of those calls
    for fact in cap.modes_for(flow):
        origin = fact.origin
        if fact.state == "unset" and origin is not None and origin.kind in (PARAM, STORED):
            # Imported for a model handed in or stored only: the search for callers across the
            # project (~14 modules) is the part of the flow most captures never reach.
            from qlint.analysis.flow.call_sites import calls_all_known
            from qlint.analysis.flow.unread_uses import unread_use

            # For PTQ the reasons decide (QL201 is quiet without a bad one); for QAT they only
            # describe, and the callers' callers are followed as far as they go.
            here = _here(ctx) if flow == "ptq" else None
            callers = caller_facts(flows, origin.node, origin.index, lambda f: calls_all_known(ctx, f), here)
            if origin.kind == PARAM and callers:
                # `helper(model, is_qat=True)` never reaches these sinks: it explains nothing. When
                # no call is left, the helper is judged as if its callers were unknown.
                callers = [c for c in callers if not _rules_out(flows, c[0], origin.node, cap.flows(flow))] or None
            if callers is not None:
                # A use the flow did not read (a lambda, a callback) passes an unknown model.
                unclassified = unread_use(ctx, flows, origin.node)
                bad = False
                for call, caller_fact in callers:
                    reason = _describe(ctx, caller_fact)
                    if reason is not None:
                        via.setdefault(reason, set()).add(call.lineno)
                        bad = bad or reason.kind in _BAD_FOR_PTQ
                    elif _mode_left_open(caller_fact):
                        unclassified = True
                if here is not None and not (unclassified or bad):
                    # Callers in other modules are not in these flows: the verdicts read them
                    # (for a stored `self.model`, the constructions of its class elsewhere).
                    # (Asked last: a caller here that already explains the report makes it moot.)
                    unclassified = not here(origin.node)
                if not unclassified:
                    continue
                # A caller sets a mode qlint cannot read (`model.train(training)`): it vouches
                # for nothing, so the helper is judged as if its callers were unknown.
        reason = _describe(ctx, fact)
        if reason is not None:
            found.add(reason)
    for reason, rows in via.items():
        lines = sorted(rows)
        calls = f"the call at line {lines[0]} passes" if len(lines) == 1 else f"the calls at lines {_join(lines)} pass"
        found.add(Reason(reason.kind, reason.node, f"{calls} it {reason.text}", reason.row, lines[0]))
    # One reason per text: of those that say the same (the parts of `nn.Sequential(conv, bn)`
    # built on one line), the leftmost node is the related location. Without its position in
    # the order, the one kept followed the set's order, which the hash seed changes.
    ordered = sorted(found, key=lambda r: (r.via, r.row, r.kind, r.text, _position(r.node)), reverse=True)
    unique = {(r.kind, r.text): r for r in ordered}
    return sorted(unique.values(), key=lambda r: (r.via, r.row, r.kind, r.text))


def _position(node: ast.AST | None) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


_BAD_FOR_PTQ = frozenset({"train", "constructed", "parameter"})


def _here(ctx: FileContext):
    """What `caller_facts` follows a caller's parameter up through (`calls_read_here`)."""
    from qlint.analysis.flow.call_sites import calls_read_here  # as in `reasons`

    return lambda f: calls_read_here(ctx, f)


def _rules_out(flows: list[FunctionFlow], call: ast.Call, callee: ast.AST, sinks) -> bool:
    """The call's arguments contradict the branch of every sink (a direct call of `callee`)."""
    site = holder = None
    for f in flows:
        for c in f.calls:
            if c.call is call and c.callee is callee:
                site, holder = c, f
    home = next((f for f in flows if f.node is callee), None)
    if site is None or home is None or not sinks:
        return False
    return all(
        contradicted_at_call(s.guard, callee, site.exprs, holder.resolver, home.resolver, site.open_ended())
        for s in sinks
    )


def _mode_left_open(fact: ModeFact) -> bool:
    """A caller whose model the analysis cannot classify: is the helper then judged as if its
    callers were unknown (issue 14, item 7)? Yes by default, and for `.train(flag)` in the
    caller, which makes the mode depend on data.

    Classified before this is asked: loop items of containers the caller writes
    (`loop_items`), `bundle.model` of a project class that stores it (`stored_fields`), and a
    graph (its mode was fixed by the capture that made it, judged where that is prepared).
    Left quiet: a model made by code the analysis does not read (`_UNREAD`: the result of a
    call it cannot resolve, a `self.<attr>` set outside the class, a value the walk has none
    for, a loop item of such values). Every such caller measured passes an eval-mode model
    or one with nothing mode-dependent (MediaTek's `load_weights()` ends in `self.eval()`,
    IPEX's trainers hold `from_pretrained` models): reporting them gave 9 false alarms and no
    finding on the labelled corpus (11 before the constructs above were classified), and 2
    more on the installed ExecuTorch wheel, whose namespace directories leave the callers'
    classes unresolved."""
    origin = fact.origin
    if fact.state == "unset" and origin is not None and origin.kind in GRAPH_KINDS:
        return False
    mode = mode_call(fact.node) if fact.state == "unknown" else None
    if mode is not None and mode[1] is None:
        return True
    if fact.state == "unknown" and origin is None:
        return False  # an argument the walk has no value for (`bundle.model`, a global)
    return origin is None or origin.kind not in _UNREAD


_UNREAD = frozenset({CALL, UNKNOWN, ATTRIBUTE, REGISTRY_RESULT, BUILT_PART})


def _join(rows: list[int]) -> str:
    return ", ".join(map(str, rows[:-1])) + f" and {rows[-1]}"


def listed(reasons: list[Reason], limit: int = 3) -> str:
    """The first few reasons for a message; the rest are in the related information."""
    texts = [r.text for r in reasons[:limit]]
    if len(reasons) > limit:
        texts.append(f"{len(reasons) - limit} more")
    return "; ".join(texts)


def _describe(ctx: FileContext, fact: ModeFact) -> Reason | None:
    reason = _described(ctx, fact)
    fixture = fixture_of(fact.node)
    if reason is None or fixture is None or fact.state not in ("train", "eval"):
        return reason
    # Set in a conftest's fixture: named by the fixture, at the parameter it fills here.
    name, path = fixture
    where = os.path.relpath(path, os.path.dirname(os.path.abspath(ctx.path)))
    text = f"returned by fixture `{name}` of {where} for the parameter at line {reason.row}"
    if reason.kind == "constructed":
        text += ", and modules start in train mode"
    return replace(reason, text=text)


def _described(ctx: FileContext, fact: ModeFact) -> Reason | None:
    origin, node = fact.origin, fact.node
    row = getattr(node, "lineno", 0)
    constructed = origin is not None and origin.kind == CONSTRUCTED
    if fact.state == "train" and (constructed or fact.parts) and gives_part(node):
        # `model.bn = nn.BatchNorm1d(4)`, `model.add_module("bn", ...)` (`model_builds.Builds.given_part`)
        text = f"given a part built in train mode at line {row} (`{given_target(node, ctx.source_of)}`)"
        return Reason("constructed", node, text, row)
    part = described(fact, ctx.source_of)  # `m.encoder.train()` after `m.eval()` (`part_modes`)
    if part is not None:
        return Reason(fact.state, node, part, row)
    if fact.state == "train":
        if origin is not None and origin.kind == CONSTRUCTED and not _switch(node):
            # `make_transform(kind)(model)`: named by the factory whose callable built it there.
            by = f" by the closure `{origin.made_at}` returns" if isinstance(origin.made_at, str) else ""
            return Reason("constructed", node, f"built at line {row}{by}, and modules start in train mode", row)
        # A switch (also one of a part a wrapper holds, `held_parts`: the origin is the wrapper's).
        return Reason("train", node, f"after `{ctx.source_of(node)}` at line {row}", row)
    if fact.state == "eval":
        if origin is not None and origin.kind == PRETRAINED:
            return Reason("pretrained", node, f"from `from_pretrained` at line {row}, which returns eval mode", row)
        if origin is not None and origin.kind == CONSTRUCTED and node is origin.node:
            return Reason("eval", node, f"built at line {row} by a class whose `__init__` calls `eval()`", row)
        return Reason("eval", node, f"after `{ctx.source_of(node)}` at line {row}", row)
    if fact.state == "unset" and origin is not None and origin.kind == PARAM:
        return Reason("parameter", None, f"as parameter `{origin.name}`, in whatever mode the caller left it")
    if fact.state == "unset" and origin is not None and origin.kind == STORED:
        where = f"stored from parameter `{origin.name}` of `__init__` at line {row}"
        return Reason("parameter", None, f"as `{ctx.source_of(node)}`, {where}, in whatever mode the caller left it")
    if fact.state == "unset" and origin is not None and origin.kind == PARAM_PART:
        text = f"as `{ctx.source_of(node)}` from parameter `{origin.name}`, in whatever mode the caller left it"
        if isinstance(node, (ast.For, ast.AsyncFor)):
            text = f"as a loop item of parameter `{origin.name}`, in whatever mode the caller left it"
        return Reason("parameter", None, text)
    return None


def _switch(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "train"


def qat_only_train(cap: Capture) -> ModeFact | None:
    """A `.train()` that runs only on the QAT path (`if is_qat: model.train()`): on a path to
    a QAT prepare, not on one to a PTQ prepare (a `.train()` on no path to either, as in a
    branch on `training` that the capture's branch rules out, is none)."""
    on_ptq, on_qat = cap.modes_for("ptq"), cap.modes_for("qat")
    return next(
        (f for f in sorted(cap.modes, key=_row) if f.state == "train" and f not in on_ptq and f in on_qat), None
    )


def _row(fact: ModeFact) -> int:
    return getattr(fact.node, "lineno", 0)


def grad_mode_note(cap: Capture) -> str:
    contexts = [c for c in cap.contexts if c in _NO_MODE_CHANGE]
    if not contexts:
        return ""
    return f"`{contexts[0].rpartition('.')[2]}()` only turns off autograd, it does not switch to eval mode. "


def related(ctx: FileContext, cap: Capture, flow: str, why: list[Reason]) -> tuple[RelatedInfo, ...]:
    out = []
    if cap.inner is not None:
        path, node, note = cap.inner
        out.append(RelatedInfo(path, _range(ctx, node, path), note))
    for sink in cap.flows(flow):
        what = "prepared for PTQ" if flow == "ptq" else "prepared for QAT"
        if not (isinstance(sink.node, ast.Call) and last_name(sink.node.func).endswith("_pt2e")):
            what = "quantized with this recipe by ExecuTorch's QuantizeStage"
        out.append(RelatedInfo(sink.path, _range(ctx, sink.node, sink.path), f"the captured graph is {what}"))
    for reason in why:
        if reason.node is not None:
            out.append(RelatedInfo(ctx.path, ctx.range_of(reason.node), reason.text))
    return tuple(out)


def _range(ctx: FileContext, node: ast.AST, path: str) -> Range:
    if path == ctx.path:
        return ctx.range_of(node)
    # Another file: `ast` columns count bytes there, close enough for a pointer.
    return Range.of(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def evidence(ctx: FileContext, cap: Capture, flow: str, why: list[Reason]) -> CaptureEvidence:
    """What the runtime checker needs: the capture, the model as written, the flow and why."""
    return CaptureEvidence(
        flow=flow,
        api=cap.api,
        model=model_text(ctx, cap) if cap.model is not None else None,
        capture=SourcePoint(cap.call.lineno, ctx.range_of(cap.call).start.col),
        reasons=tuple(sorted({r.kind for r in why})),
        sinks=tuple(SinkPoint(s.path, s.node.lineno) for s in cap.flows(flow)),
    )


def insert_mode_call(ctx: FileContext, cap: Capture, mode: str) -> Fix | None:
    """`<model>.eval()` (or `.train()`) on its own line before the capture statement.

    Safe for a plain name. `self.model` could be a property that builds a new object each
    time, so there the fix is unsafe; a call (`export(Net(), ...)`) builds a new model, so
    there `.eval()` goes on the argument itself, also unsafe. An inline `model.train()` in
    the capture becomes `model.eval()` (and the reverse for QAT). No fix when the same
    capture feeds both PTQ and QAT: one mode cannot be right for both.
    """
    model = cap.model
    if model is None or not cap.fixable or (cap.flows("ptq") and cap.flows("qat")):
        return None
    if isinstance(model, (ast.Starred, ast.NamedExpr, ast.Lambda)):
        return None
    inline = mode_call(model)
    receiver = inline[0] if inline else model
    src = ctx.source_of(receiver)
    plain = isinstance(receiver, ast.Name)
    applicability = Applicability.SAFE if plain else Applicability.UNSAFE
    message = f"Call `{src}.{mode}()` before the capture"
    if inline:
        start = ctx.range_of(receiver).end
        edit = Edit(Range(start, ctx.range_of(model).end), f".{mode}()")
        return Fix(applicability, f"Use `{src}.{mode}()` in the capture", (edit,))
    if plain or (isinstance(model, ast.Attribute) and _is_dotted(model)):
        edit = line_insertion(ctx, cap.stmt, f"{src}.{mode}()")
        if edit is not None:
            return Fix(applicability, message, (edit,))
    where = ctx.range_of(model)
    if isinstance(model, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        edits = (Edit(Range(where.end, where.end), f".{mode}()"),)
    else:
        edits = (Edit(Range(where.start, where.start), "("), Edit(Range(where.end, where.end), f").{mode}()"))
    return Fix(applicability, f"Use `{src}.{mode}()` in the capture", edits)


def _is_dotted(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def line_insertion(ctx: FileContext, stmt: ast.stmt, code: str) -> Edit | None:
    row = stmt.lineno
    col = ctx.lines.char_col(row, stmt.col_offset)
    line = ctx.lines.line(row)
    prefix = line[:col]
    if line[col:].startswith("elif"):
        return None  # a capture in an `elif` test has no statement of its own to precede
    if not prefix.strip():
        return Edit(Range.of(row, 0, row, 0), f"{prefix}{code}{line_ending(ctx.text)}")
    # `if ready: ep = export(model, x)` or `a = 1; ep = export(...)`: stay on that line.
    return Edit(Range.of(row, col, row, col), f"{code}; ")

"""QL202 through callers: a helper that captures its parameter for QAT, handed an eval-mode model.

The helper does not switch the mode: it captures what it is given. QL201 judges such a helper
from its callers (one that hands it a train-mode model is a finding); this is the mirror. A
call (in the helper's module or another of the project, or up through callers that hand on
their own parameter) that passes a model in eval mode, with arguments that take the branch of
`prepare_qat_pt2e`, runs QAT on an eval-mode graph. A caller the analysis cannot read adds
nothing and hides nothing (issue 14, item 7): the calls it can read decide. A model handed over
in eval mode whose classes all resolve and hold nothing mode-dependent is harmless, as it is
for the captures judged in place (`capture_content`).
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.flow.call_paths import handed_on_some_path
from qlint.analysis.flow.call_sites import Site, checked_home
from qlint.analysis.flow.model_apis import mode_call
from qlint.analysis.flow.model_flow import (
    PARAM,
    PRETRAINED,
    STORED,
    Capture,
    FunctionFlow,
    ModeFact,
    capture_holder,
    compatible,
)
from qlint.analysis.flow.part_modes import described
from qlint.rules.base import FileContext
from qlint.rules.capture_common import Reason
from qlint.rules.capture_content import builds_note, built_key, changed_after_build


def eval_mode_callers(
    ctx: FileContext, cap: Capture, flows: list[FunctionFlow]
) -> tuple[list[Reason], list[object]] | None:
    """(why, the constructions handed over) when every QAT path to the capture is in eval mode
    here or runs through the helper's parameter, and some call hands that parameter an
    eval-mode model whose mode matters; None otherwise."""
    facts = cap.modes_for("qat")
    sinks = cap.flows("qat")
    holder = capture_holder(flows, cap)
    if holder is None or not sinks:
        return None
    paths = []
    stored = []
    for fact in facts:
        origin = fact.origin
        if fact.state == "eval":
            continue
        if fact.state == "unset" and origin is not None and origin.kind == STORED and origin.index is not None:
            stored.append(origin)
            continue
        if fact.state != "unset" or origin is None or origin.kind != PARAM or origin.node is not holder.node:
            return None  # trained here, a mode set from data, a model from elsewhere
        paths.append((fact, [s.guard for s in sinks if compatible(fact.guard, s.guard)]))
    if not paths and not stored:
        return None
    builds: list[object] = []

    def hits(fact: ModeFact, site: Site, index: int) -> bool:
        if fact.state != "eval":
            return False
        found = _risky(fact, site, index)
        if found is None:
            return False
        builds.extend(found)
        return True

    home = checked_home(ctx)
    handed = handed_on_some_path(ctx, home, holder, paths, hits) if paths else []
    for origin in dict.fromkeys(stored):
        # `self.model = model` in `__init__`: the instantiations of the class in this module
        # (`Builder(net.eval())`) pass it.
        for flow in flows:
            for call in flow.calls:
                if call.callee is origin.node:
                    site = Site(call, flow, home)
                    passed = call.args.get(origin.index, ())
                    handed.extend((site, f, origin.index, None) for f in passed if hits(f, site, origin.index))
    if not handed:
        return None
    why = {}
    for site, fact, _, above in handed:
        reason = _reason(ctx, site, fact, above)
        why.setdefault((reason.text, reason.row), reason)
    return sorted(why.values(), key=lambda r: (r.via, r.row, r.text)), builds


def _risky(fact: ModeFact, site: Site, index: int) -> list[object] | None:
    """The constructions an eval-mode model handed over comes from (empty: not all known),
    or None when each is known in full and holds nothing mode-dependent."""
    origins = (site.site.origins or {}).get(index)
    if fact.origin is not None and fact.origin.kind == PRETRAINED:
        return []
    if not origins:
        return []
    inline = mode_call(fact.node) if fact.node is not None else None
    if inline is not None and isinstance(inline[0], ast.Call):
        # `Net().eval()`: the one construction switched, not the others the value may hold
        # (`for m in [Lin().eval(), Net()]`).
        origins = [o for o in origins if o.node is inline[0]] or origins
    built = [o.built for o in origins]
    if any(b is None for b in built):
        return [b for b in built if b is not None]
    for b in built:
        content = b.content()
        if content.dependent or not content.complete:
            return built
    if changed_after_build(site.home.flows(), built, frozenset({id(site.site.call)}), site.holder):
        return built
    return None


def _reason(ctx: FileContext, site: Site, fact: ModeFact, above: Site | None = None) -> Reason:
    call = site.site.call
    other = site.home.ctx
    node = fact.node
    # The flag the call hands on is decided by a call above it (`f(Net(), is_qat=True)`).
    flag = f"; the call at {_where(ctx, above)} takes the QAT branch" if above is not None else ""
    if other is ctx:
        where = f"the call at line {call.lineno}"
        switch = f"`{ctx.source_of(node)}` at line {node.lineno}" if node is not None else "eval mode"
        if fact.origin is not None and fact.origin.kind == PRETRAINED:
            switch = f"`from_pretrained` at line {node.lineno}, which returns eval mode"
        part = described(fact, ctx.source_of)  # `m.encoder.eval()` after `m.train()` (`part_modes`)
        text = f"{where} passes it {part}{flag}" if part is not None else f"{where} passes it after {switch}{flag}"
        return Reason("eval", node, text, getattr(node, "lineno", 0), call.lineno)
    switch = f"`{other.source_of(node)}`" if isinstance(node, ast.AST) else "eval mode"
    if fact.origin is not None and fact.origin.kind == PRETRAINED:
        switch = "`from_pretrained`, which returns eval mode"
    # A node of another file cannot be pointed at in this one: no related location.
    return Reason("eval", None, f"the call at {_where(ctx, site)} passes it after {switch}{flag}", 0, call.lineno)


def _where(ctx: FileContext, site: Site) -> str:
    """`line 12` in the checked file, `../pkg/run.py:12` in another."""
    row = site.site.call.lineno
    other = site.home.ctx
    if other is ctx:
        return f"line {row}"
    rel = os.path.relpath(other.path, os.path.dirname(ctx.path)) if other.path else "another module"
    return f"{rel}:{row}"


def handed_note(builds: list[object]) -> str:
    """`; in `Net`, the mode changes BatchNorm2d` for the constructions handed over."""
    ordered = sorted({built_key(b): b for b in builds}.values(), key=lambda b: (b.call.lineno, b.call.col_offset))
    return builds_note(ordered)


__all__ = ["eval_mode_callers", "handed_note"]

"""Whether the callers of a helper rule out the branches its capture reaches a prepare call
in: a helper that prepares for QAT or PTQ under a flag it is given (`if is_qat:`) is right
when every call path into it passes the flag that keeps the wrong mode's prepare from
running, or a harmless model (`harmless_models`) where it does not (`call_paths`).
"""

from __future__ import annotations

from qlint.analysis.flow.call_paths import on_params, vouched_on_every_path
from qlint.analysis.flow.call_sites import Site, checked_home
from qlint.analysis.flow.function_flows import Capture, FunctionFlow
from qlint.analysis.flow.model_flow import capture_holder
from qlint.analysis.flow.model_values import ModeFact, compatible
from qlint.rules.base import FileContext
from qlint.rules.harmless_models import harmless_model


def branch_ruled_out(ctx: FileContext, cap: Capture, flow: str, flows: list[FunctionFlow]) -> bool:
    """The prepare calls the capture reaches lie in branches on the helper's parameters, and
    every call path into the helper either rules them out by its arguments or passes a
    harmless model (`call_paths`).

    For QL201 (`flow` "ptq") the modes at stake are those that are not eval, and a model in
    eval mode (or one with nothing mode-dependent) is harmless. For QL202 ("qat") the
    mirror: the eval-mode facts are at stake, and only a model whose mode cannot change the
    graph is harmless; the helper set eval itself, so in practice only the callers' flags
    (`is_qat=False`) can rule its QAT branch out."""
    sinks = cap.flows(flow)
    at_stake = (lambda f: f.state != "eval") if flow == "ptq" else (lambda f: f.state == "eval")
    facts = [f for f in cap.modes_for(flow) if at_stake(f)]
    # The branch may be the prepare call's or the mode's own (`if calibrate: model.eval()`,
    # called with `calibrate=True`, never captures the model as it came).
    if not any(s.guard for s in sinks) and not any(f.guard for f in facts):
        return False
    holder = capture_holder(flows, cap)
    paths = [(fact, [s.guard for s in sinks if compatible(fact.guard, s.guard)]) for fact in facts]
    if holder is None or not any(on_params(holder, fact.guard | g) for fact, guards in paths for g in guards):
        return False  # nothing a caller's argument could decide: the verdict above stands

    def harmless(fact: ModeFact, site: Site) -> bool:
        if flow != "ptq" and fact.state == "eval":
            return False
        return harmless_model(fact, site.home.flows(), site.site.call, site.holder)

    return vouched_on_every_path(ctx, checked_home(ctx), holder, paths, harmless, flow)

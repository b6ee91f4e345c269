"""QL201 ptq-capture-without-eval: a model captured for PTQ while it may be in train mode.

PT2E bakes the model's mode into the captured graph. Captured in train mode, batch norm
keeps updating its running statistics and dropout keeps dropping during calibration after
`prepare_pt2e`, so the converted model differs from the one calibrated. The measured
errors are on the rule's page (rules/QL201.md), the one place that states them.
"""

from __future__ import annotations

from collections.abc import Iterator

from qlint.diagnostic import Diagnostic
from qlint.evidence.capture import CaptureEvidence
from qlint.rules.base import FileContext, FixAvailability, Rule
from qlint.rules.capture_common import (
    Reason,
    captures,
    evidence,
    grad_mode_note,
    listed,
    model_text,
    qat_only_train,
    reasons,
    related,
)

_BAD = ("train", "constructed", "parameter")


class PtqCaptureWithoutEval(Rule):
    code = "QL201"
    name = "ptq-capture-without-eval"
    summary = "Model captured for `prepare_pt2e` without `eval()`"
    runtime_check = "qlint.runtime.checks.capture"
    evidence_type = CaptureEvidence
    runtime_models = True
    triggers = ("prepare_pt2e", "QuantizationRecipe")
    fix_availability = FixAvailability.SOMETIMES

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for cap, flows in captures(ctx, "ptq"):
            why = reasons(ctx, cap, "ptq", flows)
            bad = [r for r in why if r.kind in _BAD]
            qat_train = qat_only_train(cap)
            on_ptq = cap.modes_for("ptq")
            if qat_train is not None and on_ptq and any(f.state != "eval" for f in on_ptq):
                src = ctx.source_of(qat_train.node)
                row = qat_train.node.lineno
                bad.append(Reason("qat-only", qat_train.node, f"`{src}` at line {row} runs for QAT only", row))
            if not bad:
                continue  # eval on every PTQ path
            # Imported for a capture some path reaches outside eval mode: the verdicts on its
            # callers and content pull ~20 modules that a check of evaluated captures never runs.
            from qlint.rules.caller_verdicts import vouched_by_callers
            from qlint.rules.capture_content import content_note, mode_free
            from qlint.rules.evaled_prepared import evaled_before_calibration
            from qlint.rules.ptq_eval_fix import HELPER, eval_fix, is_graph
            from qlint.rules.ruled_out_branches import branch_ruled_out

            if (
                mode_free(cap, "ptq", flows, ctx)
                or vouched_by_callers(ctx, cap, "ptq", flows)
                or branch_ruled_out(ctx, cap, "ptq", flows)
                or evaled_before_calibration(ctx, cap, flows)
            ):
                # A model whose mode this function cannot know, one whose mode cannot change the
                # graph (nothing in it depends on `self.training`), callers across the project
                # that all pass such models, or that pass them wherever their arguments let the
                # PTQ branch run; or a prepared graph moved to eval before anything runs it.
                continue
            model = model_text(ctx, cap)
            head = "in train mode" if any(r.kind in ("train", "constructed") for r in bad) else "without `eval()`"
            partial = [
                Reason("partial", r.node, f"`{ctx.source_of(r.node)}` at line {r.row} runs on some paths only", r.row)
                for r in why
                if r.kind == "eval" and r.node is not None and not r.via
            ]
            detail = listed(bad + partial)
            # `.eval()` raises on an exported GraphModule (torch 2.13): torchao's helper is the way.
            remedy = f"`{HELPER}({model})`" if is_graph(cap) else f"`{model}.eval()`"
            message = f"`{model}` is captured for PTQ {head} ({detail}){content_note(cap, 'ptq', flows)}"
            help_ = (
                f"{grad_mode_note(cap)}Batch norm and dropout keep their training behaviour in the graph, so"
                " calibration after `prepare_pt2e` updates running statistics and drops activations; call"
                f" {remedy} before capturing"
            )
            why = sorted({*why, *bad}, key=lambda r: (r.row, r.kind, r.text))
            yield ctx.diagnostic(
                self,
                cap.call,
                message,
                eval_fix(ctx, cap, flows),
                evidence=evidence(ctx, cap, "ptq", why),
                related=related(ctx, cap, "ptq", why),
                help=help_,
            )

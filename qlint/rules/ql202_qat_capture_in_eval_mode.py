"""QL202 qat-capture-in-eval-mode: a model captured for QAT while it is in eval mode.

The mirror of QL201. `prepare_qat_pt2e` expects a graph captured in train mode: captured
in eval mode, dropout is disabled and batch norm that is not folded into a conv uses (and
never updates) its running statistics during QAT training (what was measured is on
rules/QL202.md). `move_exported_model_to_train` on the prepared graph flips both back,
so that flow stays quiet.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint.diagnostic import Diagnostic
from qlint.evidence.capture import CaptureEvidence
from qlint.rules.base import FileContext, FixAvailability, Rule
from qlint.rules.capture_common import captures, evidence, listed, model_text, reasons, related
from qlint.rules.capture_content import content_note, mode_free
from qlint.rules.moved_graphs import handed_move, late_move
from qlint.rules.qat_callers import eval_mode_callers, handed_note
from qlint.rules.returned_qat_graphs import returned_and_moved
from qlint.rules.ruled_out_branches import branch_ruled_out
from qlint.rules.stored_graph_moves import stored_verdict


class QatCaptureInEvalMode(Rule):
    code = "QL202"
    name = "qat-capture-in-eval-mode"
    summary = "Model captured for `prepare_qat_pt2e` in eval mode"
    runtime_check = "qlint.runtime.checks.capture"
    evidence_type = CaptureEvidence
    runtime_models = True
    triggers = ("prepare_qat_pt2e",)
    fix_availability = FixAvailability.SOMETIMES

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for cap, flows in captures(ctx, "qat"):
            facts = cap.modes_for("qat")
            if not facts:
                continue
            late = late_move(ctx, cap, flows) if cap.retrained else None
            if cap.retrained and late is None:
                # `move_exported_model_to_train` on the prepared graph repairs dropout and batch
                # norm, when it comes before anything could train the graph; held on `self`,
                # before any method could (`fit` may run where the storing method did not move it)
                late = stored_verdict(ctx, cap, flows)
                if not isinstance(late, ast.expr):
                    continue
            if not cap.retrained and handed_move(ctx, cap, flows):
                continue  # handed first to a function that moves it (`def train_mode(gm): ...`)
            if not cap.retrained and stored_verdict(ctx, cap, flows) is True:
                continue  # held on `self`, and every method of the class moves it before training it
            if all(sink.node in cap.rebuilt for sink in cap.flows("qat")):
                continue  # QAT rebuilt only to convert (no training): eval mode is right there
            handed = None
            if any(f.state != "eval" for f in facts):
                # Eval mode must dominate: every QAT path reaches the capture in eval mode, here or
                # in a model its callers hand over in eval mode (`qat_callers`).
                handed = eval_mode_callers(ctx, cap, flows)
                if handed is None:
                    continue
            if handed is None and mode_free(cap, "qat", flows, ctx):
                continue  # no dropout, batch norm or `self.training`: the same graph in either mode
            if handed is None and branch_ruled_out(ctx, cap, "qat", flows):
                continue  # `if is_qat:` in a helper whose every caller passes `is_qat=False`
            if returned_and_moved(ctx, cap, flows):
                continue  # the helper returns the graph, and every caller moves it (or converts) first
            if handed is None:
                why, note = reasons(ctx, cap, "qat", flows), content_note(cap, "qat", flows)
            else:
                here = [r for r in reasons(ctx, cap, "qat", flows) if r.kind in ("eval", "pretrained") and not r.via]
                why, note = here + handed[0], handed_note(handed[1])
            model = model_text(ctx, cap)
            message = f"`{model}` is captured for QAT in eval mode ({listed(why)}){note}{_late_note(cap, late)}"
            help_ = (
                "The graph gets disabled dropout and eval-mode batch norm (except where `prepare_qat_pt2e`"
                " folds it into a conv), so QAT training neither regularises nor updates those statistics;"
                f" call `{model}.train()` before capturing"
            )
            from qlint.rules.qat_train_fix import train_fix

            yield ctx.diagnostic(
                self,
                cap.call,
                message,
                train_fix(ctx, cap, flows),
                evidence=evidence(ctx, cap, "qat", why),
                related=related(ctx, cap, "qat", why),
                help=help_,
            )


def _late_note(cap, late) -> str:
    """A use of the graph some path reaches before its move to train mode: it runs in the capture's mode."""
    if late is None:
        return ""
    move = min(cap.retrained, key=lambda m: (m.lineno, m.col_offset))
    return (
        f"; `{ast.unparse(late)}` is used at line {late.lineno} on a path that has not moved it to train mode yet"
        f" (the move is at line {move.lineno})"
    )

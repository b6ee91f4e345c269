"""QL204 convert-without-calibration: `convert_pt2e` on a PTQ-prepared model that never ran.

`prepare_pt2e` inserts observers that learn value ranges only while the prepared model runs.
Converted without a single forward pass, every observer still holds min=+inf/max=-inf and
`convert_pt2e` quantizes with scale 1.0 and zero point 0 after a "must run observer before
calling calculate_qparams" warning (torchao 0.18, XNNPACK quantizer, Conv→Linear: max error
1.76 against 0.019 calibrated). Dynamic and weight-only configurations are no exception:
their weight observers also fill only during a forward pass.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator

from qlint.analysis.calibration import QAT, Calibration, Summary, Uncalibrated, file_summaries
from qlint.analysis.calibration_carry import run_carry
from qlint.analysis.calibration_walk import Walker
from qlint.analysis.flow.callgraph import node_range
from qlint.analysis.guarded_calibration import guarded_converts
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import function_assigns
from qlint.diagnostic import Applicability, Diagnostic, Fix, RelatedInfo
from qlint.evidence.calibration import CalibrationEvidence
from qlint.rules.base import FileContext, Rule

_PREPARE = {False: "prepare_pt2e", True: "prepare_qat_pt2e"}
_REMEDY = {
    False: "run the prepared model on representative inputs",
    True: "train the prepared model (or load the state dict of a trained one)",
}


class ConvertWithoutCalibration(Rule):
    code = "QL204"
    name = "convert-without-calibration"
    runtime_check = "qlint.runtime.checks.calibration"
    evidence_type = CalibrationEvidence
    summary = "`convert_pt2e` on a PTQ-prepared model that never ran on data"
    triggers = ("convert_pt2e",)
    fix_availability = "none"  # a display-only hint: there is no data to invent
    options = {"structural-tests": True}

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        previous = getattr(ctx.project, "previous_trees", None)
        carry = previous.carry(os.path.abspath(ctx.path), ctx.tree) if previous is not None else None
        if carry is None:
            carry = run_carry(ctx.project, ctx.path)  # a command-line run: other checks' summaries
        analysis = Calibration(ctx.project, ctx.optable, Walker, carry)
        for summary in file_summaries(ctx.tree, ctx.scope, ctx.text, analysis, ctx.lines.starts):
            for finding in summary.findings:
                if self.opts["structural-tests"] and summary.test and not _converted_model_runs(summary, finding):
                    continue  # a test that only inspects the converted graph's structure
                if _never_read(ctx, summary, finding):
                    continue  # a smoke script: nothing reads what it converts
                if finding.prepared.kind == QAT and not _converted_model_used(summary, finding):
                    continue  # only the converted QAT graph's text is looked at
                yield self._diagnostic(ctx, finding)
        yield from _guarded_diagnostics(self, ctx)

    def _diagnostic(self, ctx: FileContext, f: Uncalibrated) -> Diagnostic:
        site, prepared = f.site, f.prepared
        model = _model_text(ctx, f)
        where = (
            f"line {prepared.node.lineno}" if prepared.path == ctx.path else f"{prepared.path}:{prepared.node.lineno}"
        )
        by = f" in `{prepared.helper}`" if prepared.helper else ""
        head = f"`{model}` is converted" if not f.helper else f"`{ctx.source_of(site.func)}` converts `{model}`"
        qat = prepared.kind == QAT
        message = f"{head} without {'training' if qat else 'calibration'} after `{_PREPARE[qat]}`{by} ({where})"
        help_ = (
            f"No path {'trains or runs' if qat else 'runs'} the prepared model on data, so its observers hold"
            " no statistics (min=+inf, max=-inf) and `convert_pt2e` quantizes with scale 1.0 and zero point 0;"
            f" {_REMEDY[qat]} before converting"
        )
        related = [RelatedInfo(prepared.path, _range(ctx, prepared.node, prepared.path), "prepared here")]
        if f.helper:
            related.append(RelatedInfo(f.convert_path, _range(ctx, f.convert, f.convert_path), "converted here"))
        fix = Fix(
            Applicability.DISPLAY_ONLY,
            f"Calibrate before converting: `for batch in calibration_data: {model}(*batch)`",
        )
        evidence = {
            "prepare": {"path": prepared.path, "row": prepared.node.lineno},
            "convert": {"path": f.convert_path, "row": f.convert.lineno},
            "helper": f.helper or None,
        }
        return ctx.diagnostic(self, site, message, fix, evidence=evidence, related=tuple(related), help=help_)


def _converted_model_runs(summary: Summary, f: Uncalibrated) -> bool:
    """The test runs (or hands back) the converted model, so its numbers matter."""
    return f.run_inside or any(r in summary.executed or r in summary.returns for r in f.results)


def _converted_model_used(summary: Summary, f: Uncalibrated) -> bool:
    """Some path runs the converted model, returns it, stores it or hands it to a call that
    is not a mere look (`print`, `str(m.graph)`, `m.code`): its numbers may matter."""
    return _converted_model_runs(summary, f) or any(r in summary.used for r in f.results)


def _never_read(ctx: FileContext, summary: Summary, f: Uncalibrated) -> bool:
    """A `convert_pt2e` statement of this function, of a graph captured and prepared here,
    after which no local is read (`unread_conversions`)."""
    prepared = f.prepared
    if f.helper or f.site is not f.convert or prepared.helper or prepared.path != ctx.path:
        return False
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable, function_assigns(summary.node))
    from qlint.analysis.unread_conversions import unread_after

    return unread_after(summary.node, f.convert, prepared.node, resolver.qualname)


def _model_text(ctx: FileContext, f: Uncalibrated) -> str:
    site = f.site
    if not f.helper:
        arg = site.args[0] if site.args else next((k.value for k in site.keywords if k.arg == "model"), None)
    else:
        arg = next((a for a in site.args if not isinstance(a, ast.Starred)), None)
    return ctx.source_of(arg) if arg is not None else "the prepared model"


def _range(ctx: FileContext, node: ast.AST, path: str):
    return ctx.range_of(node) if path == ctx.path else node_range(node, path, ctx.project)


def _guarded_diagnostics(rule: Rule, ctx: FileContext) -> Iterator[Diagnostic]:
    """Helpers that calibrate only when a caller of their module hands them the data, and
    a caller that does not (`guarded_calibration`)."""

    def qualnames(func: ast.AST):
        return Resolver(ctx.scope, ctx.project, ctx.optable, function_assigns(func)).qualname

    for g in guarded_converts(ctx.tree, qualnames, ctx.text, ctx.lines.starts):
        message = (
            f"`{g.model}` is converted without calibration after `prepare_pt2e` (line {g.prepare.lineno}):"
            f" it runs only when `{g.param}` is given, and the call at line {g.caller.lineno} leaves it empty"
        )
        help_ = (
            f"The calibration loop is guarded by `{g.param}`, whose default is empty; on that call no path"
            " runs the prepared model, so its observers hold no statistics and `convert_pt2e` quantizes with"
            f" scale 1.0 and zero point 0; pass calibration data at line {g.caller.lineno}, or refuse to"
            " convert without it"
        )
        related = (
            RelatedInfo(ctx.path, ctx.range_of(g.prepare), "prepared here"),
            RelatedInfo(ctx.path, ctx.range_of(g.caller), "called without calibration data here"),
        )
        fix = Fix(Applicability.DISPLAY_ONLY, f"Pass `{g.param}` at line {g.caller.lineno}")
        evidence = {
            "prepare": {"path": ctx.path, "row": g.prepare.lineno},
            "convert": {"path": ctx.path, "row": g.convert.lineno},
            "helper": None,
        }
        yield ctx.diagnostic(rule, g.convert, message, fix, evidence=evidence, related=related, help=help_)

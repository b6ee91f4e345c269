"""qlint's own rules: one module per rule, registered here in code order, one line each.

Nothing else imports the rule modules: settings, config, the CLI, the reporters, the
language server and the runtime client ask `qlint.registry`, which loads these and the
rules of installed plugins (the `qlint.rules` entry-point group) once.
"""

from __future__ import annotations

from typing import Any

from qlint.rules.base import FileContext, Rule

BUILTIN: tuple[str, ...] = (
    "qlint.rules.ql001_syntax_error:SyntaxErrorRule",
    "qlint.rules.ql002_unused_noqa:UnusedNoqa",
    "qlint.rules.ql101_packet_matcher:PacketMatcher",
    "qlint.rules.ql102_packet_insertion:PacketInsertion",
    "qlint.rules.ql103_weight_quantize_matcher_after_fold:WeightQuantizeMatcherAfterFold",
    "qlint.rules.ql201_ptq_capture_without_eval:PtqCaptureWithoutEval",
    "qlint.rules.ql202_qat_capture_in_eval_mode:QatCaptureInEvalMode",
    "qlint.rules.ql203_mode_switch_on_exported_graph:ModeSwitchOnExportedGraph",
    "qlint.rules.ql204_convert_without_calibration:ConvertWithoutCalibration",
    "qlint.rules.ql301_decomposition_in_pre_prepare_pass:DecompositionInPrePreparePass",
    "qlint.rules.ql401_torch_ao_pt2e_import:TorchAoPt2eImport",
    "qlint.rules.ql402_removed_capture_api:RemovedCaptureApi",
)


def __getattr__(name: str) -> Any:
    # `qlint.rules.RULES`: the registry's code -> class table (plugins included), for callers
    # written before the registry existed.
    if name == "RULES":
        from qlint.registry import rules

        return rules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BUILTIN", "FileContext", "Rule"]

"""The built-in rules, one `module:Class` line each, in code order (the registry loads them)."""

from __future__ import annotations

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

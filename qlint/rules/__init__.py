"""The rule registry: one module per rule, listed here in code order."""

from __future__ import annotations

from qlint.rules.base import FileContext, Rule
from qlint.rules.ql001_syntax_error import SyntaxErrorRule
from qlint.rules.ql002_unused_noqa import UnusedNoqa
from qlint.rules.ql101_packet_matcher import PacketMatcher
from qlint.rules.ql102_packet_insertion import PacketInsertion
from qlint.rules.ql103_weight_quantize_matcher_after_fold import WeightQuantizeMatcherAfterFold
from qlint.rules.ql201_ptq_capture_without_eval import PtqCaptureWithoutEval
from qlint.rules.ql202_qat_capture_in_eval_mode import QatCaptureInEvalMode
from qlint.rules.ql203_mode_switch_on_exported_graph import ModeSwitchOnExportedGraph
from qlint.rules.ql204_convert_without_calibration import ConvertWithoutCalibration
from qlint.rules.ql301_decomposition_in_pre_prepare_pass import DecompositionInPrePreparePass
from qlint.rules.ql401_torch_ao_pt2e_import import TorchAoPt2eImport
from qlint.rules.ql402_removed_capture_api import RemovedCaptureApi

RULES: dict[str, type[Rule]] = {
    cls.code: cls
    for cls in (
        SyntaxErrorRule,
        UnusedNoqa,
        PacketMatcher,
        PacketInsertion,
        WeightQuantizeMatcherAfterFold,
        PtqCaptureWithoutEval,
        QatCaptureInEvalMode,
        ModeSwitchOnExportedGraph,
        ConvertWithoutCalibration,
        DecompositionInPrePreparePass,
        TorchAoPt2eImport,
        RemovedCaptureApi,
    )
}

__all__ = ["RULES", "FileContext", "Rule"]

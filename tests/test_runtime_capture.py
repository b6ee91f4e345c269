"""QL201/QL202/QL203 runtime checks on findings the real rules produce.

Each snippet is linted by the rule, and its finding (evidence and fix edits as the rule
wrote them) goes to the session's shared worker, which runs the real PT2E pipeline.
"""

from __future__ import annotations

import re
import textwrap

import pytest

from tests.conftest import lint, write_package
from tests.runtime_support import shared_checker

pytest.importorskip("torchao")

PTQ = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def quantize(model, example_inputs, quantizer):
    captured = torch.export.export(model, example_inputs).module()
    return prepare_pt2e(captured, quantizer)
"""

QAT = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e


def quantize(model, example_inputs, quantizer):
    model.eval()
    captured = torch.export.export(model, example_inputs).module()
    return prepare_qat_pt2e(captured, quantizer)
"""

SWITCH = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e


def finish(prepared):
    converted = convert_pt2e(prepared)
    converted.eval()
    return converted
"""

HANDED = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def calibrate(model, samples):
    model.eval()
    for sample in samples:
        model(sample)


def quantize(model, sample, quantizer):
    model.eval()
    prepared = prepare_pt2e(torch.export.export(model, (sample,)).module(), quantizer)
    calibrate(prepared, [sample])
    return prepared
"""


@pytest.fixture(scope="module")
def checker():
    return shared_checker()


def only(src: str, code: str):
    (diag,) = lint(src, select=(code,))
    return diag


def numbers(pattern: str, text: str) -> list[float]:
    return [float(x) for x in re.findall(pattern, text)]


def test_ptq_capture_without_eval(checker):
    diag = only(PTQ, "QL201")
    assert diag.fix is not None
    v = checker.verdict(diag, verify_fix=True)
    assert v.verdict == "confirmed", v.evidence
    assert v.fix_verified is True
    # Conv→ReLU→BN: far worse as written, and calibration moved the batch-norm statistics.
    bn = v.evidence.split("Conv→ReLU→BN: ")[1].split(";")[0]
    written, fixed = numbers(r"max error ([\d.e+-]+)", bn)[0], numbers(r"vs ([\d.e+-]+) \(SQNR", bn)[0]
    assert written > 5 * fixed
    assert "moved during calibration: yes vs no" in bn
    # Conv→Dropout: the pipeline is not even deterministic as written.
    assert "two pipeline runs agree: no vs yes" in v.evidence.split("Conv→Dropout: ")[1]


def test_qat_capture_in_eval_mode(checker):
    v = checker.verdict(only(QAT, "QL202"), verify_fix=True)
    assert v.verdict == "confirmed", v.evidence
    assert "Conv→ReLU→BN: batch-norm statistics updated by training: no vs yes" in v.evidence
    dropout = v.evidence.split("Conv→Dropout: ")[1]
    written, fixed = numbers(r"(\d+)%", dropout)
    assert written < 10 and fixed > 30
    assert v.fix_verified is True


def test_mode_switch_on_a_converted_module(checker):
    v = checker.verdict(only(SWITCH, "QL203"), verify_fix=True)
    assert v.verdict == "confirmed", v.evidence
    assert "returned by `convert_pt2e`" in v.evidence
    assert "`.eval()` raises NotImplementedError" in v.evidence
    assert "`move_exported_model_to_eval` leaves eval behaviour (deterministic" in v.evidence
    assert v.fix_verified is True


def test_graph_handed_to_a_switching_helper(checker):
    # The fix keeps the helper's `.eval()` and allows the graph first: verified as such.
    v = checker.verdict(only(HANDED, "QL203"), verify_fix=True)
    assert v.verdict == "confirmed", v.evidence
    assert "returned by `prepare_pt2e`" in v.evidence
    assert "`.eval()` raises NotImplementedError" in v.evidence
    assert "`allow_exported_model_train_eval` then `.eval()` leaves eval behaviour (deterministic" in v.evidence
    assert v.fix_verified is True


def test_user_models_are_run_when_configured(checker, tmp_path):
    write_package(
        tmp_path,
        "mymodels",
        nets=textwrap.dedent(
            """
            import torch

            def make():
                print("loading weights")  # on stdout: must not disturb the worker's protocol
                torch.manual_seed(0)
                model = torch.nn.Sequential(
                    torch.nn.Linear(16, 16), torch.nn.BatchNorm1d(16), torch.nn.ReLU(), torch.nn.Linear(16, 4)
                )
                model.train()
                with torch.no_grad():
                    for _ in range(10):
                        model(torch.randn(32, 16) * 3 + 2)
                return model, (torch.randn(8, 16),)

            def broken():
                raise RuntimeError("no weights here")
            """
        ),
    )
    saved = checker.models, checker.root
    checker.models, checker.root = ("mymodels.nets:make", "mymodels.nets:broken"), tmp_path
    try:
        v = checker.verdict(only(PTQ, "QL201"), verify_fix=True)
    finally:
        checker.models, checker.root = saved
    assert v.verdict == "confirmed"
    assert "mymodels.nets:make: max error" in v.evidence
    assert "Not run: mymodels.nets:broken: the factory failed (RuntimeError: no weights here)" in v.evidence
    # Its verdict depends on the user's code: not kept in this process or on disk.
    assert not checker._memo or all("mymodels" not in m.evidence for m in checker._memo.values())

"""QL204 runtime check on the real torch and torchao (CPU): convert with and without calibration.

The finding comes from the real rule; the worker converts its reference model both ways.
The figures asserted are what torchao 0.18 does: every observer of an uncalibrated model is
still empty at convert, each quantize/dequantize pair carries scale 1.0 and zero point 0,
and the error grows by far more than the factor of 5 the check requires.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import lint
from tests.runtime_support import shared_checker

pytest.importorskip("torchao")

SOURCE = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def quantize(model, quantizer, sample):
    prepared = prepare_pt2e(torch.export.export(model.eval(), (sample,)).module(), quantizer)
    return convert_pt2e(prepared)
"""


def test_uncalibrated_convert_is_confirmed_with_observer_state_and_errors():
    (diag,) = lint(SOURCE, select=("QL204",))
    v = shared_checker().verdict(diag, verify_fix=True)
    assert v.verdict == "confirmed", v.evidence
    static, dynamic = v.evidence.split("; Conv→ReLU→Linear, ")
    empty = re.search(r"\(min=\+inf, max=-inf\) at convert (\d+) of (\d+) uncalibrated vs (\d+) calibrated", static)
    assert empty and empty[1] == empty[2] and int(empty[2]) >= 3 and empty[3] == "0", static
    defaults = re.search(r"scale 1.0 and zero point 0: (\d+) of (\d+) vs (\d+) of", static)
    assert defaults and defaults[1] == defaults[2] and defaults[3] == "0", static
    bare, calibrated = map(float, re.search(r"max error against the float model (\S+) vs (\S+)", static).groups())
    assert bare > 5 * calibrated
    # Dynamic quantization: the activation observer keeps nothing, the weight observer still needs a run.
    assert "keep no statistics" in dynamic and "at convert 1 of 1 uncalibrated vs 0" in dynamic, dynamic
    assert v.fix_verified is None  # a display-only fix has no edits to verify


@pytest.mark.filterwarnings("ignore:XNNPACKQuantizer is deprecated")
def test_a_model_without_quantized_ops_is_refuted():
    """No observer, no quantize node: converting without data changes nothing."""
    torch = pytest.importorskip("torch")
    from qlint.runtime import pipelines
    from qlint.runtime.checks import calibration

    batches = [(torch.randn(2, 4),) for _ in range(3)]
    subject = pipelines.Subject("ReLU only", torch.nn.ReLU().eval(), batches, batches[0])
    text, hurt = calibration._row(subject, "static per-tensor", {})
    assert not hurt, text
    assert "at convert 0 of 0 uncalibrated" in text and "max error against the float model 0 vs 0" in text

"""QL204 works out a callee's summary only where the caller can use it: a call that is a
statement of its own, handing over no model and no QAT quantizer, changes nothing in the
caller's summary whatever the callee does (`calibration_calls.hands_nothing`), so the callee is not
walked. Calls that hand a model over, as statements or not, still are."""

from __future__ import annotations

import textwrap

import pytest

from qlint.analysis import calibration
from tests.conftest import lint

HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def convert_it(m):
    return convert_pt2e(m)


def calibrate(m, data):
    for x in data:
        m(x)


def report(*args, **kwargs):
    calibrate(args[0], ())


"""
ROWS = HEAD.count("\n")


@pytest.fixture
def walked(monkeypatch) -> list[str]:
    """The names of the functions whose summaries the check works out."""
    names: list[str] = []
    real = calibration.Calibration.summary

    def summary(self, func, *args, **kwargs):
        if id(func) not in self.memo:
            names.append(getattr(func, "name", "<module>"))
        return real(self, func, *args, **kwargs)

    monkeypatch.setattr(calibration.Calibration, "summary", summary)
    return names


def rows(src: str) -> list[int]:
    return [d.range.start.row - ROWS for d in lint(HEAD + textwrap.dedent(src), select=("QL204",))]


def quantize(*lines: str) -> str:
    return (
        "def quantize(model, quantizer, x, data):\n"
        "    prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)\n"
        + "".join(f"    {line}\n" for line in lines)
        + "    return convert_pt2e(prepared)\n"
    )


def test_a_statement_call_handing_nothing_over_is_not_walked(walked):
    assert rows(quantize("report('start', 3, level=torch.float32)")) == [4]
    assert "report" not in walked


@pytest.mark.parametrize(
    "call",
    [
        "report(prepared)",  # hands the model over
        "report([prepared])",  # inside a container
        "report(lambda: prepared(x))",  # a closure naming it
    ],
)
def test_a_statement_call_handing_something_over_is_walked(walked, call):
    assert rows(quantize(call)) == []  # `report` runs its first argument: calibrated
    assert "report" in walked


@pytest.mark.parametrize(
    "call",
    [
        "report(str(x))",  # `str(x)` might have been a helper returning the prepared model
        "report(model)",  # a parameter: the callers' model, which `report` may convert
        # Into `report`'s `**kwargs`, which its body never names (`keyword_binding`).
        "report(x, model=prepared)",
    ],
)
def test_a_statement_call_handing_a_possible_model_over_is_walked(walked, call):
    assert rows(quantize(call)) == [4]  # not the prepared model: still uncalibrated
    assert "report" in walked


def test_a_statement_call_converting_the_model_is_still_a_finding(walked):
    # As a statement of its own: `convert_it` converts what it is given (and the return
    # converts it again, still uncalibrated).
    assert rows(quantize("convert_it(prepared)")) == [3, 4]
    assert "convert_it" in walked


def test_a_statement_call_calibrating_the_model_is_quiet(walked):
    assert rows(quantize("calibrate(prepared, data)")) == []


def test_a_statement_call_turning_a_quantizer_qat_is_walked(walked):
    # `is_qat=` makes the holder a QAT quantizer: the call is not skipped.
    src = (
        "def quantize(model, quantizer, x):\n"
        "    report(quantizer, is_qat=True)\n"
        "    prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)\n"
        "    return convert_pt2e(prepared)\n"
    )
    rows(src)
    assert "report" in walked


def test_a_call_whose_result_is_kept_is_walked(walked):
    assert rows(quantize("status = report('start')")) == [4]
    assert "report" in walked  # it could have returned a prepared model

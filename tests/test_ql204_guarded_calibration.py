"""QL204 on a helper that calibrates only when its caller passes the data (`if data: for b in
data: prepared(*b)` with `data=None`), called in its module without it: that call converts a
model no path ran. The calibration walk joins the branch's paths as "may have run", so these
were quiet before; a call that passes data, a guard on anything but such a parameter, or a
run outside the guard keeps them quiet."""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
"""
ROWS = HEAD.count("\n")

HELPER = """
def quantize(model, x, quantizer, calibration_data=None):
    model.eval()
    prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
    if calibration_data:
        for batch in calibration_data:
            prepared(*batch)
    return convert_pt2e(prepared)
"""
CONVERT_ROW = ROWS + 8  # the `return convert_pt2e(prepared)` of HELPER


def ql204(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL204",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in ql204(src)]


def test_a_caller_leaving_the_data_out_is_reported_at_the_convert():
    (d,) = ql204(HELPER + "\n\ndef main(m, x, q):\n    return quantize(m, x, q)\n")
    assert d.range.start.row == CONVERT_ROW
    assert d.message == (
        f"`prepared` is converted without calibration after `prepare_pt2e` (line {ROWS + 4}): it runs only"
        f" when `calibration_data` is given, and the call at line {ROWS + 12} leaves it empty"
    )


def test_a_caller_passing_none_or_an_empty_list_is_reported():
    assert rows(HELPER + "\nquantize(m, x, q, None)\n") == [CONVERT_ROW]
    assert rows(HELPER + "\nquantize(m, x, q, calibration_data=[])\n") == [CONVERT_ROW]


def test_the_guard_forms_and_a_with_block_are_read():
    for guard in ("calibration_data is not None", "len(calibration_data)", "len(calibration_data) > 0"):
        src = f"""
        def quantize(model, x, quantizer, calibration_data=None):
            with torch.no_grad():
                prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), quantizer)
                if {guard}:
                    for batch in calibration_data:
                        prepared(*batch)
                quantized = convert_pt2e(prepared)
            return quantized

        quantize(m, x, q)
        """
        assert rows(src) == [ROWS + 8], guard


def test_callers_that_pass_data_stay_quiet():
    assert rows(HELPER + "\nquantize(m, x, q, data)\nquantize(m, x, q, calibration_data=data)\n") == []
    assert rows(HELPER + "\nquantize(m, x, q, *rest)\nquantize(m, x, q, **options)\n") == []


def test_no_caller_in_the_module_stays_quiet():
    # Who calls it, and with what, is unknown: as before, the branch may run it.
    assert rows(HELPER) == []


def test_a_guard_on_something_else_stays_quiet():
    src = """
    CALIBRATE = True

    def quantize(model, x, quantizer, calibration_data=None):
        prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), quantizer)
        if CALIBRATE:
            prepared(x)
        return convert_pt2e(prepared)

    quantize(m, x, q)
    """
    assert rows(src) == []


def test_an_else_that_runs_the_model_stays_quiet():
    src = """
    def quantize(model, x, quantizer, calibration_data=None):
        prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), quantizer)
        if calibration_data:
            for batch in calibration_data:
                prepared(*batch)
        else:
            prepared(x)
        return convert_pt2e(prepared)

    quantize(m, x, q)
    """
    assert rows(src) == []


def test_a_run_outside_the_guard_stays_quiet():
    src = """
    def quantize(model, x, quantizer, calibration_data=None):
        prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), quantizer)
        prepared(x)
        if calibration_data:
            for batch in calibration_data:
                prepared(*batch)
        return convert_pt2e(prepared)

    quantize(m, x, q)
    """
    assert rows(src) == []


def test_a_default_that_holds_data_or_a_parameter_bound_again_stays_quiet():
    src = """
    DEFAULT = load()

    def quantize(model, x, quantizer, calibration_data=DEFAULT):
        prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), quantizer)
        if calibration_data:
            prepared(x)
        return convert_pt2e(prepared)

    quantize(m, x, q)
    """
    assert rows(src) == []
    rebound = HELPER.replace("    model.eval()\n", "    calibration_data = calibration_data or [(x,)]\n")
    assert rows(rebound + "\nquantize(m, x, q)\n") == []


def test_two_guards_on_different_parameters_stay_quiet():
    src = """
    def quantize(model, x, quantizer, data=None, extra=None):
        prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), quantizer)
        if data:
            prepared(*data)
        if extra:
            prepared(*extra)
        return convert_pt2e(prepared)

    quantize(m, x, q, extra=more)
    """
    assert rows(src) == []

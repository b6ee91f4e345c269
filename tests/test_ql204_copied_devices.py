"""QL204 through a device move of a call's result: `convert_pt2e(copy.deepcopy(prepared).cpu())`.

`.cpu()`, `.to(device)` and the other methods that return the module itself kept the prepared
model on a name (`prepared.cpu()`) but lost it on a call's result, so the copy-then-move that
Autoware's PTQ exports convert (`autosteer_2.0_ptq.py`, `autodrive_ptq.py`) was quiet even
with the calibration removed (lane fresh38c, issue 14). The result is now the copy, as
`copy.deepcopy(prepared)` alone already was: converted uncalibrated it is reported, and running
it (or the original) before converting still counts as calibration.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

HEAD = """\
import copy
import torch
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
"""
ROWS = HEAD.count("\n")


def ql204(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL204",))


def quantize(*lines: str, convert: str = "convert_pt2e(copy.deepcopy(prepared).cpu())") -> str:
    return (
        "def quantize(model, quantizer, x, data):\n"
        "    prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)\n"
        + "".join(f"    {line}\n" for line in lines)
        + f"    return {convert}\n"
    )


@pytest.mark.parametrize(
    "convert",
    [
        "convert_pt2e(copy.deepcopy(prepared).cpu())",
        "convert_pt2e(copy.deepcopy(prepared).to('cpu'))",
        "convert_pt2e(copy.copy(prepared).cuda())",
        "convert_pt2e(move_exported_model_to_eval(prepared).cpu())",
    ],
)
def test_a_moved_copy_converted_uncalibrated_is_flagged(convert):
    (d,) = ql204(quantize(convert=convert))
    assert d.range.start.row == ROWS + 3
    assert d.message.startswith(f"`{convert[len('convert_pt2e(') : -1]}` is converted without calibration")


def test_a_moved_copy_bound_to_a_name_and_converted_uncalibrated_is_flagged():
    (d,) = ql204(quantize("cpu_copy = copy.deepcopy(prepared).to('cpu')", convert="convert_pt2e(cpu_copy)"))
    assert d.range.start.row == ROWS + 4


def test_a_method_converting_a_moved_copy_is_flagged_at_the_uncalibrated_call():
    src = """
    class PTQ:
        def convert(self, prepared):
            return convert_pt2e(copy.deepcopy(prepared).cpu())

        def run(self, model, quantizer, x):
            prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
            return self.convert(prepared)
    """
    (d,) = ql204(src)
    assert d.range.start.row == ROWS + 8
    assert "converts `prepared` without calibration" in d.message


@pytest.mark.parametrize(
    "lines",
    [
        ("for b in data:", "    prepared(b)"),  # the original is calibrated
        ("move_exported_model_to_eval(prepared).cpu()", "for b in data:", "    prepared(b)"),
        ("with torch.no_grad():", "    for b in data:", "        prepared(b)"),
    ],
)
def test_a_moved_copy_of_a_calibrated_model_is_quiet(lines):
    assert ql204(quantize(*lines)) == []


def test_running_the_moved_copy_itself_before_converting_it_is_quiet():
    src = quantize(
        "cpu_copy = copy.deepcopy(prepared).cpu()",
        "for b in data:",
        "    cpu_copy(b)",
        convert="convert_pt2e(cpu_copy)",
    )
    assert ql204(src) == []


def test_a_method_converting_a_moved_copy_after_a_calibrating_method_is_quiet():
    src = """
    class PTQ:
        def calibrate(self, prepared, data):
            move_exported_model_to_eval(prepared)
            for b in data:
                prepared(b)

        def convert(self, prepared):
            return convert_pt2e(copy.deepcopy(prepared).cpu())

        def run(self, model, quantizer, x, data):
            prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
            self.calibrate(prepared, data)
            return self.convert(prepared)
    """
    assert ql204(src) == []

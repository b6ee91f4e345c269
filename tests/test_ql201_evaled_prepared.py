"""QL201: a train-mode capture whose prepared graph is moved to eval before any calibration
(`move_exported_model_to_eval`, or `allow_exported_model_train_eval` then `.eval()`, also as the
first statement of a calibration helper: gorillatracker) is quiet; a move after a calibration
batch, a helper that runs the graph first, and a graph run before the prepare stay reported."""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e import allow_exported_model_train_eval, move_exported_model_to_eval
from torchao.quantization.pt2e import move_exported_model_to_train
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def calibrate(model, data):
    model.eval()
    with torch.no_grad():
        model(data)


def calibrate_then_eval(model, data):
    model(data)
    model.eval()


def build():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 3, 3), torch.nn.BatchNorm2d(3))
"""


def rows(src: str) -> list[int]:
    return [d.range.start.row - HEAD.count("\n") for d in lint(HEAD + textwrap.dedent(src), select=("QL201",))]


def quantize(*middle: str) -> str:
    lines = "\n".join(f"    {line}" for line in middle)
    return f"""
def quantize(quantizer, x):
    gm = export(build(), (x,)).module()
    p = prepare_pt2e(gm, quantizer)
{lines}
    return convert_pt2e(p)
"""


def test_moved_to_eval_before_calibration_is_quiet():
    assert rows(quantize("move_exported_model_to_eval(p)", "p(x)")) == []


def test_allowed_then_evaled_before_calibration_is_quiet():
    assert rows(quantize("allow_exported_model_train_eval(p)", "p.eval()", "p(x)")) == []


def test_allowed_then_helper_evals_first_is_quiet():
    # gorillatracker's pt2e_quantization: the helper's first statement is `model.eval()`.
    assert rows(quantize("allow_exported_model_train_eval(p)", "calibrate(p, x)")) == []


def test_moved_after_a_calibration_batch_is_reported():
    assert rows(quantize("p(x)", "move_exported_model_to_eval(p)")) == [3]


def test_moved_to_train_is_reported():
    assert rows(quantize("move_exported_model_to_train(p)", "p(x)")) == [3]


def test_allowed_without_eval_is_reported():
    assert rows(quantize("allow_exported_model_train_eval(p)", "p(x)", "p.eval()")) == [3]


def test_helper_running_the_graph_before_eval_is_reported():
    assert rows(quantize("allow_exported_model_train_eval(p)", "calibrate_then_eval(p, x)")) == [3]


def test_helper_evaling_another_parameter_is_reported():
    assert rows(quantize("allow_exported_model_train_eval(p)", "calibrate(x, p)")) == [3]


def test_captured_graph_run_before_prepare_is_reported():
    assert rows(
        """
        def quantize(quantizer, x):
            gm = export(build(), (x,)).module()
            gm(x)
            p = prepare_pt2e(gm, quantizer)
            move_exported_model_to_eval(p)
            p(x)
            return convert_pt2e(p)
        """
    ) == [3]


def test_move_in_a_branch_is_reported():
    assert rows(quantize("if x is not None:", "    move_exported_model_to_eval(p)", "p(x)")) == [3]

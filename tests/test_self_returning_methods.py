"""The `nn.Module` methods that return the module itself (`model_torch_nn.MODE_KEEPING_METHODS`,
`SELF_RETURNING_METHODS`), audited against torch 2.13, and what each analysis that reads them
answers where a table left one out: the walk (`library_calls`: `m = Net().xpu()` was unknown),
QL202's order test (`moved_graphs`: `prepared.bfloat16()` before the move counted as training),
QL204's calibration walk (`prepared.share_memory()` counted as a run) and the strip-loop
reading (`fx_g = fx_g.type(torch.float16)` after the strip was another graph).
"""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

import pytest

from qlint.analysis.flow.model_torch_nn import MODE_KEEPING_METHODS, SELF_RETURNING_METHODS
from tests.snippets import CONV_BN_NET
from tests.test_model_sources import check
from tests.test_ql202_move_order import in_function, prepare_row, rows
from tests.test_ql204 import body, ql204
from tests.test_stripped_returns import LOUD as STRIP_LOUD
from tests.test_stripped_returns import _importer, _runner


def test_the_tables_are_torch_nn_modules_own():
    torch = pytest.importorskip("torch")
    nn = torch.nn

    def annotated_self(name: str) -> bool:
        returned = inspect.signature(getattr(nn.Module, name)).return_annotation
        return getattr(returned, "__name__", str(returned)) == "Self"

    public = [n for n in dir(nn.Module) if not n.startswith("_") and callable(getattr(nn.Module, n))]
    # `to` is overloaded, so its runtime annotation is empty; `apply` runs its function first.
    assert {n for n in public if annotated_self(n)} | {"to"} == SELF_RETURNING_METHODS | {"apply"}
    assert {"train", "eval"} == SELF_RETURNING_METHODS - MODE_KEEPING_METHODS

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(3)

    arguments = {"to": (torch.device("cpu"),), "type": (torch.float64,), "requires_grad_": (False,)}
    ran = set()
    for name in sorted(MODE_KEEPING_METHODS):
        for training in (True, False):
            m = Net().train(training)
            call = getattr(m, name)
            try:
                out = call(device="cpu") if name == "to_empty" else call(*arguments.get(name, ()))
            except (AssertionError, RuntimeError):  # a device this build of torch does not have
                assert "return self._apply(" in inspect.getsource(getattr(nn.Module, name)), name
                continue
            assert out is m and m.training is training and m.bn.training is training, name
            ran.add(name)
    assert {"to", "cpu", "half", "type", "share_memory", "to_empty", "requires_grad_"} <= ran


NET = CONV_BN_NET + "\ndef quantize(quantizer, x):\n"
CAPTURE = "prepare_pt2e(export(m, (x,)).module(), quantizer)\n"


def _ql201(steps: str) -> list[str]:
    return [d.code for d in check(NET + textwrap.indent(steps + CAPTURE, "    "), select=("QL201",))]


@pytest.mark.parametrize("move", ["xpu()", "ipu()", "mtia()"])
def test_device_moves_keep_the_train_mode_model(move):
    assert _ql201(f"m = Net().{move}\n") == ["QL201"]
    assert _ql201(f"m = Net()\nm = m.{move}\n") == ["QL201"]


@pytest.mark.parametrize("move", ["xpu()", "ipu()", "mtia()"])
def test_device_moves_of_an_evaled_model_are_quiet(move):
    assert _ql201(f"m = Net().eval().{move}\n") == []
    assert _ql201(f"m = Net().eval()\nm.{move}\n") == []


# -- QL202: a QAT graph of an eval-mode capture, cast before the move to train mode ----------

CASTS = ["bfloat16()", "type(torch.bfloat16)", "share_memory()", "to_empty(device='cpu')", "xpu()"]
MOVED = "move_exported_model_to_train(prepared)\ntrain_loop(prepared, data)\n"


@pytest.mark.parametrize("cast", CASTS)
def test_a_cast_before_the_move_trains_nothing(cast, tmp_path):
    assert rows(in_function(f"prepared.{cast}\n" + MOVED), tmp_path) == []
    assert rows(in_function(f"prepared = prepared.{cast}\n" + MOVED), tmp_path) == []


@pytest.mark.parametrize("cast", CASTS)
def test_training_before_the_move_stays_reported(cast, tmp_path):
    late = f"prepared.{cast}\ntrain_loop(prepared, data)\nmove_exported_model_to_train(prepared)\n"
    assert rows(in_function(late), tmp_path) == [prepare_row(in_function(late))]
    alias = f"g = prepared.{cast}\ntrain_loop(g, data)\nmove_exported_model_to_train(prepared)\n"
    assert rows(in_function(alias), tmp_path) == [prepare_row(in_function(alias))]


# -- QL204: a cast between prepare and convert runs nothing -----------------------------------


@pytest.mark.parametrize(
    "between",
    ["prepared.share_memory()\n", "prepared = prepared.type(torch.float32)\n", "prepared.xpu()\n"],
)
def test_a_cast_between_prepare_and_convert_keeps_the_finding(between):
    assert [d.code for d in ql204(body(between))] == ["QL204"]


def test_a_cast_then_a_calibration_pass_is_quiet():
    assert ql204(body("prepared = prepared.share_memory()\nprepared(x)\n")) == []


# -- QL101: the graph stripped to packets, cast before it is returned --------------------------


@pytest.mark.parametrize("cast", ["type(torch.float16)", "requires_grad_(False)", "share_memory()"])
def test_a_cast_after_the_strip_keeps_the_stripped_graph(cast, tmp_path: Path):
    assert _runner(tmp_path, _importer(after=f"fx_g = fx_g.{cast}\n")) == []


def test_apply_after_the_strip_is_another_graph(tmp_path: Path):
    # `apply` runs its function on every module: it may set overloads again.
    assert _runner(tmp_path, _importer(after="fx_g = fx_g.apply(print)\n")) == STRIP_LOUD

"""QL201: ai-edge-torch's `to_channel_last_io(module, ...)` returns a `ChannelLastIOWrapper` holding
`module` as its child, so `.eval()`/`.train()` of the wrapper switches the module, and the
wrapper is read as the module it wraps (as `nn.DataParallel` is). elastic-ai.explorer's Pico
generator evals `to_channel_last_io(model, args=[0])` and then captures `model` for PT2E."""

from __future__ import annotations

from tests.conftest import lint

HEAD = """\
import copy

import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
"""
BN = "nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))"


def _ql201(body: str):
    return [d for d in lint(HEAD + body, select=("QL201",)) if d.code == "QL201"]


def _script(imports: str, wrap: str) -> str:
    return f"{imports}\n\ndef f(q, x):\n    m = {BN}\n{wrap}    prepare_pt2e(export(m, (x,)).module(), q)\n"


def test_an_eval_of_the_wrapper_evals_the_module_it_wraps():
    assert _ql201(_script("import ai_edge_torch", "    ai_edge_torch.to_channel_last_io(m, args=[0]).eval()\n")) == []
    named = "    w = to_channel_last_io(module=m, args=[0])\n    w.train(False)\n"
    assert _ql201(_script("from litert_torch import to_channel_last_io", named)) == []
    inner = "from ai_edge_torch._convert.to_channel_last_io import ChannelLastIOWrapper"
    assert _ql201(_script(inner, "    ChannelLastIOWrapper(m, args=[0]).eval()\n")) == []


def test_a_wrapper_left_in_train_mode_or_switched_to_train_is_reported():
    (d,) = _ql201(_script("import ai_edge_torch", "    ai_edge_torch.to_channel_last_io(m, args=[0])\n"))
    assert "BatchNorm2d" in d.message
    trained = "    m.eval()\n    ai_edge_torch.to_channel_last_io(m).train()\n"
    (d,) = _ql201(_script("import ai_edge_torch", trained))
    assert "BatchNorm2d" in d.message


def test_a_wrapper_of_a_copy_or_a_project_function_of_that_name_leaves_the_module_as_it_was():
    copied = "    ai_edge_torch.to_channel_last_io(copy.deepcopy(m), args=[0]).eval()\n"
    assert len(_ql201(_script("import ai_edge_torch", copied))) == 1
    own = "def to_channel_last_io(module, args=None):\n    return copy.deepcopy(module)\n"
    assert len(_ql201(_script(own, "    to_channel_last_io(m, args=[0]).eval()\n"))) == 1


GENERATOR = """
from ai_edge_torch import to_channel_last_io


class Generator:
    def _quantize(self, model, sample, q):
        return prepare_pt2e(export(model, sample).module(), q)

    def generate(self, model, sample, q):
        nhwc = to_channel_last_io(model, args=[0]).eval()
        return nhwc, self._quantize(model, (sample,), q)
"""


def test_a_helper_capturing_the_parameter_the_method_evaled_through_the_wrapper():
    assert _ql201(GENERATOR) == []
    (d,) = _ql201(GENERATOR.replace("args=[0]).eval()", "args=[0])"))
    assert "as parameter `model`" in d.message


def test_qat_reads_the_same_switch():
    qat = HEAD.replace("import prepare_pt2e", "import prepare_qat_pt2e") + (
        f"import ai_edge_torch\n\n\ndef f(q, x):\n    m = {BN}\n"
        "    ai_edge_torch.to_channel_last_io(m, args=[0]).eval()\n"
        "    prepare_qat_pt2e(export(m, (x,)).module(), q)\n"
    )
    (d,) = [d for d in lint(qat, select=("QL202",)) if d.code == "QL202"]
    assert "BatchNorm2d" in d.message
    trained = qat.replace("args=[0]).eval()", "args=[0])")
    assert [d for d in lint(trained, select=("QL202",)) if d.code == "QL202"] == []

"""QL201 constructions: `nn.DataParallel(model)` wraps a model without changing its mode (IPEX's
trainer.py wraps `self.model` on multi-GPU runs before an int8 capture), and a class built from
names bound to constants holds only what its body builds."""

from __future__ import annotations

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
"""
BN = "nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))"


def _ql201(body: str):
    return [d for d in lint(HEAD + body, select=("QL201",)) if d.code == "QL201"]


def test_a_wrapped_parameter_is_the_callers_model_not_a_new_train_mode_one():
    (d,) = _ql201(
        "\ndef wrap(model, q, x, n_gpu):\n    if n_gpu > 1:\n        model = nn.DataParallel(model)\n"
        "    prepare_pt2e(export(model, (x,)).module(), q)\n"
    )
    assert "as parameter `model`" in d.message and "modules start in train mode" not in d.message


def test_a_wrapped_eval_model_is_quiet_and_a_wrapped_train_model_is_reported():
    evald = f"\ndef f(q, x):\n    m = {BN}\n    m.eval()\n    m = nn.parallel.DistributedDataParallel(m)\n"
    evald += "    prepare_pt2e(export(m, (x,)).module(), q)\n"
    assert _ql201(evald) == []
    (d,) = _ql201(evald.replace("    m.eval()\n", ""))
    assert "BatchNorm2d" in d.message
    # `.eval()` on the wrapper reaches the wrapped model.
    after = evald.replace("    m.eval()\n", "").replace("    prepare_pt2e", "    m.eval()\n    prepare_pt2e")
    assert _ql201(after) == []


SINGLE = """
class Single(nn.Module):
    def __init__(self, in_channel=1, out_channel=3):
        super().__init__()
        self.conv = nn.Conv2d(in_channels=in_channel, out_channels=out_channel, kernel_size=1)


def test_q(q):
"""


def test_a_class_built_from_names_bound_to_constants_holds_what_its_body_builds():
    # ExecuTorch's test_qnn_backend_seq_mse: `o_ch, i_ch = 32, 512`, `Conv2dSingle(in_channel=i_ch, ...)`.
    body = "    o_ch, i_ch = 32, 512\n    m = Single(in_channel=i_ch, out_channel=o_ch)\n"
    body += "    prepare_pt2e(export(m, (torch.randn(1, i_ch, 1, 1),)).module(), q)\n"
    assert _ql201(SINGLE + body) == []
    # A name that may hold anything (here a parameter): the class only hands it to a Conv2d,
    # so it cannot be a module; kept by the class, it may be one and the content is not known.
    handed = SINGLE.replace("def test_q(q):", "def test_q(q, i_ch):") + body.replace(
        "    o_ch, i_ch = 32, 512\n", "    o_ch = 32\n"
    )
    assert _ql201(handed) == []
    kept = handed.replace("kernel_size=1)\n", "kernel_size=1)\n        self.source = in_channel\n", 1)
    assert len(_ql201(kept)) == 1

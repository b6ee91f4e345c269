"""QL202 qat-capture-in-eval-mode: the QAT mirror of QL201."""

from __future__ import annotations

import textwrap

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import fix, lint

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e import move_exported_model_to_train
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e
"""


def ql202(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL202",))


def fixed(src: str, unsafe: bool = False) -> str:
    return fix(HEAD + textwrap.dedent(src), select=("QL202",), unsafe=unsafe)[len(HEAD) :]


def test_eval_dominating_a_qat_capture():
    (d,) = ql202(
        """
        def train_qat(model, quantizer, x):
            model.eval()
            gm = export(model, (x,)).module()
            return prepare_qat_pt2e(gm, quantizer)
        """
    )
    assert d.code == "QL202" and d.name == "qat-capture-in-eval-mode"
    assert d.range.start.row == 8
    assert "captured for QAT in eval mode (after `model.eval()` at line 7)" in d.message
    assert d.evidence["flow"] == "qat" and d.evidence["reasons"] == ["eval"]
    # `model` is the caller's object: `.train()` would leave it in train mode after the call.
    assert d.fix.applicability is Applicability.UNSAFE


def test_from_pretrained_is_eval_mode():
    src = """
    from transformers import AutoModel

    def train_qat(quantizer, x):
        model = AutoModel.from_pretrained("m")
        prepare_qat_pt2e(export(model, (x,)).module(), quantizer)
    """
    (d,) = ql202(src)
    assert "from `from_pretrained` at line 9, which returns eval mode" in d.message


@pytest.mark.parametrize(
    "src",
    [
        # train mode: fresh module, explicit train(), train after eval
        """
        def f(quantizer, x):
            prepare_qat_pt2e(export(torch.nn.Linear(2, 2), (x,)).module(), quantizer)
        """,
        """
        def f(model, quantizer, x):
            model.eval()
            model.train()
            prepare_qat_pt2e(export(model, (x,)).module(), quantizer)
        """,
        # eval on one branch only does not dominate
        """
        def f(model, quantizer, x, frozen):
            if frozen:
                model.eval()
            prepare_qat_pt2e(export(model, (x,)).module(), quantizer)
        """,
        # the mode of a parameter is the caller's business here
        """
        def f(model, quantizer, x):
            prepare_qat_pt2e(export(model, (x,)).module(), quantizer)
        """,
        # eval only for the PTQ branch
        """
        def f(model, quantizer, x, is_qat):
            model = model.train() if is_qat else model.eval()
            gm = export(model, (x,)).module()
            prepared = prepare_qat_pt2e(gm, quantizer) if is_qat else prepare_pt2e(gm, quantizer)
        """,
        # eval-mode capture repaired by move_exported_model_to_train on the prepared graph
        """
        def f(model, quantizer, x):
            model.eval()
            prepared = prepare_qat_pt2e(export(model, (x,)).module(), quantizer)
            prepared = move_exported_model_to_train(prepared)
        """,
        # conv + batch norm too: on torch 2.13/torchao 0.18 prepare's conv-bn QAT fusion matches an
        # eval-mode capture as well (measured), and move_exported_model_to_train flips the batch norm
        """
        class ConvBn(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(3, 3, 3)
                self.bn = torch.nn.BatchNorm2d(3)

            def forward(self, x):
                return self.bn(self.conv(x))

        def f(quantizer, x):
            model = ConvBn().eval()
            prepared = prepare_qat_pt2e(export(model, (x,)).module(), quantizer)
            prepared = move_exported_model_to_train(prepared)
        """,
        # PTQ in eval mode is QL201's business, and right
        """
        def f(model, quantizer, x):
            model.eval()
            prepare_pt2e(export(model, (x,)).module(), quantizer)
        """,
    ],
)
def test_quiet(src):
    assert ql202(src) == []


NET = """
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)

"""


def test_fix_inserts_train_and_is_idempotent():
    src = (
        NET
        + """
def train_qat(quantizer, x):
    model = Net()
    model.eval()
    gm = export(model, (x,)).module()
    return prepare_qat_pt2e(gm, quantizer)
"""
    )
    (d,) = ql202(src)
    assert d.fix.applicability is Applicability.SAFE  # built here, nobody else holds it
    once = fixed(src)
    assert "    model.eval()\n    model.train()\n    gm = export(model, (x,)).module()\n" in once
    assert fixed(once) == once


@pytest.mark.parametrize(
    "src",
    [
        # the caller's model: it would stay in train mode after the call
        "def f(model, quantizer, x):\n    model.eval()\n"
        "    return prepare_qat_pt2e(export(model, (x,)).module(), quantizer)\n",
        # eager reference outputs after the capture would now run in train mode
        "def f(quantizer, x):\n    model = Net()\n    model.eval()\n"
        "    p = prepare_qat_pt2e(export(model, (x,)).module(), quantizer)\n    return p, model(x)\n",
        # a wrapper of the caller's module: `.train()` reaches into it
        "def f(inner, quantizer, x):\n    model = torch.nn.Sequential(inner)\n    model.eval()\n"
        "    return prepare_qat_pt2e(export(model, (x,)).module(), quantizer)\n",
    ],
)
def test_fix_is_unsafe_where_the_mode_change_outlives_the_capture(src):
    (d,) = ql202(NET + src)
    assert d.fix.applicability is Applicability.UNSAFE
    assert fixed(NET + src) == NET + src  # not applied without --unsafe-fixes


def test_a_graph_captured_again_gets_move_exported_model_to_train_not_train():
    # `.train()` on an exported GraphModule raises NotImplementedError on torch 2.13.
    src = (
        NET
        + """
def f(quantizer, x):
    gm = export(Net(), (x,)).module()
    gm = move_exported_model_to_eval(gm)
    return prepare_qat_pt2e(export(gm, (x,)).module(), quantizer)
"""
    )
    head = "from torchao.quantization.pt2e import move_exported_model_to_eval\n"
    (d,) = lint(HEAD + head + textwrap.dedent(src), select=("QL202",))
    assert d.fix.applicability is Applicability.SAFE
    assert d.fix.message == "Call `move_exported_model_to_train(gm)` before the capture"
    out = fix(HEAD + head + src, select=("QL202",))
    assert "    move_exported_model_to_train(gm)\n    return prepare_qat_pt2e(export(gm" in out
    assert ".train()" not in out


def test_inline_eval_becomes_train_and_a_capture_for_both_flows_gets_no_fix():
    assert "export(model.train(), (x,))" in fixed(
        """
        def f(model, quantizer, x):
            prepare_qat_pt2e(export(model.eval(), (x,)).module(), quantizer)
        """,
        unsafe=True,  # the caller's model
    )
    (d,) = ql202(
        """
        def f(model, quantizer, x, mode):
            gm = export(model.eval(), (x,)).module()
            if mode == "qat":
                gm = prepare_qat_pt2e(gm, quantizer)
            elif mode == "ptq":
                gm = prepare_pt2e(gm, quantizer)
        """
    )
    assert d.fix is None

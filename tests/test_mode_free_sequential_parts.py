"""QL201: an `nn.Sequential` built around modules evaled before, beside mode-free layers.

`nn.Sequential(backbone.eval(), nn.Linear(3, 3))` starts with its own training flag True, but
a torch.nn container switches none of its parts: the backbone stays in eval mode and the linear
head behaves the same in both modes, so the capture is right. It was reported ("`Net().eval()`
runs on some paths only"), the head's train mode judged by the backbone's batch norm. Still
reported: a part passed in train mode that holds batch norm or dropout, a switch of the
container or of the evaled module afterwards, an eval on one branch only, a part given later.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint
from tests.test_mode_free_helper_arguments import NET

IMPORTS = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


"""
HEAD = IMPORTS + NET + "\n\ndef run(q, x, flag):\n"
CAPTURE = "prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"


def ql201(body: str) -> list[str]:
    src = HEAD + textwrap.indent(textwrap.dedent(body) + CAPTURE, "    ")
    return [d.message for d in lint(src, select=("QL201",)) if d.code == "QL201"]


def test_evaled_module_beside_a_mode_free_layer_is_quiet():
    for body in (
        "n = Net().eval()\nmodel = nn.Sequential(n, nn.Linear(3, 3))\n",
        "n = Net()\nn.eval()\nmodel = nn.Sequential(n, nn.Linear(3, 3))\n",
        "model = nn.Sequential(Net().eval(), nn.Linear(3, 3))\n",
        "model = nn.Sequential(Net().eval(), nn.ReLU(), Net().eval())\n",
        "head = nn.Linear(3, 3)\nmodel = nn.Sequential(Net().eval(), head)\n",
    ):
        assert ql201(body) == [], body


def test_a_part_in_train_mode_that_holds_batch_norm_or_dropout_is_reported():
    for body in (
        "model = nn.Sequential(Net(), nn.Linear(3, 3))\n",
        "model = nn.Sequential(Net().eval(), nn.Dropout(0.1))\n",
        "model = nn.Sequential(Net().eval(), Net())\n",
    ):
        assert len(ql201(body)) == 1, body


def test_a_switch_after_the_build_is_reported():
    for body in (
        "n = Net().eval()\nmodel = nn.Sequential(n, nn.Linear(3, 3))\nn.train()\n",
        "n = Net().eval()\nmodel = nn.Sequential(n, nn.Linear(3, 3))\nmodel.train()\n",
        "model = nn.Sequential(Net().eval(), nn.Linear(3, 3))\nmodel.train()\n",
    ):
        assert len(ql201(body)) == 1, body


def test_an_eval_on_one_branch_only_is_reported():
    (message,) = ql201("n = Net()\nif flag:\n    n.eval()\nmodel = nn.Sequential(n, nn.Linear(3, 3))\n")
    assert "runs on some paths only" in message


def test_a_part_given_after_the_build_is_reported():
    for body in (
        "model = nn.Sequential(Net().eval(), nn.Linear(3, 3))\nmodel[1] = Net()\n",
        "model = nn.Sequential(Net().eval(), nn.Linear(3, 3))\nmodel.add_module('bn', nn.BatchNorm1d(3))\n",
    ):
        assert len(ql201(body)) == 1, body


def test_an_evaled_module_read_again_after_the_build_is_reported():
    # A helper handed it may switch it (fine-tuning), and so may an alias.
    for body in (
        "n = Net().eval()\nmodel = nn.Sequential(n, nn.Linear(3, 3))\nfinetune(n)\n",
        "n = Net().eval()\nmodel = nn.Sequential(n, nn.Linear(3, 3))\nm = n\nm.train()\n",
    ):
        assert len(ql201(body)) == 1, body


HELPER = (
    IMPORTS
    + NET
    + """

def quantize(model, x, q):
    return prepare_pt2e(torch.export.export(model, (x,)).module(), q)


def run(q, x):
"""
)


def handed(body: str) -> list[str]:
    src = HELPER + textwrap.indent(textwrap.dedent(body), "    ")
    return [d.message for d in lint(src, select=("QL201",)) if d.code == "QL201"]


def test_the_container_handed_to_a_capturing_helper_is_read_as_built():
    # The helper's callers vouch for its capture (`caller_verdicts`): the container is read
    # as `capture_content` reads it captured where it is built (`Built.content_as_returned`).
    for body in (
        "quantize(nn.Sequential(Net().eval(), nn.Linear(3, 3)), x, q)\n",
        "model = nn.Sequential(Net().eval(), nn.Linear(3, 3))\nquantize(model, x, q)\n",
        "n = Net().eval()\nmodel = nn.Sequential(n, nn.Linear(3, 3))\nquantize(model, x, q)\n",
    ):
        assert handed(body) == [], body


def test_a_handed_container_holding_a_train_mode_part_or_switched_is_reported():
    for body in (
        "quantize(nn.Sequential(Net().eval(), Net()), x, q)\n",
        "n = Net().eval()\nmodel = nn.Sequential(n, nn.Linear(3, 3))\nn.train()\nquantize(model, x, q)\n",
        "model = nn.Sequential(Net().eval(), nn.Linear(3, 3))\nmodel.train()\nquantize(model, x, q)\n",
    ):
        assert len(handed(body)) == 1, body


def test_a_qat_capture_of_a_container_of_an_evaled_module_is_reported():
    # Fixed in eval mode is what a QAT capture gets wrong: the part is read with the rest.
    src = HEAD.replace("prepare_pt2e", "prepare_qat_pt2e") + "    model = nn.Sequential(Net().eval())\n"
    src += "    " + CAPTURE.replace("prepare_pt2e", "prepare_qat_pt2e")
    (message,) = [d.message for d in lint(src, select=("QL202",)) if d.code == "QL202"]
    assert "captured for QAT in eval mode" in message and "BatchNorm1d" in message

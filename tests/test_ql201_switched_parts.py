"""QL201: a helper capturing an attribute of its model parameter (`export(model.model, ...)`,
the base model of a Transformers causal LM, as optimum-habana's PT2E helper does), vouched
for by callers that switch the model to eval first: `nn.Module.train(False)` reaches every
registered submodule (`switched_parts`).

Quiet when each caller passes a model it switched with `.eval()` (also chained, also
`.train(False)`, also inline) and gives it no parts and switches none back. Loud when one
caller does not switch it, switches a part back, stores a part, adds one, hands a part to a
call; and for an item rather than an attribute.
"""

from __future__ import annotations

import pytest

from tests.conftest import check_file, lint, package_repository

HEAD = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Body()

    def forward(self, x):
        return self.model(x)


class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.model = Body()

    def forward(self, x):
        return self.inner(x) + self.model(x)


def quantize_body(model, x, q):
    return prepare_pt2e(torch.export.export(model.model, (x,)).module(), q)
"""
CAPTURE_ROW = HEAD.splitlines().index("    return prepare_pt2e(torch.export.export(model.model, (x,)).module(), q)") + 1


def main(*lines: str) -> str:
    return "\n\ndef main(x, q):\n" + "".join(f"    {line}\n" for line in lines)


def ql201(src: str, head: str = HEAD) -> list[int]:
    return [d.range.start.row for d in lint(head + src, select=("QL201",))]


def test_without_callers_the_part_of_the_parameter_is_reported():
    assert ql201("") == [CAPTURE_ROW]


@pytest.mark.parametrize(
    "lines",
    [
        ("m = Net()", "m.eval()", "quantize_body(m, x, q)"),
        ("m = Net().eval()", "quantize_body(m, x, q)"),
        ("m = Net()", "m = m.eval().to('cpu')", "quantize_body(m, x, q)"),
        ("m = Net()", "m.train(False)", "quantize_body(m, x, q)"),
        ("quantize_body(Net().eval(), x, q)",),
        # Reading a part's plain attribute changes nothing.
        ("m = Net().eval()", "print(m.training)", "quantize_body(m, x, q)"),
    ],
)
def test_callers_that_switch_the_whole_model_to_eval_vouch_for_its_part(lines):
    assert ql201(main(*lines)) == []


@pytest.mark.parametrize(
    "lines",
    [
        ("m = Net()", "quantize_body(m, x, q)"),
        ("m = Net().eval()", "m.train()", "quantize_body(m, x, q)"),
        ("m = Net()", "m.train(True)", "quantize_body(m, x, q)"),
        ("m = Net().eval()", "m.model.train()", "quantize_body(m, x, q)"),
        ("m = Net().eval()", "m.model = Body()", "quantize_body(m, x, q)"),
        ("m = Net().eval()", "setattr(m, 'model', Body())", "quantize_body(m, x, q)"),
        ("m = Net().eval()", "m.add_module('model', Body())", "quantize_body(m, x, q)"),
        ("m = Net().eval()", "m.apply(unfreeze)", "quantize_body(m, x, q)"),
        ("m = Net().eval()", "unfreeze(m.model)", "quantize_body(m, x, q)"),
        # The body is read as a whole: a part given before the switch counts as well.
        ("m = Net()", "m.model = Body()", "m.eval()", "quantize_body(m, x, q)"),
        # The switch must be of the object passed, not of a model it was built from.
        ("m = Net().eval()", "n = Wrap(m)", "quantize_body(n, x, q)"),
        # One caller that passes a train-mode model is enough.
        ("quantize_body(Net().eval(), x, q)", "quantize_body(Net(), x, q)"),
    ],
)
def test_a_caller_that_leaves_or_puts_a_part_in_train_mode_keeps_the_finding(lines):
    assert ql201(main(*lines)) == [CAPTURE_ROW]


def test_a_module_level_caller_is_read_the_same_way():
    assert ql201("\n\nnet = Net().eval()\nquantize_body(net, X, Q)\n") == []
    assert ql201("\n\nnet = Net().eval()\nnet.model.train()\nquantize_body(net, X, Q)\n") == [CAPTURE_ROW]


def test_an_item_of_an_eval_model_is_not_followed():
    head = HEAD.replace("export(model.model, (x,))", "export(model[0], (x,))")
    assert ql201(main("m = nn.Sequential(Body()).eval()", "quantize_body(m, x, q)"), head) == [CAPTURE_ROW]


def test_callers_in_other_modules_switch_the_model_to_eval(tmp_path):
    caller = (
        "from pkg.helper import quantize_body, Net\n\n\n"
        "def setup(x, q):\n    model = Net()\n    model = model.eval().to('cpu')\n"
        "    return quantize_body(model, x, q)\n"
    )
    root = package_repository(tmp_path / "repo", helper=HEAD, run=caller)
    found = check_file(root / "pkg" / "helper.py", select=("QL201",)).diagnostics
    assert [d.range.start.row for d in found] == []
    # The same caller giving the model a new body after the switch: reported.
    (root / "pkg" / "run.py").write_text(caller.replace("    return", "    model.model = Net()\n    return"))
    found = check_file(root / "pkg" / "helper.py", select=("QL201",)).diagnostics
    assert [d.range.start.row for d in found] == [CAPTURE_ROW]

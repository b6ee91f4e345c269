"""QL201/QL202: a wrapper evaled through the one field holding a module (`evaled_fields`):
`w = Wrapper(Net()); w.model.eval()`, or `w = Built(); w.model.eval()` with `self.model =
Net()` in `__init__`, then `w` captured (stop 61's carried "`w.model.eval()` on a wrapper's
field").

`Module.eval` of the field switches every module in it, and the wrapper's own flag changes
nothing when it holds nothing else that depends on the mode: the capture of `w` is in eval
mode, as after `w.eval()`. `part_modes` kept the switch as a part of a train-mode whole, so
PTQ reported it. Still reported: a wrapper with a dropout of its own, reading
`self.training`, holding a second module, storing the field under a branch or building a
dropout beside the built field; another field evaled, a part of the field, the field given a
new module after the eval or switched back, the whole switched back, an eval in a branch. A
QAT capture of such a wrapper is reported in eval mode (QL202), as it was.
"""

from __future__ import annotations

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(x)


class Wrapper(nn.Module):
    def __init__(self, model, scale=1.0):
        super().__init__()
        self.model = model
        self.scale = scale

    def forward(self, x):
        return self.model(x) * self.scale


class Built(nn.Module):
    def __init__(self, width=3):
        super().__init__()
        self.model = Net()
        self.head = nn.Linear(width, width)

    def forward(self, x):
        return self.head(self.model(x))


class WithDropout(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.model(x))


class Reads(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x) * (2 if self.training else 1)


class Pair(nn.Module):
    def __init__(self, first, second):
        super().__init__()
        self.first = first
        self.second = second

    def forward(self, x):
        return self.second(self.first(x))


class Branchy(nn.Module):
    def __init__(self, model, keep):
        super().__init__()
        if keep:
            self.model = model

    def forward(self, x):
        return self.model(x)


class BuiltDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Net()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.model(x))


def main(q, x, flag):
"""
CAPTURE = "prepare_pt2e(export(w, (x,)).module(), q)"


def _rows(body: str, tmp_path, select=("QL201",)) -> list[int]:
    src = HEAD + "".join(f"    {line}\n" for line in body.strip().splitlines())
    return [d.range.start.row for d in lint(src, path=str(tmp_path / "m.py"), select=select)]


def _row(body: str) -> int:
    return len(HEAD.splitlines()) + len(body.strip().splitlines())


QUIET = {
    "the field given by the constructor": "w = Wrapper(Net())\nw.model.eval()",
    "given by keyword, with a constant": "w = Wrapper(model=Net(), scale=2.0)\nw.model.eval()",
    "with training off": "w = Wrapper(Net())\nw.model.train(False)",
    "the field built in __init__": "w = Built()\nw.model.eval()",
    "built, with a width": "w = Built(4)\nw.model.eval()",
    "the field captured": "w = Built()\nw.model.eval()\nw = w.model",
}


def test_a_wrapper_evaled_through_its_only_field_is_in_eval_mode(tmp_path):
    for why, body in QUIET.items():
        assert _rows(f"{body}\n{CAPTURE}", tmp_path) == [], why


LOUD = {
    "no eval": "w = Wrapper(Net())",
    "a dropout of its own": "w = WithDropout(Net())\nw.model.eval()",
    "reads self.training": "w = Reads(Net())\nw.model.eval()",
    "a second module": "w = Pair(Net(), Net())\nw.first.eval()",
    "the field stored under a branch": "w = Branchy(Net(), True)\nw.model.eval()",
    "a dropout built beside the field": "w = BuiltDropout()\nw.model.eval()",
    "another field evaled": "w = Built()\nw.head.eval()",
    "a part of the field evaled": "w = Wrapper(Net())\nw.model.bn.eval()",
    "the field given a new module": "w = Wrapper(Net())\nw.model.eval()\nw.model = Net()",
    "the field switched back": "w = Wrapper(Net())\nw.model.eval()\nw.model.train()",
    "the whole switched back": "w = Wrapper(Net())\nw.model.eval()\nw.train()",
    "an eval in a branch": "w = Wrapper(Net())\nif flag:\n    w.model.eval()",
}


def test_look_alikes_keep_the_report(tmp_path):
    for why, body in LOUD.items():
        full = f"{body}\n{CAPTURE}"
        assert _rows(full, tmp_path) == [_row(full)], why


def test_a_qat_capture_of_such_a_wrapper_is_in_eval_mode(tmp_path):
    body = f"w = Wrapper(Net())\nw.model.eval()\n{CAPTURE.replace('prepare_pt2e', 'prepare_qat_pt2e')}"
    found = lint(
        HEAD + "".join(f"    {line}\n" for line in body.splitlines()), path=str(tmp_path / "q.py"), select=("QL202",)
    )
    assert [d.range.start.row for d in found] == [_row(body)]
    assert "w.model.eval()" in found[0].message

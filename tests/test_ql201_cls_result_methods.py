"""Calls on a `cls(...)` result that the model flow leaves unread (`cls_result_methods`; issue
13: stop 66's imported bases cost ExecuTorch +0.49% cold instructions, all of it
`StaticAttention.from_attention_mha`'s `instance.load_weights_from_attention_mha(other)` and its
caller's `static_attn.adopt_hf_rope()`, `static_attn.linear_to_conv2d()`).

A call made for its effect alone (a statement of its own), of a method that names no mode switch,
capture or PT2E step and nothing of the project a walk would read on, is not read: its receiver
and arguments stay as they were, as a reading would leave them. Loud where the walk needs the
method (it captures its instance, or its value is used); quiet where a method switches the mode
through another body (a method on `self`, a class or function of the module).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import alone_and_in_run, lint, package_repository
from tests.test_model_flow_bare_calls import _analysed, _context, interpreted

NET = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))

    @classmethod
    def create(cls, other):
        net = cls()
        net.load_from(other)
        return net

    def load_from(self, other: "Net"):
        self.conv.weight.data.copy_(other.conv.weight)

    def widen(self):
        self.conv = nn.Conv2d(3, 3, 1)

    def freeze(self):
        self.eval()

    def finish(self):
        self._settle()

    def _settle(self):
        self.eval()

    def settle_with_tool(self):
        Tool().settle(self)

    def settle_with_function(self):
        settle(self)

    def renamed(self):
        return self


class Tool:
    def settle(self, model):
        model.eval()


def settle(model):
    model.eval()
"""

CALLER = """
def run(other, quantizer, x):
    {body}
    ep = torch.export.export(model, (x,)).module()
    return prepare_pt2e(ep, quantizer)
"""


def _source(body: str) -> str:
    return NET + CALLER.format(body=body)


def _capture_row(src: str) -> int:
    return src.splitlines().index("    ep = torch.export.export(model, (x,)).module()") + 1


def test_calls_for_an_effect_the_walk_does_not_follow_are_not_read(monkeypatch):
    # `load_from` (called in `create`) and `widen` copy weights and swap a layer: nothing a
    # capture asks about. Read eagerly before (stop 66); the capture is as loud as it was.
    body = "model = Net.create(other)\n    model.widen()"
    analysed = _analysed(monkeypatch, _context(_source(body)))
    assert "create" in analysed and "run" in analysed
    assert "load_from" not in analysed and "widen" not in analysed


def test_the_model_they_leave_is_still_reported():
    body = "model = Net.create(other)\n    model.widen()"
    src = "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\nimport torch\nfrom torch import nn\n"
    src += _source(body)
    found = [(d.code, d.range.start.row) for d in lint(src, select=("QL201", "QL202"))]
    assert found == [("QL201", _capture_row(src))]


SWITCHED = {
    "switch-in-the-method": "model.freeze()",
    "switch-in-another-method-on-self": "model.finish()",
    "switch-by-a-class-of-the-module": "model.settle_with_tool()",
    "switch-by-a-function-of-the-module": "model.settle_with_function()",
}


@pytest.mark.parametrize("call", SWITCHED.values(), ids=SWITCHED.keys())
def test_methods_switching_the_mode_through_other_bodies_are_read(call):
    # Each evals the model before the capture: quiet (a method left unread would leave it in
    # train mode, a false alarm).
    src = "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\nimport torch\nfrom torch import nn\n"
    src += _source(f"model = Net.create(other)\n    {call}")
    assert lint(src, select=("QL201", "QL202")) == []


def test_a_call_whose_value_is_used_is_read(monkeypatch):
    # What `renamed` returns is bound: read, as before. Called as a statement of its own: not.
    used = _analysed(monkeypatch, _context(_source("model = Net.create(other)\n    same = model.renamed()")))
    assert "renamed" in used
    alone = _analysed(monkeypatch, _context(_source("model = Net.create(other)\n    model.renamed()")))
    assert "renamed" not in alone


BASES = """\
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.proj(x))
"""

STATIC = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg.bases import Attention


class StaticAttention(Attention):
    @classmethod
    def from_attention(cls, other):
        instance = cls()
        instance.load_weights(other)
        return instance

    def load_weights(self, other):
        self.proj.load_state_dict(other.proj.state_dict())

    def quantize(self, quantizer, x):
        ep = torch.export.export(self, (x,)).module()
        return prepare_pt2e(ep, quantizer)


def convert(other, quantizer, x):
    static = StaticAttention.from_attention(other)
    static.load_weights(other)
    ep = torch.export.export(static, (x,)).module()
    return prepare_pt2e(ep, quantizer)


def convert_in_method(other, quantizer, x):
    static = StaticAttention.from_attention(other)
    static.quantize(quantizer, x)
"""


def test_the_stop_66_shape_through_an_imported_base(tmp_path: Path, monkeypatch):
    # ExecuTorch's shape: an nn base imported from another module, a classmethod's `cls(...)`
    # loading weights, the caller loading again: not read, the capture of the result loud; and
    # a method of the result that captures it (read: it names a capture), loud there.
    seen = interpreted(monkeypatch)
    root = package_repository(tmp_path / "repo", bases=BASES, static=STATIC)
    found = alone_and_in_run(root / "pkg" / "static.py", root, ("QL201", "QL202"), tmp_path / "cache")
    lines = STATIC.splitlines()
    rows = [i + 1 for i, line in enumerate(lines) if "torch.export.export(" in line]
    assert [(code, at) for code, at, _ in found] == [("QL201", rows[0]), ("QL201", rows[1])]
    assert "in `StaticAttention`, the mode changes Dropout" in found[1][2]
    assert "from_attention" in seen and "quantize" in seen and "load_weights" not in seen


# Stop 68 (clsres67's gap): `self` reached in ways no word of the text names. Each such method
# is read now, as any other; the walk then answers as it does for every read method (a form
# it does not follow as a switch leaves the mode as it was either way, which the last test
# pins: the gate answers as a reading does).
REFLECTIVE = {
    "setattr": 'setattr(self, "training", False)',
    "setattr-on-parts": 'for m in self.modules():\n            setattr(m, "training", False)',
    "dict": 'self.__dict__["training"] = False',
    "getattr-called": 'getattr(self, "ev" + "al")()',
    "getattr-bound": "switch = getattr(self, self.mode_name)\n        switch()",
    "base-method-on-self": "nn.Module.eval(self)",
    "class-method-on-self": "type(self).eval(self)",
    "object-setattr": 'object.__setattr__(self, "training", False)',
    "vars": 'vars(self)["training"] = False',
    "aliased": "me = self\n        me.training = False",
    "in-a-container": "for m in [self]:\n            m.training = False",
    "apply": "self.apply(_off)",
}

PLAIN = {
    "attribute": "self.conv.weight.data.zero_()",
    "attribute-and-return": "self.scale = 2.0\n        return self",
    "annotated-local": 'other: "Net" = self.conv\n        del other',
}


def _with_method(body: str) -> str:
    net = NET.replace("    def renamed(self):", f"    def quiet_down(self):\n        {body}\n\n    def renamed(self):")
    net += "\n\ndef _off(m):\n    m.training = False\n"
    return net + CALLER.format(body="model = Net.create(other)\n    model.quiet_down()")


@pytest.mark.parametrize("body", REFLECTIVE.values(), ids=REFLECTIVE.keys())
def test_methods_reaching_self_reflectively_are_read(monkeypatch, body):
    assert "quiet_down" in _analysed(monkeypatch, _context(_with_method(body)))


@pytest.mark.parametrize("body", PLAIN.values(), ids=PLAIN.keys())
def test_methods_reaching_self_by_its_attributes_alone_are_not(monkeypatch, body):
    assert "quiet_down" not in _analysed(monkeypatch, _context(_with_method(body)))


@pytest.mark.parametrize("body", [*REFLECTIVE.values(), *PLAIN.values(), "self.eval()", "self.train(False)"])
def test_the_gate_answers_as_a_reading_does(monkeypatch, body):
    # Every method read (the gate off) gives the same findings as the gate: quiet where the
    # walk follows the switch (`self.eval()`, `self.train(False)`, and since stop 69
    # `nn.Module.eval(self)`: `reflective_switches`; since stop 70 every module's flag set
    # in a loop over `self.modules()`: `looped_switches`), loud where it follows none.
    from qlint.analysis.flow import instance_methods

    src = "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\nimport torch\nfrom torch import nn\n"
    src += _with_method(body)
    gated = [(d.code, d.range.start.row) for d in lint(src, select=("QL201", "QL202"))]
    monkeypatch.setattr(instance_methods, "left_unread", lambda *args: False)
    assert [(d.code, d.range.start.row) for d in lint(src, select=("QL201", "QL202"))] == gated
    followed = ("self.eval()", "self.train(False)", "nn.Module.eval(self)", REFLECTIVE["setattr-on-parts"])
    assert bool(gated) is (body not in followed)

"""QL201: a wrapper whose `__init__` evals every part it stores from its parameters
(`self.encoder = encoder.eval()`, CleverKeys-ML's `EncoderWrapper`) and holds nothing else.
Its own `training` flag stays True, but nothing reads it: every mode-dependent module it
holds is in eval mode, so a fresh instance is captured as an evaled one.

Quiet for that shape, given a fresh train-mode model, a part of a loaded one, or built from
another module. Loud when one stored part is not evaled, when a part is built in the class,
when a method or `__init__` switches back to train, when the class reads `training`, for a
subclass that adds a part, when the wrapper is trained after its build, and for a QAT
capture (QL202: its content is in eval mode).
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e
from loaders import load


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.bn(x))


class Wrapper(nn.Module):
    def __init__(self, encoder, decoder=None):
        super().__init__()
        INIT

    def forward(self, x):
        FORWARD
        return self.encoder(x)
EXTRA

def main(x, q):
    BUILD
    TRAIN
    ep = torch.export.export(wrapper, (x,)).module()
    return prepare_pt2e(ep, q)
"""
CAPTURE = "ep = torch.export.export(wrapper, (x,)).module()"
EVALED = "self.encoder = encoder.eval()"
FRESH = "wrapper = Wrapper(Net())"
LOADED = "wrapper = Wrapper(load().encoder)"


def source(init=EVALED, forward="pass", extra="", build=FRESH, train="pass") -> str:
    return (
        HEAD.replace("INIT", init)
        .replace("FORWARD", forward)
        .replace("EXTRA", extra)
        .replace("BUILD", build)
        .replace("TRAIN", train)
    )


def reported(src: str, rule: str = "QL201") -> list[str]:
    lines = src.splitlines()
    return [lines[d.range.start.row - 1].strip() for d in lint(src, select=(rule,))]


@pytest.mark.parametrize("build", [FRESH, LOADED, "wrapper = Wrapper(Net(), decoder=Net())"])
@pytest.mark.parametrize(
    "init",
    [
        EVALED,
        # Stored, then evaled: the same object, and nothing in between can switch it back.
        "self.encoder = encoder\n        encoder.eval()",
        "encoder.eval()\n        self.encoder = encoder",
        "self.encoder = encoder\n        self.encoder.eval()",
        # Both parameters stored, both evaled; constants beside them are no parts.
        "self.encoder = encoder.eval()\n        self.decoder = decoder\n        decoder.eval()\n        self.n = 3",
        '"""Holds the encoder."""\n        self.encoder = encoder.eval()',
    ],
)
def test_a_wrapper_that_evals_every_part_it_stores_is_quiet(init, build):
    assert reported(source(init, build=build)) == []


def test_forward_that_builds_a_module_on_each_call_is_quiet():
    # A module built in `forward` is in train mode whatever the wrapper's mode: no difference.
    assert reported(source(forward="x = nn.Identity()(x)")) == []


def test_the_class_from_another_module_is_read_from_its_summary():
    wrapper = HEAD.split("class Wrapper")[1].split("\ndef main")[0]
    models = "import torch\nfrom torch import nn\n\n\nclass Wrapper" + wrapper.replace("INIT", EVALED).replace(
        "FORWARD", "pass"
    ).replace("EXTRA", "")
    main = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
from models import Wrapper


def main(x, q):
    wrapper = Wrapper(nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)))
    TAIL
    ep = torch.export.export(wrapper, (x,)).module()
    return prepare_pt2e(ep, q)
"""
    quiet = lint(main.replace("TAIL", "pass"), select=("QL201",), overlay={"models.py": models})
    assert quiet == []
    loud = lint(main.replace("TAIL", "wrapper.train()"), select=("QL201",), overlay={"models.py": models})
    assert len(loud) == 1


OTHER_METHOD = "\n    def unfreeze(self):\n        BODY\n"


@pytest.mark.parametrize(
    ("init", "forward", "extra"),
    [
        # One of two stored parts is not evaled.
        ("self.encoder = encoder.eval()\n        self.decoder = decoder", "pass", ""),
        ("self.encoder = encoder.eval()\n        self.decoder = decoder\n        encoder.eval()", "pass", ""),
        # Stored without an eval.
        ("self.encoder = encoder", "pass", ""),
        # Evaled, then switched back in `__init__` or by a method.
        ("self.encoder = encoder.eval()\n        self.encoder.train()", "pass", ""),
        ("self.encoder = encoder.eval()\n        self.train()", "pass", ""),
        (EVALED, "pass", OTHER_METHOD.replace("BODY", "self.encoder.train()")),
        (EVALED, "pass", OTHER_METHOD.replace("BODY", "self.encoder.training = True")),
        (EVALED, "pass", OTHER_METHOD.replace("BODY", "self.head = nn.Dropout(0.2)")),
        # A part of its own beside the evaled one.
        ("self.encoder = encoder.eval()\n        self.drop = nn.Dropout(0.1)", "pass", ""),
        ("self.encoder = encoder.eval()\n        self.norm = nn.BatchNorm1d(4)", "pass", ""),
        ("self.encoder = encoder.eval()\n        self.net = Net()", "pass", ""),
        # The store comes after a rebinding of the attribute, or under a branch.
        ("self.encoder = encoder.eval()\n        self.encoder = decoder", "pass", ""),
        ("if decoder is None:\n            self.encoder = encoder.eval()", "pass", ""),
        # Reads the flag its own `.eval()` never cleared.
        (EVALED, "x = nn.functional.dropout(x, 0.1, self.training)", ""),
        # Hands `self` to code that may set parts.
        (EVALED, "pass", OTHER_METHOD.replace("BODY", "setattr(self, 'head', nn.Dropout(0.2))")),
    ],
)
def test_a_wrapper_with_a_part_left_in_train_mode_is_reported(init, forward, extra):
    assert reported(source(init, forward, extra)) == [CAPTURE]


def test_a_subclass_that_adds_a_part_is_reported():
    sub = (
        "\n\nclass Sub(Wrapper):\n    def __init__(self, encoder):\n        super().__init__(encoder)\n"
        "        self.drop = nn.Dropout(0.1)\n"
    )
    assert reported(source(extra=sub, build="wrapper = Sub(Net())")) == [CAPTURE]


def test_a_wrapper_trained_after_its_build_is_reported():
    assert reported(source(train="wrapper.train()")) == [CAPTURE]


def test_a_qat_capture_of_the_evaled_wrapper_is_reported():
    src = source().replace("return prepare_pt2e(ep, q)", "return prepare_qat_pt2e(ep, q)")
    assert reported(src, "QL202") == [CAPTURE]


def test_a_class_building_a_part_in_init_is_not_walked_whole(monkeypatch):
    # Asked of every `nn.Module` subclass a summary lists (about 1,000 on ExecuTorch), nearly
    # all of which build a part in `__init__`: their own statements answer, before the walks
    # of the whole class that the wrapper's shape needs.
    import ast

    from qlint.analysis.flow import evaled_parts

    walked = []
    real = evaled_parts.content_syntax
    monkeypatch.setattr(evaled_parts, "content_syntax", lambda node: walked.append(node.name) or real(node))
    builds = "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    builds += "        self.bn = nn.BatchNorm1d(4)\n"
    wraps = "class Wrapper(nn.Module):\n    def __init__(self, encoder):\n        super().__init__()\n"
    wraps += "        self.encoder = encoder.eval()\n"
    for source, expected in ((builds, False), (wraps, True)):
        (cls,) = ast.parse(source).body
        assert evaled_parts.init_evals_parts(cls) is expected
    assert walked == ["Wrapper"]

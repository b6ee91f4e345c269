"""QL201: a wrapper whose `__init__` evals every part it stores from its parameters
(`self.encoder = encoder.eval()`, CleverKeys-ML's `EncoderWrapper`) and holds nothing else.
Its own `training` flag stays True, but nothing reads it: every mode-dependent module it
holds is in eval mode, so a fresh instance is captured as an evaled one.

Quiet for that shape, given a fresh train-mode model, a part of a loaded one, or built from
another module. Loud when one stored part is not evaled, when a part is built in the class,
when a method or `__init__` switches back to train, when the class reads `training`, for a
subclass that adds a part, when the wrapper is trained after its build, and for a QAT
capture (QL202: its content is in eval mode).

A child built and evaled in one expression (`self.net = resnet18().eval()`) is such a part
too: quiet while the wrapper is not switched; loud when it is trained (or its child is), when
the child is replaced after its eval, beside the wrapper's own dropout or flag read, and when
what a parameter handed into the child was passed is trained after the construction.
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
BOTH = "wrapper = Wrapper(Net(), Net())"


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
    ("init", "forward", "extra", "build"),
    [
        # One of two stored parts is not evaled (the call passes both: `encoder.eval()` evals
        # the very module handed, so `Wrapper(Net())` holding it alone is in eval mode).
        ("self.encoder = encoder.eval()\n        self.decoder = decoder", "pass", "", BOTH),
        ("self.encoder = encoder.eval()\n        self.decoder = decoder\n        encoder.eval()", "pass", "", BOTH),
        # Stored without an eval.
        ("self.encoder = encoder", "pass", "", FRESH),
        # Evaled, then switched back in `__init__` or by a method.
        ("self.encoder = encoder.eval()\n        self.encoder.train()", "pass", "", FRESH),
        ("self.encoder = encoder.eval()\n        self.train()", "pass", "", FRESH),
        (EVALED, "pass", OTHER_METHOD.replace("BODY", "self.encoder.train()"), FRESH),
        (EVALED, "pass", OTHER_METHOD.replace("BODY", "self.encoder.training = True"), FRESH),
        (EVALED, "pass", OTHER_METHOD.replace("BODY", "self.head = nn.Dropout(0.2)"), FRESH),
        # A part of its own beside the evaled one.
        ("self.encoder = encoder.eval()\n        self.drop = nn.Dropout(0.1)", "pass", "", FRESH),
        ("self.encoder = encoder.eval()\n        self.norm = nn.BatchNorm1d(4)", "pass", "", FRESH),
        ("self.encoder = encoder.eval()\n        self.net = Net()", "pass", "", FRESH),
        # The store comes after a rebinding of the attribute, or under a branch.
        ("self.encoder = encoder.eval()\n        self.encoder = decoder", "pass", "", BOTH),
        ("if decoder is None:\n            self.encoder = encoder.eval()", "pass", "", FRESH),
        # Reads the flag its own `.eval()` never cleared.
        (EVALED, "x = nn.functional.dropout(x, 0.1, self.training)", "", FRESH),
        # Hands `self` to code that may set parts.
        (EVALED, "pass", OTHER_METHOD.replace("BODY", "setattr(self, 'head', nn.Dropout(0.2))"), FRESH),
    ],
)
def test_a_wrapper_with_a_part_left_in_train_mode_is_reported(init, forward, extra, build):
    assert reported(source(init, forward, extra, build)) == [CAPTURE]


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


# A child built and evaled in one expression (`self.net = resnet18().eval()`, issue 14 item 2,
# met by lane fresh30): the same shape, the child the class's own.
CHILD = (
    HEAD.split("class Wrapper")[0].replace("from loaders import load", "from torchvision.models import resnet18")
    + """class Holder(nn.Module):
    def __init__(self, backbone=None):
        super().__init__()
        INIT

    def forward(self, x):
        FORWARD
        return self.net(x)
EXTRA

def main(x, q, backbone):
    BUILD
    TRAIN
    ep = torch.export.export(wrapper, (x,)).module()
    return prepare_pt2e(ep, q)
"""
)
BUILT = "self.net = Net().eval()"


def child(init=BUILT, forward="pass", extra="", build="wrapper = Holder()", train="pass") -> str:
    return (
        CHILD.replace("INIT", init)
        .replace("FORWARD", forward)
        .replace("EXTRA", extra)
        .replace("BUILD", build)
        .replace("TRAIN", train)
    )


@pytest.mark.parametrize(
    "init",
    [
        BUILT,
        "self.net = resnet18().eval()",
        'self.net = Net().to("cpu").eval()',
        "self.net = nn.Sequential(Net(), nn.Dropout(0.5)).eval()",
        # Beside a stored parameter evaled, and a second child built so.
        "self.net = Net().eval()\n        self.backbone = backbone.eval()\n        self.head = nn.Dropout(0.1).eval()",
    ],
)
def test_a_wrapper_holding_children_built_and_evaled_is_quiet(init):
    assert reported(child(init)) == []


def test_a_parameter_handed_into_the_evaled_child_is_quiet_while_nothing_switches_it():
    src = child("self.net = nn.Sequential(backbone).eval()", build="enc = Net()\n    wrapper = Holder(enc)")
    assert reported(src) == []


@pytest.mark.parametrize(
    ("init", "forward", "extra", "train"),
    [
        # Built without `.eval()`: the fresh child is in train mode.
        ("self.net = Net()", "pass", "", "pass"),
        # The wrapper switched to train after construction: `Module.train` reaches the child.
        (BUILT, "pass", "", "wrapper.train()"),
        (BUILT, "pass", "", "wrapper.net.train()"),
        # The child replaced after its eval: in `__init__`, by a method, by the caller.
        (f"{BUILT}\n        self.net = Net()", "pass", "", "pass"),
        (BUILT, "pass", OTHER_METHOD.replace("BODY", "self.net = Net()"), "pass"),
        (BUILT, "pass", "", "wrapper.net = Net()"),
        # The wrapper's own mode-dependent content: a dropout of its own, a read of its flag.
        (f"{BUILT}\n        self.drop = nn.Dropout(0.1)", "pass", "", "pass"),
        (BUILT, "x = nn.functional.dropout(x, 0.1, self.training)", "", "pass"),
        # Built by the wrapper's own method: it may give the wrapper parts.
        ("self.net = self.make().eval()", "pass", "\n    def make(self):\n        return Net()\n", "pass"),
        ("self.net = Net(self).eval()", "pass", "", "pass"),
    ],
)
def test_a_wrapper_whose_child_may_run_in_train_mode_is_reported(init, forward, extra, train):
    assert reported(child(init, forward, extra, train=train)) == [CAPTURE]


def test_a_parameter_handed_into_the_evaled_child_and_trained_after_is_reported():
    build = "enc = Net()\n    wrapper = Holder(enc)"
    assert reported(child("self.net = nn.Sequential(backbone).eval()", build=build, train="enc.train()")) == [CAPTURE]


def test_a_qat_capture_of_the_wrapper_of_evaled_children_is_reported():
    src = child().replace("return prepare_pt2e(ep, q)", "return prepare_qat_pt2e(ep, q)")
    assert reported(src, "QL202") == [CAPTURE]


@pytest.mark.parametrize(
    "init",
    [
        "self.net = nn.Dropout(0.5).eval()",
        "self.net = nn.Dropout(0.5)\n        self.net.train(False)",  # evaled by a later statement
    ],
)
def test_the_wrapper_of_evaled_children_from_another_module_is_read_from_its_summary(init):
    holder = "class Holder" + CHILD.split("class Holder")[1].split("\ndef main")[0]
    models = "import torch\nfrom torch import nn\n\n\n" + holder.replace("INIT", init)
    main = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
from models import Holder


def main(x, q):
    wrapper = Holder()
    TAIL
    ep = torch.export.export(wrapper, (x,)).module()
    return prepare_pt2e(ep, q)
"""
    models = models.replace("FORWARD", "pass").replace("EXTRA", "")
    quiet = lint(main.replace("TAIL", "pass"), select=("QL201",), overlay={"models.py": models})
    assert quiet == []
    loud = lint(main.replace("TAIL", "wrapper.train()"), select=("QL201",), overlay={"models.py": models})
    assert len(loud) == 1


# The child built by one statement and evaled by a later one of `__init__`'s own (stop 46's note,
# item 5): the same object, switched before anything can reach it. Quiet as the one-expression
# form is; loud where the eval may not run, is undone, or leaves something in train mode.
@pytest.mark.parametrize(
    "init",
    [
        "self.net = Net()\n        self.net.eval()",
        "self.net = Net()\n        self.net.train(False)",
        "self.net = Net()\n        self.net.train(mode=False)",
        "self.net = Net()\n        self.net.requires_grad_(False).eval()",
        'self.net = resnet18()\n        self.net.eval().to("cpu")',
        # Beside another child and a constant, each evaled after its store.
        "self.net = Net()\n        self.head = nn.Dropout(0.1)\n        self.n = 3\n        self.net.eval()\n"
        "        self.head.train(False)",
        # A parameter stored, and evaled by a chain of its own.
        "self.net = Net()\n        self.backbone = backbone\n        self.net.eval()\n"
        "        backbone.requires_grad_(False).eval()",
    ],
)
def test_a_child_built_then_evaled_by_a_later_statement_is_quiet(init):
    assert reported(child(init)) == []


def test_a_parameter_handed_into_a_child_evaled_later_is_quiet_while_nothing_switches_it():
    src = child(
        "self.net = nn.Sequential(backbone)\n        self.net.eval()", build="enc = Net()\n    wrapper = Holder(enc)"
    )
    assert reported(src) == []


TWO = "self.net = Net()\n        self.net.eval()"


@pytest.mark.parametrize(
    ("init", "forward", "extra", "train"),
    [
        # The eval under a condition, before the store, or of something else.
        ("self.net = Net()\n        if backbone is None:\n            self.net.eval()", "pass", "", "pass"),
        ("self.net = Net()\n        backbone.eval()", "pass", "", "pass"),
        ("self.net = Net()\n        self.other = Net()\n        self.net.eval()", "pass", "", "pass"),
        # Not a switch to eval: to train, to a mode not known, or undone in the same chain.
        ("self.net = Net()\n        self.net.train(True)", "pass", "", "pass"),
        ("self.net = Net()\n        self.net.train(backbone is None)", "pass", "", "pass"),
        ("self.net = Net()\n        self.net.eval().train()", "pass", "", "pass"),
        ("self.net = Net()\n        self.net.requires_grad_(False)", "pass", "", "pass"),
        # A chain calling something on the way: it may reach the wrapper.
        (
            "self.net = Net()\n        self.net.to(self.pick()).eval()",
            "pass",
            "\n    def pick(self):\n        pass\n",
            "pass",
        ),
        # Switched back after the eval: in `__init__`, by a method, by the caller.
        (f"{TWO}\n        self.net.train()", "pass", "", "pass"),
        (
            "self.net = Net()\n        self.net.train(False)",
            "pass",
            OTHER_METHOD.replace("BODY", "self.net.train()"),
            "pass",
        ),
        (TWO, "pass", "", "wrapper.train()"),
        (TWO, "pass", "", "wrapper.net.train()"),
        # Rebound after the eval: in `__init__`, by a method, by the caller.
        (f"{TWO}\n        self.net = Net()", "pass", "", "pass"),
        (TWO, "pass", OTHER_METHOD.replace("BODY", "self.net = Net()"), "pass"),
        (TWO, "pass", "", "wrapper.net = Net()"),
        # The wrapper's own mode-dependent content.
        (f"{TWO}\n        self.drop = nn.Dropout(0.1)", "pass", "", "pass"),
        (TWO, "x = nn.functional.dropout(x, 0.1, self.training)", "", "pass"),
        # Built by the wrapper's own method.
        (
            "self.net = self.make()\n        self.net.eval()",
            "pass",
            "\n    def make(self):\n        return Net()\n",
            "pass",
        ),
    ],
)
def test_a_child_evaled_by_a_later_statement_that_may_run_in_train_mode_is_reported(init, forward, extra, train):
    assert reported(child(init, forward, extra, train=train)) == [CAPTURE]


def test_a_parameter_handed_into_a_child_evaled_later_and_trained_after_is_reported():
    build = "enc = Net()\n    wrapper = Holder(enc)"
    init = "self.net = nn.Sequential(backbone)\n        self.net.eval()"
    assert reported(child(init, build=build, train="enc.train()")) == [CAPTURE]


def test_a_qat_capture_of_a_wrapper_whose_child_is_evaled_later_is_reported():
    src = child(TWO).replace("return prepare_pt2e(ep, q)", "return prepare_qat_pt2e(ep, q)")
    assert reported(src, "QL202") == [CAPTURE]


# A switch statement's arguments may build a device (`torch.device` runs nothing of the
# project's: `model_torch_nn.arguments_run_nothing`); a function of the project there may reach
# the part and switch it back before the cast.
@pytest.mark.parametrize(
    ("init", "expected"),
    [
        ('self.encoder = encoder.eval().to(torch.device("cpu"))', []),
        ("self.encoder = encoder\n        self.encoder.to(device=torch.device(0)).eval()", []),
        ("self.encoder = encoder.eval().to(pick_device())", [CAPTURE]),
        ("self.encoder = encoder.eval().to(torch.device(pick_device()))", [CAPTURE]),
    ],
)
def test_a_device_built_in_the_switch_statement(init, expected):
    assert reported(source(init)) == expected

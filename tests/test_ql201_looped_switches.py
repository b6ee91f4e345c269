"""QL201/QL202: modules switched one at a time (`looped_switches`, `loop_effects`): a loop over
`m.modules()` / `named_modules()` / `children()` whose body switches the loop's module, under an
`isinstance` test at most, and a function `m.apply(fn)` hands every module, written here or
called as a helper (`freeze_bn(m)`).

Every module, or every module of the classes that hold all of the model's mode-dependent
content, switched: the model is in that mode (a PTQ capture after `m.train()` and such a loop
evaling every batch norm and dropout is quiet). The modules of some classes only: those are
in that mode and the others keep the model's (a QAT capture after a batch-norm freeze is
reported, naming the batch norms; a PTQ capture after `m.train()` and a batch-norm freeze
still is, for its dropout). A test the analysis cannot read (a name filter), a loop that may
stop early, or a class outside torch.nn: not followed.
"""

from __future__ import annotations

import pytest

from tests.conftest import check_file, lint, package_repository
from tests.test_ql201_part_modes import HEAD

FIRST = HEAD.splitlines().index("    BODY") + 1  # the row of the body's first line

HELPERS = """

def freeze_bn(model):
    for mod in model.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.eval()


def to_eval(model):
    for _, mod in model.named_modules():
        if isinstance(mod, (nn.modules.batchnorm._BatchNorm, nn.Dropout)):
            mod.eval()


def bn_eval(mod):
    if isinstance(mod, nn.BatchNorm2d):
        mod.eval()


def dropout_train(mod):
    if isinstance(mod, nn.Dropout):
        mod.train()


def all_eval(mod):
    mod.eval()


def set_bn_eval(m):
    classname = m.__class__.__name__
    if classname.find("BatchNorm") != -1:
        m.eval()


def set_norm_eval(m):
    if "Norm" in type(m).__name__:
        m.eval()


def set_dropout_eval(m):
    if m.__class__.__name__ == "Dropout":
        m.eval()


def set_bn_eval_by_layer_name(m):
    name = str(m)
    if name.find("BatchNorm") != -1:
        m.eval()
"""


def messages(body: str, rule: str) -> list[str]:
    prepare = "prepare_pt2e" if rule == "QL201" else "prepare_qat_pt2e"
    src = HEAD.replace("BODY", body.replace("\n", "\n    ")).replace("PREPARE", prepare).replace("CAPTURED", "m")
    return [d.message for d in lint(src + HELPERS, select=(rule,))]


def loop(header: str, switch: str, test: str | None = None) -> str:
    if test is None:
        return f"{header}\n    {switch}"
    return f"{header}\n    if isinstance(mod, {test}):\n        {switch}"


@pytest.mark.parametrize(
    ("body", "words"),
    [
        # The classic QAT batch-norm freeze, before the capture: the batch norms are captured
        # in eval mode, so QAT neither updates nor folds them as training does.
        (
            "m = Net().train()\n" + loop("for mod in m.modules():", "mod.eval()", "nn.BatchNorm2d"),
            f"with every BatchNorm2d of `m` in eval mode after `mod.eval()` at line {FIRST + 3}",
        ),
        (
            "m = Net()\n"
            + loop("for name, mod in m.named_modules():", "mod.train(False)", "nn.modules.batchnorm._NormBase"),
            f"with every BatchNorm2d of `m` in eval mode after `mod.train(False)` at line {FIRST + 3}",
        ),
        (
            "m = Net().train()\nm.apply(bn_eval)",
            f"every BatchNorm2d of `m` in eval mode after `m.apply(bn_eval)` at line {FIRST + 1}",
        ),
        (
            "m = Net().train()\nfreeze_bn(m)",
            f"every BatchNorm2d of `m` in eval mode after `freeze_bn(m)` at line {FIRST + 1}",
        ),
        # With the usual freezing of its weights beside it.
        (
            "m = Net().train()\nfor mod in m.modules():\n    if isinstance(mod, nn.BatchNorm2d):\n        mod.eval()\n"
            "        mod.weight.requires_grad = False\n        mod.bias.requires_grad_(False)",
            f"every BatchNorm2d of `m` in eval mode after `mod.eval()` at line {FIRST + 3}",
        ),
        # The class-name idiom (`set_bn_eval`).
        (
            "m = Net().train()\nm.apply(set_bn_eval)",
            "every BatchNorm2d of `m` in eval mode after `m.apply(set_bn_eval)`",
        ),
        ("m = Net().train()\nm.encoder.apply(set_norm_eval)", "every BatchNorm2d of `m.encoder` in eval mode"),
        # Every module in eval mode: as `m.eval()`.
        (
            "m = Net().train()\n" + loop("for mod in m.modules():", "mod.eval()"),
            f"after `mod.eval()` at line {FIRST + 2}",
        ),
        ("m = Net().train()\nm.apply(all_eval)", f"after `m.apply(all_eval)` at line {FIRST + 1}"),
        # Every module of the classes that hold all the mode-dependent content: as `m.eval()`.
        ("m = Net().train()\nto_eval(m)", f"after `to_eval(m)` at line {FIRST + 1}"),
    ],
)
def test_qat_capture_with_modules_switched_to_eval(body, words):
    (message,) = messages(body, "QL202")
    assert "in eval mode" in message
    assert words in message


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (
            "m = Net().eval()\n" + loop("for mod in m.modules():", "mod.train()", "nn.Dropout"),
            f"with every Dropout of `m` in train mode after `mod.train()` at line {FIRST + 3}",
        ),
        (
            "m = Net().eval()\nm.apply(dropout_train)",
            "with every Dropout of `m` in train mode after `m.apply(dropout_train)`",
        ),
        # Every module of a part: that part's switch.
        (
            "m = Net().eval()\n" + loop("for mod in m.encoder.modules():", "mod.train()"),
            "with `m.encoder` in train mode after `mod.train()`",
        ),
        # Every child: the model's switch (no code of its own reads `self.training`).
        ("m = Net().eval()\n" + loop("for child in m.children():", "child.train()"), "after `child.train()`"),
        # A batch-norm freeze leaves the dropout in train mode.
        (
            "m = Net().train()\n" + loop("for mod in m.modules():", "mod.eval()", "nn.BatchNorm2d"),
            "after `Net().train()`",
        ),
        ("m = Net().train()\nfreeze_bn(m)", "after `Net().train()`"),
        ("m = Net().train()\nm.apply(bn_eval)", "after `Net().train()`"),
        ("m = Net().train()\nm.apply(set_bn_eval)", "after `Net().train()`"),
    ],
)
def test_ptq_capture_with_modules_in_train_mode(body, words):
    (message,) = messages(body, "QL201")
    assert "in train mode" in message
    assert words in message


@pytest.mark.parametrize(
    "body",
    [
        "m = Net().train()\n" + loop("for mod in m.modules():", "mod.eval()"),
        "m = Net().train()\n" + loop("for _, mod in m.named_modules():", "mod.eval()", "nn.Module"),
        "m = Net().train()\n" + loop("for mod in m.modules():", "mod.eval()", "(nn.BatchNorm2d, nn.Dropout)"),
        "m = Net().train()\n"
        + loop(
            "for mod in m.modules():", "mod.eval()", "(nn.modules.batchnorm._BatchNorm, nn.modules.dropout._DropoutNd)"
        ),
        "m = Net().train()\n" + loop("for child in m.children():", "child.eval()"),
        "m = Net().train()\nm.apply(all_eval)",
        "m = Net().train()\nto_eval(m)",
        "m = Net().train()\nm.apply(set_bn_eval)\nm.apply(set_dropout_eval)",
        # Dropout trained again where every module was evaled: only a part of another model.
        "m = Net().train()\nto_eval(m)\nother = Net().eval()\nother.apply(dropout_train)",
        # Switched for a part holding nothing mode-dependent.
        "m = Net().eval()\n" + loop("for mod in m.head.modules():", "mod.train()"),
        # Of classes the model holds none of.
        "m = Net().eval()\n" + loop("for mod in m.modules():", "mod.train()", "nn.InstanceNorm2d"),
        # A mode not known, as for the whole model.
        "m = Net().eval()\n" + loop("for mod in m.modules():", "mod.train(flag)", "nn.Dropout"),
        # Evaled again after the loop.
        "m = Net().eval()\n" + loop("for mod in m.modules():", "mod.train()", "nn.Dropout") + "\nm.eval()",
    ],
)
def test_ptq_quiet(body):
    assert messages(body, "QL201") == []


@pytest.mark.parametrize(
    "body",
    [
        # Trained again after the freeze, or frozen in another model.
        "m = Net().train()\nfreeze_bn(m)\nm.train()",
        "m = Net().train()\nother = Net().train()\nfreeze_bn(other)",
        "m = Net().train()\nother = Net().train()\nother.apply(bn_eval)",
        # Of classes the model holds none of.
        "m = Net().train()\n" + loop("for mod in m.modules():", "mod.eval()", "nn.InstanceNorm2d"),
        "m = Net().train()\n" + loop("for mod in m.head.modules():", "mod.eval()"),
        # Modules the analysis cannot name: a name filter, a test of a class outside torch.nn,
        # a loop that may stop before the last module.
        "m = Net().train()\nfor name, mod in m.named_modules():\n    if 'bn' in name:\n        mod.eval()",
        "m = Net().train()\n" + loop("for mod in m.modules():", "mod.eval()", "Encoder"),
        "m = Net().train()\nfor mod in m.modules():\n    mod.eval()\n    break",
        # Children of a class: the modules inside other children keep their mode.
        "m = Net().train()\n" + loop("for mod in m.children():", "mod.eval()", "nn.BatchNorm2d"),
        # Not before the capture: a function never called.
        "m = Net().train()\ndef freeze():\n    m.apply(bn_eval)",
        # A name test of something else than the module's class name.
        "m = Net().train()\nm.apply(set_bn_eval_by_layer_name)",
        # Not a mode switch.
        "m = Net().train()\n" + loop("for mod in m.modules():", "mod.requires_grad_(False)", "nn.BatchNorm2d"),
    ],
)
def test_qat_quiet(body):
    assert messages(body, "QL202") == []


def test_a_model_reading_its_own_flag_keeps_it_when_only_its_children_are_switched():
    src = HEAD.replace("return self.head(self.layers(self.encoder(x)))", "return self.head(x) if self.training else x")
    src = src.replace("BODY", "m = Net().train()\n    for child in m.children():\n        child.eval()")
    src = src.replace("PREPARE", "prepare_pt2e").replace("CAPTURED", "m")
    (message,) = [d.message for d in lint(src, select=("QL201",))]
    assert "after `Net().train()`" in message


QUANTIZE = """

class ConvBn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))


class EvalConvBn(ConvBn):
    def __init__(self):
        super().__init__()
        self.eval()


def quantize(model, q, x):
    SWITCH
    return prepare_pt2e(torch.export.export(model, (x,)).module(), q)


def caller(q, x):
    return quantize(BUILT, q, x)
"""


def helper_messages(switch: str, built: str) -> list[str]:
    src = HEAD.replace("BODY", "pass").replace("PREPARE", "prepare_pt2e").replace("CAPTURED", "m")
    src += QUANTIZE.replace("SWITCH", switch.replace("\n", "\n    ")).replace("BUILT", built)
    return [d.message for d in lint(src, select=("QL201",))]


TRAIN_DROPOUT = "for mod in model.modules():\n    if isinstance(mod, nn.Dropout):\n        mod.train()"


@pytest.mark.parametrize(
    ("switch", "words"),
    [
        (TRAIN_DROPOUT, "with every Dropout of `model` in train mode after `mod.train()`"),
        ("model.encoder.train()", "with `model.encoder` in train mode after `model.encoder.train()`"),
    ],
)
def test_a_helper_switching_parts_of_the_evaled_model_it_captures(switch, words):
    # The callers pass an eval-mode model: the helper's own switch puts parts back in train mode.
    (message,) = helper_messages(switch, "Net().eval()")
    assert "in train mode" in message
    assert words in message


@pytest.mark.parametrize(
    ("switch", "built"),
    [
        (TRAIN_DROPOUT, "EvalConvBn()"),  # built in eval mode, and it holds no dropout to train
        ("model.eval()", "Net().eval()"),
        ("pass", "Net().eval()"),
    ],
)
def test_a_helper_capturing_an_evaled_model_quiet(switch, built):
    assert helper_messages(switch, built) == []


FREEZING = """\
from torch import nn


def set_bn_eval(m):
    if isinstance(m, nn.BatchNorm2d):
        m.eval()


def freeze_bn(model):
    for mod in model.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.eval()
"""

SCRIPT = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e

from pkg.freezing import freeze_bn, set_bn_eval


def main(q, x):
    model = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3)).train()
    SWITCH
    return prepare_qat_pt2e(torch.export.export(model, (x,)).module(), q)
"""


@pytest.mark.parametrize(
    ("switch", "words"),
    [
        # The model holds batch norm only: freezing it is evaling the model.
        ("model.apply(set_bn_eval)", "in eval mode (after `model.apply(set_bn_eval)` at line 10)"),
        ("freeze_bn(model)", "in eval mode (after `freeze_bn(model)` at line 10)"),
        ("freeze_bn(model)\n    model.train()", None),
    ],
)
def test_a_freeze_written_in_another_module(tmp_path, switch, words):
    root = package_repository(tmp_path / "repo", freezing=FREEZING)
    script = root / "run.py"
    script.write_text(SCRIPT.replace("SWITCH", switch))
    found = [d.message for d in check_file(script, ("QL202",)).diagnostics]
    if words is None:
        assert found == []
    else:
        (message,) = found
        assert words in message

"""QL202: where the model comes from, the QAT mirror of `test_model_sources.py` (issue 14,
items 1-5 and 8).

Each construct QL201 follows for a train-mode PTQ capture is followed for an eval-mode QAT
capture: classes defined in the function, classes resolved rather than recognised by their
name's shape, `self.<attr>` built and evaled in `__init__`, factories, callbacks and helpers
handed the ExportedProgram. Loud where every QAT path is in eval mode and the model holds a
mode-dependent part; quiet where a path trains it, the eval is on some paths only, or the
model has nothing mode-dependent. The message names the parts (item 8).
"""

from __future__ import annotations

import textwrap

from tests.conftest import alone, lint

HEAD = """\
import pytest
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
"""


def check(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL202",), path=alone())


def row(src: str, text: str) -> int:
    lines = (HEAD + textwrap.dedent(src)).splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


# -- 1. a class defined inside the function that builds it --------------------------------------
LOCAL = """
def test_qat(q, x):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 3, 3)
            self.part = {part}

        def forward(self, x):
            return self.part(self.conv(x))

    model = Net().eval()
    prepare_qat_pt2e(export(model, (x,)).module(), q)
"""


def test_a_local_class_in_eval_mode_is_reported_with_its_parts():
    src = LOCAL.format(part="nn.Dropout()")
    (d,) = check(src)
    assert d.range.start.row == row(src, "prepare_qat_pt2e(")
    assert d.message.endswith("; in `Net`, the mode changes Dropout")


def test_local_class_look_alikes_are_quiet():
    assert check(LOCAL.format(part="nn.ReLU()")) == []  # nothing mode-dependent
    trained = LOCAL.format(part="nn.Dropout()").replace("    model = Net().eval()\n", "    model = Net()\n")
    assert check(trained) == []


# -- 3. classes recognised by resolving them ----------------------------------------------------
RESOLVED = """
class Outer:
    class _Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout()


class _ConvSingle(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)


def nested(q, x):
    m = Outer._Net()
    m.eval()
    return prepare_qat_pt2e(export(m, (x,)).module(), q)


def private(q, x):
    return prepare_qat_pt2e(export(_ConvSingle().eval(), (x,)).module(), q)
"""


def test_nested_and_private_classes_are_constructions():
    found = check(RESOLVED)
    assert [d.range.start.row for d in found] == [row(RESOLVED, "m.eval()") + 1, row(RESOLVED, "_ConvSingle().eval()")]
    assert found[0].message.endswith("in `Outer._Net`, the mode changes Dropout")
    assert found[1].message.endswith("in `_ConvSingle`, the mode changes BatchNorm2d")
    assert (
        check(RESOLVED.replace("    m.eval()\n", "    m.eval()\n    m.train()\n").replace(".eval(), (x", "(), (x"))
        == []
    )


# -- 2. `self.<attr>` -----------------------------------------------------------------------------
ATTR = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)


class Builder:
    def __init__(self, q):
        self.model = Net()
        self.model.eval()
        self.q = q

    def quantize(self, x):
        return prepare_qat_pt2e(export(self.model, (x,)).module(), self.q)
"""


def test_a_model_built_and_evaled_in_init_and_captured_in_a_method():
    (d,) = check(ATTR)
    assert d.range.start.row == row(ATTR, "return prepare_qat_pt2e(")
    assert "(after `self.model.eval()` at line" in d.message
    assert d.message.endswith("; in `Net`, the mode changes BatchNorm2d")
    inline = ATTR.replace(
        "        self.model = Net()\n        self.model.eval()\n", "        self.model = Net().eval()\n"
    )
    (d,) = check(inline)
    assert "(after `Net().eval()` at line" in d.message


def test_attribute_look_alikes_are_quiet():
    # Evaled in a branch only, trained in another method, handed to a call that may train it,
    # trained before the capture, assigned twice, or evaled and then given other parts.
    branch = ATTR.replace("        self.model.eval()\n", "        if q:\n            self.model.eval()\n")
    assert check(branch) == []
    assert check(ATTR + "\n    def fit(self):\n        self.model.train()\n") == []
    assert check(ATTR + "\n    def fit(self, data):\n        train_loop(self.model, data)\n") == []
    trained = ATTR.replace(
        "        return prepare_qat_pt2e(", "        self.model.train()\n        return prepare_qat_pt2e("
    )
    assert check(trained) == []
    twice = ATTR.replace("        self.q = q\n", "        self.model = Net()\n        self.q = q\n")
    assert check(twice) == []
    parts = ATTR + "\n    def grow(self):\n        self.model.head = nn.Linear(2, 2)\n"
    assert check(parts) == []


def test_a_model_stored_by_init_and_captured_in_enter_follows_the_instantiation():
    src = """
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm2d(3)


    class Quantize:
        def __init__(self, model, q, x):
            self.model = model
            self.q, self.x = q, x

        def __enter__(self):
            return prepare_qat_pt2e(export(self.model, (self.x,)).module(), self.q)

        def __exit__(self, *exc):
            return False


    def main(q, x):
        with Quantize(Net().eval(), q, x) as prepared:
            prepared(x)
    """
    (d,) = check(src)
    assert d.range.start.row == row(src, "return prepare_qat_pt2e(")
    assert f"the call at line {row(src, 'with Quantize')} passes it after `Net().eval()`" in d.message
    assert check(src.replace("Net().eval()", "Net()")) == []


# -- 4. factories ---------------------------------------------------------------------------------
NETS = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
"""


def test_parametrize_values_all_in_eval_mode_are_reported():
    src = NETS + (
        '@pytest.mark.parametrize("model", [Net().eval(), Plain().eval()])\n'
        "def test_qat(model, q, x):\n"
        "    prepare_qat_pt2e(export(model, (x,)).module(), q)\n"
    )
    (d,) = check(src)
    assert "in `Net`, the mode changes BatchNorm2d" in d.message
    # One value in train mode: eval does not dominate; only mode-free values: nothing to change.
    assert check(src.replace("[Net().eval(), Plain().eval()]", "[Net().eval(), Net()]")) == []
    assert check(src.replace("[Net().eval(), Plain().eval()]", "[Plain().eval()]")) == []


def test_factory_tables_whose_every_factory_evals():
    table = NETS + 'MODELS = {"a": lambda: Net().eval(), "b": lambda: Net().eval()}\n'
    by_key = table + "def qat(name, q, x):\n    m = MODELS[name]()\n    prepare_qat_pt2e(export(m, (x,)).module(), q)\n"
    (d,) = check(by_key)
    assert "in `Net`, the mode changes BatchNorm2d" in d.message
    assert check(by_key.replace('"b": lambda: Net().eval()', '"b": lambda: Net()')) == []
    assert check(by_key.replace("    m = MODELS[name]()\n", "    m = MODELS[name]()\n    m.train()\n")) == []


# -- 5. callbacks and helpers handed the ExportedProgram --------------------------------------------
def test_prepare_qat_in_a_callback_and_in_a_helper_handed_the_program():
    callback = NETS + (
        "def apply_to(gm, fn):\n    return fn(gm)\n\n"
        "def prep(gm):\n    return prepare_qat_pt2e(gm, Quantizer())\n\n"
        "def main(x):\n    apply_to(export(Net().eval(), (x,)).module(), prep)\n"
    )
    (d,) = check(callback)
    assert d.range.start.row == row(callback, "apply_to(export(")
    program = NETS + (
        "def quantize(ep, q):\n    return prepare_qat_pt2e(ep.module(), q)\n\n"
        "def main(q, x):\n    ep = export(Net().eval(), (x,))\n    return quantize(ep, q)\n"
    )
    (d,) = check(program)
    assert d.range.start.row == row(program, "ep = export(")
    # Converted right away (a QAT graph rebuilt to convert), or trained first: quiet.
    rebuilt = program.replace(
        "return prepare_qat_pt2e(ep.module(), q)", "return convert_pt2e(prepare_qat_pt2e(ep.module(), q))"
    )
    assert check(rebuilt) == []
    assert check(program.replace("Net().eval()", "Net()")) == []


def test_a_qat_graph_calibrated_once_and_converted_is_rebuilt_not_trained():
    src = NETS + (
        "def convert(q, x):\n"
        "    prepared = prepare_qat_pt2e(export(Net().eval(), (x,)).module(), q)\n"
        "    prepared(x)\n"
        "    prepared(x)\n"
        "    return convert_pt2e(prepared)\n"
    )
    assert check(src) == []
    # A loss taken from it, or a loop of passes between: it may be trained.
    trained = src.replace("    prepared(x)\n    prepared(x)\n", "    prepared(x).sum().backward()\n")
    assert len(check(trained)) == 1
    looped = src.replace("    prepared(x)\n    prepared(x)\n", "    for _ in range(3):\n        prepared(x)\n")
    assert len(check(looped)) == 1
    other = src.replace("    prepared(x)\n    prepared(x)\n", "    step(prepared, x)\n")
    assert len(check(other)) == 1

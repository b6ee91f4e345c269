"""QL201/QL202 follow a model a static, class or instance method of another project module's
class builds and returns (`m = Factory.make()`, `Factory.build(cfg)`, `Factory().create()`,
`f = Factory(); f.create()`), then captures (issue 14, items 3-6; the instance methods and
`cls(...)` at stop 65).

Such a method was read only when its body names a mode switch, a capture or a PT2E step
(`method_words`): a factory that only returns `Net()` was left unread, the model unknown, and a
train-mode capture of it unreported. Now a method whose return builds (`factory_methods`: a
class or function of its module or the project, `cls(...)` in a class method, a method on
`cls` or such a class, a chain of calls on one, a name bound only to such calls) is read too,
and the model flow decides what it returns.

Each case is checked alone (a one-file check of the script) and in a run over the whole
repository, which must agree. Quiet look-alikes, for a method called on the class and on an
instance alike: a factory that evals before returning, one returning a loaded or exported
program, a mode-free model, a subclass overriding the factory, the same method name on another
class.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import alone_and_in_run, package_repository

MODELS = """\
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))

    @classmethod
    def create(cls):
        return cls()


class Frozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)
        self.eval()

    def forward(self, x):
        return self.bn(x)


class Lin(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x)
"""

FACTORY = """\
import torch
import torch.nn as nn
from transformers import AutoModelForCausalLM

from pkg.models import Frozen, Lin, Net


class Drop(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x)


class Still(Drop):
    def __init__(self):
        super().__init__()
        self.eval()


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x)


def build_net():
    return Net()


class Factory:
    @staticmethod
    def make():
        return Net()

    @classmethod
    def build(cls, cfg):
        return Net()

    @staticmethod
    def local():
        return Drop()

    @staticmethod
    def helper():
        return build_net()

    @classmethod
    def chained(cls):
        return cls.make()

    @staticmethod
    def moved(device):
        return Net().to(device)

    @staticmethod
    def bound():
        model = Net()
        return model

    def create(self):
        return Drop()

    def create_imported(self):
        return Net()

    def create_eval(self):
        model = Drop()
        model.eval()
        return model

    def create_lin(self):
        return Plain()

    def create_frozen(self):
        return Still()

    def load(self, path):
        return torch.jit.load(path)

    def program(self, path):
        return torch.export.load(path).module()

    def pretrained(self, name):
        return AutoModelForCausalLM.from_pretrained(name)

    @staticmethod
    def make_eval():
        return Net().eval()

    @staticmethod
    def frozen():
        return Frozen()

    @staticmethod
    def make_lin():
        return Lin()

    @staticmethod
    def loaded(path):
        return torch.jit.load(path)


class Sub(Factory):
    @staticmethod
    def make():
        return Net().eval()

    def create(self):
        return Drop().eval()


class Other:
    @staticmethod
    def make():
        return torch.export.load("model.pt2").module()

    def create(self):
        return torch.export.load("model.pt2").module()
"""

SCRIPT = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e

from pkg.factory import Factory, Other, Sub
from pkg.models import Net


def main(quantizer, x, cfg):
    {body}
    ep = torch.export.export(model, (x,)).module()
    return {prepare}(ep, quantizer)
"""
CAPTURE_ROW = SCRIPT.splitlines().index("    ep = torch.export.export(model, (x,)).module()") + 1


def _found(tmp_path: Path, body: str, prepare: str = "prepare_pt2e") -> list[tuple[str, int, str]]:
    """(code, row, message) of `scripts/run.py`'s QL201/QL202 findings, alone and in a run over
    the repository (equal)."""
    root = package_repository(tmp_path / f"repo{len(list(tmp_path.iterdir()))}", models=MODELS, factory=FACTORY)
    script = root / "scripts" / "run.py"
    script.parent.mkdir()
    script.write_text(SCRIPT.format(body=body.replace("\n", "\n    "), prepare=prepare))
    return alone_and_in_run(script, root, ("QL201", "QL202"), root.parent / f"{root.name}-cache")


LOUD = {
    "static-method": ("model = Factory.make()", "BatchNorm2d"),
    "class-method": ("model = Factory.build(cfg)", "BatchNorm2d"),
    "class-of-the-factory's-module": ("model = Factory.local()", "Dropout"),
    "module-level-builder": ("model = Factory.helper()", "BatchNorm2d"),
    "chain-on-cls": ("model = Factory.chained()", "BatchNorm2d"),
    "chain-of-calls": ("model = Factory.moved('cpu')", "BatchNorm2d"),
    "bound-then-returned": ("model = Factory.bound()", "BatchNorm2d"),
    "alternate-constructor": ("model = Net.create()", "BatchNorm2d"),  # `cls()`: test_ql201_class_constructors
    "instance-method": ("model = Factory().create()", "Dropout"),
    "bound-instance": ("factory = Factory()\nmodel = factory.create()", "Dropout"),
    # A class imported from another module, whose own module shows it to be a module
    # (`nn_classes`; stop 66).
    "instance-method-building-an-imported-class": ("model = Factory().create_imported()", "BatchNorm2d"),
}


@pytest.mark.parametrize(("body", "part"), LOUD.values(), ids=LOUD.keys())
def test_a_model_a_factory_method_of_another_module_builds_is_reported(tmp_path, body, part):
    found = _found(tmp_path, body)
    assert [(code, row) for code, row, _ in found] == [("QL201", CAPTURE_ROW + body.count("\n"))]
    assert "train mode" in found[0][2] and part in found[0][2]


QUIET = {
    "evaled-before-returning": "model = Factory.make_eval()",
    "loaded-program": "model = Factory.loaded('m.pt')",
    "mode-free-model": "model = Factory.make_lin()",
    "evaled-by-its-class": "model = Factory.frozen()",
    "subclass-overriding-the-factory": "model = Sub.make()",
    "same-name-on-another-class": "model = Other.make()",
    "instance-evaled-before-returning": "model = Factory().create_eval()",
    "instance-loaded-program": "model = Factory().load('m.pt')",
    "instance-exported-program": "model = Factory().program('m.pt2')",
    "instance-mode-free-model": "model = Factory().create_lin()",
    "instance-installed-from-pretrained": "model = Factory().pretrained('gpt2')",
    "instance-subclass-overriding-the-factory": "model = Sub().create()",
    "instance-same-name-on-another-class": "model = Other().create()",
}


@pytest.mark.parametrize("body", QUIET.values(), ids=QUIET.keys())
def test_look_alikes_are_quiet(tmp_path, body):
    assert _found(tmp_path, body) == []


def test_qat_mirror(tmp_path):
    # QL202: a factory returning a model whose class evals it in `__init__`, captured for QAT;
    # one that builds a fresh (train-mode) model is right for QAT.
    found = _found(tmp_path, "model = Factory.frozen()", prepare="prepare_qat_pt2e")
    assert [(code, row) for code, row, _ in found] == [("QL202", CAPTURE_ROW)]
    assert _found(tmp_path, "model = Factory.make()", prepare="prepare_qat_pt2e") == []
    found = _found(tmp_path, "model = Factory().create_frozen()", prepare="prepare_qat_pt2e")
    assert [(code, row) for code, row, _ in found] == [("QL202", CAPTURE_ROW)]
    assert _found(tmp_path, "model = Factory().create()", prepare="prepare_qat_pt2e") == []


GATE = """\
import torch
import torch.nn as nn

from pkg.models import Net
from pkg.helpers import build_elsewhere


def build_net():
    return Net()


def relay(model):
    return model


class Factory:
    @staticmethod
    def make():
        return Net()

    @staticmethod
    def helper():
        return build_net()

    @classmethod
    def chained(cls):
        return cls.make()

    def forward(self, x):
        return self.net(x)

    @staticmethod
    def relayed(model):
        return relay(model)

    @staticmethod
    def imported():
        return build_elsewhere()

    @staticmethod
    def loaded(path):
        return torch.jit.load(path)

    def run(self):
        return self.forward(1)

    def block(self):
        return Block()

    @classmethod
    def alternate(cls, cfg):
        return cls(**cfg)

    @staticmethod
    def handed(factory):
        return factory()


class Base(nn.Module):
    pass


class Block(Base):
    @classmethod
    def alternate(cls, cfg):
        return cls(**cfg)
"""


def test_the_gate_reads_only_methods_that_build():
    # The cost gate: a method is read for what it returns only when a return constructs a
    # class (directly, `cls(...)` in a class method of a module class, or through a builder of
    # its module or a method of its class); a forward pass, a relay of a parameter, a library
    # call, a callable handed in and a call of any other function are not.
    import ast
    from types import SimpleNamespace

    from qlint.analysis.flow.factory_methods import builds_a_model
    from qlint.analysis.names.scope import ModuleScope

    scope = ModuleScope.build(ast.parse(GATE), "pkg.factory", "pkg/factory.py")
    owner = SimpleNamespace(scope=scope)
    holder = scope.classes["Factory"]
    read = {name for name, method in holder.methods.items() if builds_a_model(owner, method, holder)}
    # `Factory.alternate`'s `cls(...)` builds a `Factory`, no module (`class_constructors.module_class`);
    # `Block.alternate`'s builds a module (its base `Base` derives from `nn.Module`).
    assert read == {"make", "helper", "chained", "block"}
    # An instance method's test (`modules=True`): a module class of its own module only.
    strict = {name for name, method in holder.methods.items() if builds_a_model(owner, method, holder, True)}
    assert strict == {"block"}
    block = scope.classes["Block"]
    assert builds_a_model(owner, block.methods["alternate"], block)

"""QL201/QL202 follow factories of classes that are modules through another module (issue 14,
items 2-4; stop 66): an instance method building a class imported from another module
(`def create_net(self): return Net()` with `from pkg.nets import Net`), `cls(...)` of a class
whose base is imported (`class Net(BaseNet)`, `BaseNet` an `nn.Module` subclass of
`pkg.bases`), and a factory object a class holds (`self.factory = Factory()` in `__init__`,
then `self.factory.create()`).

Such factories were read only for classes whose own module shows they derive from `torch.nn`
(a cost gate: reading every one cost ExecuTorch's cold run +1.2% instructions), so what they
built was unknown and a train-mode capture went unreported. The gate now follows the bases
through the project's modules (`nn_classes`, each module's bases kept in its summary): a
chain ending at `torch.nn` is a module; a base of an installed library, one a module rebinds, a
circle of imports, a name no project module defines is not known to be one (quiet).

Each case is checked alone (a one-file check of the script) and in a run over the whole
repository, which must agree.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import alone_and_in_run, package_repository

BASES = """\
import torch.nn as nn


class BaseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(self.conv(x))


class BaseLin(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x)


class BaseConfig:
    def __init__(self, **kwargs):
        self.kwargs = kwargs
"""

LOOP_A = """\
from pkg.loop_b import LoopB


class LoopA(LoopB):
    @classmethod
    def create(cls):
        return cls()
"""

LOOP_B = """\
from pkg.loop_a import LoopA


class LoopB(LoopA):
    pass
"""

NETS = """\
from argparse import Namespace

import torch.nn as nn
from transformers import PreTrainedModel

from pkg.bases import BaseConfig, BaseLin, BaseNet
from pkg import bases


class Net(BaseNet):
    @classmethod
    def from_config(cls, cfg):
        return cls()

    def twin(self):
        return Deeper()


class Deeper(Net):
    pass


class Dotted(bases.BaseNet):
    @classmethod
    def create(cls):
        return cls()


class Frozen(BaseNet):
    def __init__(self):
        super().__init__()
        self.eval()

    @classmethod
    def create(cls):
        return cls()


class Lin(BaseLin):
    @classmethod
    def create(cls):
        return cls()


class Config(BaseConfig):
    @classmethod
    def from_dict(cls, d):
        return cls(**d)


class Args(Namespace):
    @classmethod
    def create(cls):
        return cls()


class Hub(PreTrainedModel):
    def __init__(self):
        super().__init__(None)
        self.bn = nn.BatchNorm2d(3)

    @classmethod
    def create(cls):
        return cls()
"""

REBOUND = """\
from pkg.bases import BaseNet

BaseNet = BaseNet.with_defaults()


class Rebound(BaseNet):
    @classmethod
    def create(cls):
        return cls()
"""

FACTORY = """\
from pkg.nets import Config, Deeper, Frozen, Lin, Net


class Factory:
    def create_net(self):
        return Net()

    def create_deeper(self):
        model = Deeper()
        return model

    def create_eval(self):
        return Net().eval()

    def create_frozen(self):
        return Frozen()

    def create_lin(self):
        return Lin()

    def create_config(self):
        return Config()


class Evaling(Factory):
    def create_net(self):
        return Net().eval()
"""

SCRIPT = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e

from pkg.factory import Evaling, Factory
from pkg.loop_a import LoopA
from pkg.nets import Args, Config, Deeper, Dotted, Frozen, Hub, Lin, Net
from pkg.rebound import Rebound


class Runner:
    def __init__(self):
        self.factory = {held}()

    def quantize(self, quantizer, x):
        {body}
        ep = torch.export.export(model, (x,)).module()
        return {prepare}(ep, quantizer)
{after}"""
CAPTURE_ROW = SCRIPT.splitlines().index("        ep = torch.export.export(model, (x,)).module()") + 1


def _found(tmp_path: Path, body: str, prepare="prepare_pt2e", held="Factory", after="") -> list:
    """(code, row, message) of `scripts/run.py`'s QL201/QL202 findings, alone and in a run over
    the repository (equal)."""
    modules = {"bases": BASES, "nets": NETS, "factory": FACTORY, "rebound": REBOUND, "loop_a": LOOP_A}
    root = package_repository(tmp_path / f"repo{len(list(tmp_path.iterdir()))}", loop_b=LOOP_B, **modules)
    script = root / "scripts" / "run.py"
    script.parent.mkdir()
    script.write_text(SCRIPT.format(body=body, prepare=prepare, held=held, after=after))
    return alone_and_in_run(script, root, ("QL201", "QL202"), root.parent / f"{root.name}-cache")


LOUD = {
    "instance-method-building-an-imported-class": ("model = Factory().create_net()", "Net", "BatchNorm2d"),
    "bound-then-returned": ("model = Factory().create_deeper()", "Deeper", "BatchNorm2d"),
    "held-factory": ("model = self.factory.create_net()", "Net", "BatchNorm2d"),
    "cls-with-an-imported-base": ("model = Net.from_config({})", "Net", "BatchNorm2d"),
    "inherited-by-a-subclass": ("model = Deeper.from_config({})", "Deeper", "BatchNorm2d"),
    "base-through-a-module-attribute": ("model = Dotted.create()", "Dotted", "BatchNorm2d"),
}


@pytest.mark.parametrize(("body", "cls", "part"), LOUD.values(), ids=LOUD.keys())
def test_a_train_mode_model_a_factory_builds_through_another_module_is_reported(tmp_path, body, cls, part):
    found = _found(tmp_path, body)
    assert [(code, row) for code, row, _ in found] == [("QL201", CAPTURE_ROW)]
    assert "train mode" in found[0][2] and f"in `{cls}`, the mode changes {part}" in found[0][2]


QUIET = {
    "factory-evals": ("model = Factory().create_eval()", "Factory"),
    "held-factory-evals": ("model = self.factory.create_eval()", "Factory"),
    "class-evals-in-init": ("model = Factory().create_frozen()", "Factory"),
    "alternate-constructor-of-an-evaling-class": ("model = Frozen.create()", "Factory"),
    "mode-free-class": ("model = Factory().create_lin()", "Factory"),
    "mode-free-alternate-constructor": ("model = Lin.create()", "Factory"),
    "config-factory": ("model = Factory().create_config()", "Factory"),
    "config-alternate-constructor": ("model = Config.from_dict({})", "Factory"),
    "installed-library-base-not-a-module": ("model = Args.create()", "Factory"),
    "uninstalled-library-base": ("model = Hub.create()", "Factory"),
    "subclass-overriding-the-factory": ("model = Evaling().create_net()", "Factory"),
    "held-subclass-overriding-the-factory": ("model = self.factory.create_net()", "Evaling"),
    "circular-import-of-the-bases": ("model = LoopA.create()", "Factory"),
    "base-rebound-in-its-module": ("model = Rebound.create()", "Factory"),
}


@pytest.mark.parametrize(("body", "held"), QUIET.values(), ids=QUIET.keys())
def test_look_alikes_are_quiet(tmp_path, body, held):
    assert _found(tmp_path, body, held=held) == []


def test_a_held_factory_written_outside_its_class_is_not_followed(tmp_path):
    # `runner.factory = Evaling()` elsewhere in the module: the field may hold either class.
    after = "\n\ndef swap(runner):\n    runner.factory = Evaling()\n"
    assert _found(tmp_path, "model = self.factory.create_net()", after=after) == []


def test_a_held_module_keeps_its_reading(tmp_path):
    # A field holding a model (a class deriving from `torch.nn`) is not read as a factory: its
    # methods are not run from here (what it returns stays as it was read before).
    assert _found(tmp_path, "model = self.factory.twin()", held="Net") == []


def test_qat_mirror(tmp_path):
    # QL202: a factory of another module's class whose `__init__` evals it, captured for QAT;
    # one that builds a fresh (train-mode) model is right for QAT.
    for body in ("model = Factory().create_frozen()", "model = self.factory.create_frozen()"):
        found = _found(tmp_path, body, prepare="prepare_qat_pt2e")
        assert [(code, row) for code, row, _ in found] == [("QL202", CAPTURE_ROW)]
    assert _found(tmp_path, "model = Factory().create_eval()", prepare="prepare_qat_pt2e") != []
    for body in ("model = Factory().create_net()", "model = self.factory.create_net()", "model = Net.from_config({})"):
        assert _found(tmp_path, body, prepare="prepare_qat_pt2e") == []


def test_the_gate_follows_bases_through_the_project(tmp_path):
    # `nn_classes`: a project chain ending at `torch.nn` is a module; a config, an installed
    # library's base, an unresolvable one, a rebound base and a circle of imports are not.
    from qlint.analysis.flow.model_classes import ClassIndex
    from qlint.analysis.flow.nn_classes import named_nn_class
    from qlint.analysis.names.project import ProjectIndex

    modules = {"bases": BASES, "nets": NETS, "factory": FACTORY, "rebound": REBOUND, "loop_a": LOOP_A}
    root = package_repository(tmp_path / "repo", loop_b=LOOP_B, **modules)
    index = ClassIndex(ProjectIndex(), str(root / "pkg" / "factory.py"))
    found = {name for name in ("Net", "Deeper", "Dotted", "Frozen", "Lin") if named_nn_class(index, f"pkg.nets.{name}")}
    assert found == {"Net", "Deeper", "Dotted", "Frozen", "Lin"}
    for name in ("pkg.nets.Config", "pkg.nets.Args", "pkg.nets.Hub", "pkg.rebound.Rebound", "pkg.loop_a.LoopA"):
        assert not named_nn_class(index, name), name
    assert not named_nn_class(index, "pkg.nets.Missing")

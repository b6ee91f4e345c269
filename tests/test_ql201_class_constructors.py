"""QL201/QL202 follow a model an alternate constructor builds: a classmethod returning
`cls(...)` (`m = Net.from_config(cfg)`), then captured (issue 14, item 4).

`cls` is the class the method is called on: `Net.create()` builds a `Net`, and `Deeper.create()`
(a subclass that inherits the classmethod) builds a `Deeper`, whose content the message names.
Such a call was unknown (the flow did not know which class `cls` is), so a train-mode capture
of what it built went unreported.

Each case is checked alone (a one-file check of the script) and in a run over the whole
repository, which must agree. Quiet look-alikes: a constructor that evals before returning (in
the chain or on the name it returns), a subclass that overrides the constructor, one whose
`__init__` evals (its instances start in eval mode: not known here, left unknown), a mode-free
class, a config dataclass's `cls()`, a classmethod returning a loaded program, HF-style
`from_pretrained` of an installed library.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import alone_and_in_run, package_repository

MODELS = """\
from dataclasses import dataclass

import torch
import torch.nn as nn
from transformers import PreTrainedModel


class Net(nn.Module):
    def __init__(self, width=3):
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3)
        self.bn = nn.BatchNorm2d(width)

    def forward(self, x):
        return self.bn(self.conv(x))

    @classmethod
    def create(cls):
        return cls()

    @classmethod
    def from_config(cls, cfg):
        return cls(**cfg)

    @classmethod
    def bound(cls, width):
        model = cls(width)
        return model

    @classmethod
    def moved(cls, device):
        return cls().to(device)

    @classmethod
    def chained(cls):
        return cls.create()

    @classmethod
    def evaled(cls):
        return cls().eval()

    @classmethod
    def evaled_later(cls):
        model = cls()
        model.eval()
        return model


class Deeper(Net):
    def __init__(self, width=3):
        super().__init__(width)
        self.drop = nn.Dropout(0.1)


class Frozen(Net):
    def __init__(self, width=3):
        super().__init__(width)
        self.eval()


class Overriding(Net):
    @classmethod
    def create(cls):
        return cls().eval()


class Plain(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x)

    @classmethod
    def create(cls):
        return cls()


@dataclass
class Config:
    width: int = 3

    @classmethod
    def default(cls):
        return cls()


class Loader:
    @classmethod
    def load(cls, path):
        return torch.jit.load(path)


class Tiny(PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)
"""

SCRIPT = """\
import torch
import torch.nn as nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e
from transformers import AutoModelForCausalLM

from pkg.models import Config, Deeper, Frozen, Loader, Net, Overriding, Plain, Tiny


class Local(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x)

    @classmethod
    def create(cls):
        return cls()


def main(quantizer, x, cfg):
    {body}
    ep = torch.export.export(model, (x,)).module()
    return {prepare}(ep, quantizer)
"""
CAPTURE_ROW = SCRIPT.splitlines().index("    ep = torch.export.export(model, (x,)).module()") + 1


def _found(tmp_path: Path, body: str, prepare: str = "prepare_pt2e") -> list[tuple[str, int, str]]:
    """(code, row, message) of `scripts/run.py`'s QL201/QL202 findings, alone and in a run over
    the repository (equal)."""
    root = package_repository(tmp_path / f"repo{len(list(tmp_path.iterdir()))}", models=MODELS)
    script = root / "scripts" / "run.py"
    script.parent.mkdir()
    script.write_text(SCRIPT.format(body=body.replace("\n", "\n    "), prepare=prepare))
    return alone_and_in_run(script, root, ("QL201", "QL202"), root.parent / f"{root.name}-cache")


LOUD = {
    "cls-call": ("model = Net.create()", "BatchNorm2d"),
    "cls-of-a-config": ("model = Net.from_config(cfg)", "BatchNorm2d"),
    "bound-then-returned": ("model = Net.bound(4)", "BatchNorm2d"),
    "chain-of-calls": ("model = Net.moved('cpu')", "BatchNorm2d"),
    "cls-method-on-cls": ("model = Net.chained()", "BatchNorm2d"),
    "subclass-inheriting-it": ("model = Deeper.create()", "Dropout"),
    "same-module": ("model = Local.create()", "Dropout"),
}


@pytest.mark.parametrize(("body", "part"), LOUD.values(), ids=LOUD.keys())
def test_a_model_an_alternate_constructor_builds_is_reported(tmp_path, body, part):
    found = _found(tmp_path, body)
    assert [(code, row) for code, row, _ in found] == [("QL201", CAPTURE_ROW + body.count("\n"))]
    assert "train mode" in found[0][2] and part in found[0][2]


QUIET = {
    "evaled-in-the-chain": "model = Net.evaled()",
    "evaled-before-returning": "model = Net.evaled_later()",
    "subclass-overriding-it": "model = Overriding.create()",
    "subclass-evaling-in-init": "model = Frozen.create()",
    "mode-free-class": "model = Plain.create()",
    "config-dataclass": "model = Config.default()",
    "loaded-program": "model = Loader.load('m.pt')",
    "installed-from-pretrained": "model = AutoModelForCausalLM.from_pretrained('gpt2')",
    # A project class inheriting the installed library's `from_pretrained` (which evals).
    "inherited-from-pretrained": "model = Tiny.from_pretrained('tiny')",
}


@pytest.mark.parametrize("body", QUIET.values(), ids=QUIET.keys())
def test_look_alikes_are_quiet(tmp_path, body):
    assert _found(tmp_path, body) == []


def test_qat_mirror(tmp_path):
    # QL202: a fresh (train-mode) model is right for QAT; one evaled before returning is not.
    assert _found(tmp_path, "model = Net.create()", prepare="prepare_qat_pt2e") == []
    for body in ("model = Net.evaled()", "model = Net.evaled_later()"):
        found = _found(tmp_path, body, prepare="prepare_qat_pt2e")
        assert [(code, row) for code, row, _ in found] == [("QL202", CAPTURE_ROW)]

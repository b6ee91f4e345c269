"""QL201: a model built from a config object (issue 14, item 8).

The Qualcomm static llama is built `model = LlamaModel(prefill_config, ...)` after
`prefill_config = ModelArgs(**json.load(f))`, a `@dataclass` with no base. The config's
construction was taken for a module the new one wraps, so the finding said the model was
"built at line 146": the config's line. A class without bases is never a module: the model
starts in train mode at its own construction, and what the config holds is still read with
it (the message says whether anything mode-dependent was found). A wrapper of a real module
keeps that module's mode, and a config with a base, or one switched since, is read as before.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import dataclasses
from dataclasses import dataclass

import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


@dataclass
class Args:
    dim: int = 4


@dataclasses.dataclass(frozen=True)
class Frozen:
    dim: int = 4


class Net(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.fc = nn.Linear(args.dim, args.dim)
        self.bn = nn.BatchNorm1d(args.dim)

    def forward(self, x):
        return self.bn(self.fc(x))


class Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)
"""


def _ql201(body: str):
    src = HEAD + "\n\n" + textwrap.dedent(body)
    return src, lint(src, select=("QL201",))


def _row(src: str, text: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


def test_a_model_built_from_a_dataclass_config_is_built_at_its_own_line():
    src, (d,) = _ql201(
        """
        def main(x, q):
            args = Args(dim=8)
            model = Net(args)
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)
        """
    )
    assert f"built at line {_row(src, 'model = Net(args)')}" in d.message
    assert "BatchNorm1d" in d.message


def test_a_frozen_dataclass_called_by_its_module_too():
    src, (d,) = _ql201(
        """
        def main(x, q):
            args = Frozen()
            model = Net(args)
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)
        """
    )
    assert f"built at line {_row(src, 'model = Net(args)')}" in d.message


def test_a_wrapper_of_an_evaled_module_keeps_its_mode():
    _, found = _ql201(
        """
        def main(x, q):
            inner = Net(Args()).eval()
            model = Wrapper(inner)
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)
        """
    )
    assert found == []


def test_a_wrapper_of_a_train_mode_module_names_the_module():
    src, (d,) = _ql201(
        """
        def main(x, q):
            inner = Net(Args())
            model = Wrapper(inner)
            return prepare_pt2e(torch.export.export(model, (x,)).module(), q)
        """
    )
    assert f"built at line {_row(src, 'inner = Net(Args())')}" in d.message

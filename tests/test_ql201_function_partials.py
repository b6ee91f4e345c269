"""QL201: a model that keeps `functools.partial` of a function of the project and calls it
(issue 14, item 8; `function_partials`).

ExecuTorch's llama `Rope` writes `self.precompute_freqs_cis = partial(precompute_freqs_cis,
use_scaled=...)`, imported from `examples/models/llama/rope.py`, and calls it in `__init__`.
The callable a partial is handed is called later, unseen, so the model was not known in full
and the cadence `babyllama` example, passing a llama `Transformer`, kept `convert_pt2`'s
finding. A function of the module or of the project is read for what it builds, as a direct
call of it is, and a torch function builds no module as a direct call of one does not; a
library's function, a loader, or a callable held in a variable, is still anything.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import check_file, package_repository, rows_of

OPS = """
import somelib
import torch
from torch import nn


def freqs(dim, theta=10000.0):
    return torch.outer(torch.arange(dim), torch.ones(dim) / theta)


def noisy(dim, theta=1.0):
    return nn.Dropout(0.5)
"""
MODEL = """
from functools import partial

import somelib
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg.ops import freqs, noisy


def local_freqs(dim, theta=1.0):
    return torch.ones(dim) * theta


class Rope(torch.nn.Module):
    def __init__(self, dim, fn=None):
        super().__init__()
        self.linear = torch.nn.Linear(dim, dim)
        self.make = partial({name}, theta=2.0)
        self.register_buffer("f", torch.as_tensor(self.make(dim)))

    def forward(self, x):
        return self.linear(x) + self.f


def quantize(model, x, q):
    return prepare_pt2e(torch.export.export(model, x).module(), q)


def main(x, q):
    quantize(Rope(dim=8), (x,), q)
"""
CAPTURE_ROW = MODEL.splitlines().index("    return prepare_pt2e(torch.export.export(model, x).module(), q)") + 1


def _rows(tmp_path, name: str) -> list[int]:
    model = textwrap.dedent(MODEL).replace("{name}", name)
    root = package_repository(tmp_path / "repo", ops=OPS, model=model)
    return rows_of(check_file(root / "pkg" / "model.py", ("QL201",)).diagnostics)


# Another module's function, the module's own, a torch function (`partial(F.gelu, approximate="tanh")`).
@pytest.mark.parametrize("name", ["freqs", "local_freqs", "torch.polar"])
def test_a_partial_of_a_function_that_builds_tensors_leaves_the_model_known(tmp_path, name):
    assert _rows(tmp_path, name) == []


@pytest.mark.parametrize(
    "name",
    [
        "noisy",  # builds a dropout
        "somelib.block",  # a library's function: anything
        "fn",  # a callable handed in
        "torch.load",  # a loader: any object
    ],
)
def test_a_partial_of_anything_else_keeps_the_finding(tmp_path, name):
    assert _rows(tmp_path, name) == [CAPTURE_ROW]

"""QL201: what a model holds, read through a function its class imports from another module
of the project (issue 14, item 7; `model_classes.ClassIndex.project_function`).

ExecuTorch's Qualcomm test models `HadamardLinear`, `HadamardMatMul` and `HadamardConv`
build their weight with `_hadamard_matrix(dim, "cpu", torch.float32)`, imported from
`backends/qualcomm/builders/custom_ops.py`. A function of the class's own module was read
for what it builds; one imported from another module was a call that may build anything,
so the models were not known in full and three callers of `get_qdq_module` were not
classified. It is now read in its own module, the same way.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import check_file, package_repository, rows_of

OPS = """
import somelib
import torch
from torch import nn

from pkg.elsewhere import make_block


def matrix(dim, device="cpu", dtype=torch.float32):
    h = torch.ones((1, 1), device=device, dtype=dtype)
    while h.shape[0] < dim:
        h = torch.cat([torch.cat([h, h], dim=1), torch.cat([h, -h], dim=1)], dim=0)
    return h


def noisy(dim):
    return nn.Dropout(0.5)


def handed_on(dim):
    return make_block(dim)


def foreign(dim):
    return somelib.block(dim)
"""
ELSEWHERE = """
import torch


def make_block(dim):
    return torch.nn.BatchNorm1d(dim)
"""
MODEL = """
import math

import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg.ops import {name}


class Hadamard(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.linear = torch.nn.Linear(dim, dim, bias=False)
        self.extra = {name}(dim)
        self.register_buffer("h", torch.ones(dim) / math.sqrt(dim))

    def forward(self, x):
        return self.linear(x) + self.h


def quantize(model, x, q):
    return prepare_pt2e(torch.export.export(model, x).module(), q)


def main(x, q):
    quantize(Hadamard(dim=128), (x,), q)
"""
CAPTURE_ROW = MODEL.splitlines().index("    return prepare_pt2e(torch.export.export(model, x).module(), q)") + 1


def _rows(tmp_path, name: str) -> list[int]:
    model = textwrap.dedent(MODEL).replace("{name}", name)
    root = package_repository(tmp_path / "repo", ops=OPS, elsewhere=ELSEWHERE, model=model)
    return rows_of(check_file(root / "pkg" / "model.py", ("QL201",)).diagnostics)


def test_a_function_of_another_module_that_builds_tensors_leaves_the_model_known(tmp_path):
    assert _rows(tmp_path, "matrix") == []


@pytest.mark.parametrize(
    "name",
    [
        "noisy",  # builds a dropout: the model holds one
        "handed_on",  # a third module's function builds a batch norm
        "foreign",  # a library's function: it may build anything
    ],
)
def test_a_function_that_builds_a_mode_dependent_or_unknown_module_keeps_the_finding(tmp_path, name):
    assert _rows(tmp_path, name) == [CAPTURE_ROW]

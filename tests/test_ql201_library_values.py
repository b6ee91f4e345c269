"""QL201: a model built from values SciPy or `json.load` compute (issue 14, item 8).

The Qualcomm static llama's attention registers `scipy.linalg.hadamard(head_dim)` as its R3
rotation, and the llama is built from `ModelArgs(**json.load(f))`. A call of a library's
function may build any module, so the model was not known in full. SciPy imports no torch:
what it returns is an array or a number, never a torch module; `json.load` returns plain
JSON values unless a hook (`object_hook=...`) builds objects. Another library's function,
or a load with a hook, is still anything.
"""

from __future__ import annotations

import pytest

from tests.test_ql201_loop_items import CAPTURE_ROW, ql201

MODEL = """
import scipy
import scipy.linalg
import somelib


class Rotated(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.linear = nn.Linear(dim, dim)
        self.register_buffer("r", torch.tensor({call}, dtype=torch.float32))

    def forward(self, x):
        return self.linear(x) @ self.r


def main(x, q):
    quantize(Rotated(8), (x,), q)
"""


def test_a_buffer_scipy_computes_leaves_the_model_known():
    assert ql201(MODEL.replace("{call}", "scipy.linalg.hadamard(dim, dtype=float)")) == []


@pytest.mark.parametrize("call", ["somelib.hadamard(dim)", "somelib.scipy.linalg.hadamard(dim)"])
def test_another_librarys_function_keeps_the_finding(call):
    (d,) = ql201(MODEL.replace("{call}", call))
    assert d.range.start.row == CAPTURE_ROW


CONFIGURED = """
import json

from somelib import make_object


@dataclass
class Args:
    dim: int = 4


class Net(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.fc = nn.Linear(args.dim, args.dim)

    def forward(self, x):
        return self.fc(x)


def main(x, q, f):
    quantize(Net(Args(**{load})), (x,), q)
"""


def test_a_config_read_from_json_leaves_the_model_known():
    assert ql201("from dataclasses import dataclass\n" + CONFIGURED.replace("{load}", "json.load(f)")) == []


@pytest.mark.parametrize("load", ["json.load(f, object_hook=make_object)", "somelib.load(f)"])
def test_a_load_that_may_build_objects_keeps_the_finding(load):
    (d,) = ql201("from dataclasses import dataclass\nimport somelib\n" + CONFIGURED.replace("{load}", load))
    assert d.range.start.row == CAPTURE_ROW

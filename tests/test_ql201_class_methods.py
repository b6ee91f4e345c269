"""QL201: a model whose config runs a classmethod of an enum (issue 14, item 8;
`class_method_calls`).

ExecuTorch's llama `ModelArgs.__post_init__` runs `self.act_fn = ActFn.from_string(self.act_fn)`,
a `@classmethod` of an `Enum` of its module returning `cls(value)`, whose `get_function`
hands out `partial(F.gelu, approximate="tanh")`. A call of a class's attribute may build
anything, so every llama model built from `ModelArgs` was not known in full. A classmethod or
staticmethod of a class that resolves is read as a function; `cls(...)` in a classmethod
called on its class is an instance of it; an enum base adds nothing; a partial of a torch
function runs that function. A method of a library class, a plain method (on an instance),
or a `cls(...)` of a name bound again, is still anything.
"""

from __future__ import annotations

import pytest

from tests.test_ql201_loop_items import CAPTURE_ROW, ql201

MODEL = """
from enum import Enum
from functools import partial

import torch.nn.functional as F
from somelib import Registry


class Act(Enum):
    SILU = "silu"
    GELU = "gelu"

    @classmethod
    def from_string(cls, value):
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"bad {value}: {[e.value for e in cls]}")

    def get_function(self):
        return F.silu if self == Act.SILU else partial(F.gelu, approximate="tanh")


class Noisy:
    @staticmethod
    def make(p):
        return nn.Dropout(p)


class Rebound(Enum):
    A = "a"

    @classmethod
    def make(cls, value):
        cls = Registry.lookup(value)
        return cls(value)


class Plain:
    def make(self, value):
        return value


class Block(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = {call}

    def forward(self, x):
        return self.fc(x)


def main(x, q):
    quantize(Block("silu"), (x,), q)
"""


def test_a_classmethod_of_an_enum_leaves_the_model_known():
    assert ql201(MODEL.replace("{call}", "Act.from_string(act)")) == []


LOUD = {
    "a staticmethod building a dropout": "Noisy.make(0.5)",
    "cls bound again": "Rebound.make(act)",
    "a plain method, called on the class": "Plain.make(Plain(), act)",
    "a library class's method": "Registry.lookup(act)",
}


@pytest.mark.parametrize("call", LOUD.values(), ids=LOUD.keys())
def test_a_method_that_may_build_anything_keeps_the_finding(call):
    (d,) = ql201(MODEL.replace("{call}", call))
    assert d.range.start.row == CAPTURE_ROW

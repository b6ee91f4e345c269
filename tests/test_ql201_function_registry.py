"""QL201: a class that stores a function it takes from a registry a decorator fills with
functions (issue 14, item 8; `registry_contents.holds_functions_only`).

ExecuTorch's Qualcomm static llama picks its rotary embedding as `self.apply_rope_emb =
ROTARY_EMB_REGISTRY["default"]`, a registry `@register_rotary_emb("default")` fills with
module-level functions. A stored object named from elsewhere may be any module, so the
attention (and the whole model) was never known in full, where a function named directly is
no part. When nothing but the decorator writes the registry and it decorates functions alone,
each carrying no other decorator, what is stored from it is such a function. A registry also
filled another way, holding a class, or a function under another decorator, stays unknown.
"""

from __future__ import annotations

import pytest

from tests.conftest import check_file, package_repository, rows_of

REGISTRY = '''
from typing import Callable, Dict

import torch

ROPES: Dict[str, Callable] = {}


def register_rope(name):
    """Register a rotary embedding under `name`."""

    def decorator(fn):
        ROPES[name] = fn
        return fn

    return decorator


@register_rope("default")
def rope(x, cos, sin):
    return x * cos + torch.flip(x, [-1]) * sin


@register_rope("partial")
@register_rope("half")
def partial_rope(x, cos, sin):
    return torch.cat([rope(x[..., :2], cos, sin), x[..., 2:]], dim=-1)
'''
# Re-exported by the package, as ExecuTorch's model package does.
INIT = """
from .registry import ROPES

__all__ = [ROPES]
"""
MODEL = """
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg import ROPES


class Attention(torch.nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        {store}

    def forward(self, x):
        return self.rope(self.linear(x), 1.0, 0.0)


def quantize(x, q):
    model = Attention("default")
    return prepare_pt2e(torch.export.export(model, (x,)).module(), q)
"""
CAPTURE_ROW = MODEL.splitlines().index("    return prepare_pt2e(torch.export.export(model, (x,)).module(), q)") + 1


def _check(tmp_path, store: str, registry: str = REGISTRY, **others: str):
    modules = {"__init__": INIT, "registry": registry, "model": MODEL.replace("{store}", store), **others}
    root = package_repository(tmp_path / "repo", **modules)
    return check_file(root / "pkg" / "model.py", ("QL201",)).diagnostics


@pytest.mark.parametrize(
    "store",
    [
        'self.rope = ROPES["default"]',  # a constant key
        "self.rope = ROPES[kind]",  # any key: every registered function
        'self.rope = ROPES["partial"] if kind == "partial" else ROPES["default"]',
    ],
)
def test_a_function_taken_from_a_closed_registry_of_functions_is_no_part(tmp_path, store):
    assert rows_of(_check(tmp_path, store)) == []


def test_the_registry_written_in_the_model_module_is_read_the_same(tmp_path):
    # The registry, its decorator and the class in one module: the registry is a module-level
    # assignment there, not an import.
    body = REGISTRY + MODEL.replace("from pkg import ROPES\n", "").replace("{store}", "self.rope = ROPES[kind]")
    root = package_repository(tmp_path / "repo", __init__="", model=body)
    assert rows_of(check_file(root / "pkg" / "model.py", ("QL201",)).diagnostics) == []


# A class registered beside the functions: a lookup may hand out a module's class.
WITH_A_CLASS = (
    REGISTRY
    + """

@register_rope("noisy")
class NoisyRope(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = torch.nn.Dropout(0.1)
"""
)
# A function under another decorator below the registering one: the registry holds what
# that decorator returned.
WRAPPED = REGISTRY.replace('@register_rope("default")\n', '@register_rope("default")\n@as_module\n').replace(
    "import torch\n", "import torch\n\nfrom somelib import as_module\n", 1
)
FILLED_ELSEWHERE = """
import torch

from pkg.registry import ROPES

ROPES["noisy"] = torch.nn.Dropout(0.1)
"""
BY_HAND = """
import torch

from pkg.registry import register_rope

register_rope("noisy")(torch.nn.Dropout(0.1))
"""


@pytest.mark.parametrize(
    ("registry", "others"),
    [
        (WITH_A_CLASS, {}),
        (WRAPPED, {}),
        (REGISTRY, {"other": FILLED_ELSEWHERE}),  # another module stores a dropout into it
        (REGISTRY, {"other": BY_HAND}),  # the decorator called by hand on a module
    ],
)
def test_a_registry_that_may_hold_a_module_keeps_the_finding(tmp_path, registry, others):
    assert rows_of(_check(tmp_path, "self.rope = ROPES[kind]", registry, **others)) == [CAPTURE_ROW]


def test_a_registry_the_class_keeps_may_be_written_through_it(tmp_path):
    # `self.ropes = ROPES`: the table escapes to the instance, where anything may store into it.
    assert rows_of(_check(tmp_path, "self.ropes = ROPES; self.rope = ROPES[kind]")) == [CAPTURE_ROW]


def test_a_dropout_beside_the_registered_function_is_still_named(tmp_path):
    store = 'self.rope = ROPES["default"]; self.drop = torch.nn.Dropout(0.1)'
    (found,) = _check(tmp_path, store)
    assert found.range.start.row == CAPTURE_ROW
    assert "in `Attention`, the mode changes Dropout" in found.message


def test_a_class_registry_lookup_stays_unknown_when_a_function_is_registered_beside(tmp_path):
    # `looked_up` builds what a class registry hands out; a function among them is no class
    # it reads, and a call of the lookup stays a callable that may build anything.
    classes = REGISTRY.replace(
        '@register_rope("default")\ndef rope',
        '@register_rope("plain")\nclass Plain(torch.nn.Module):\n    pass\n\n\ndef rope',
    )
    assert rows_of(_check(tmp_path, 'self.rope = ROPES["plain"]()', classes)) == [CAPTURE_ROW]

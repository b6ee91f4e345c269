"""QL201: what a model holds when a part of it is built from a registry a class decorator
fills (issue 14, item 8; `registry_contents`).

ExecuTorch's Qualcomm static llama builds its norms as `NORM_REGISTRY[config.norm_type](dim)`
and its feed-forward as `FeedForward_REGISTRY.get(arch, FeedForward)(config)`; the registries
are filled by `@register_norm("rmsnorm")` on class statements and re-exported by the model
package's `__init__`. A call of a lookup was a callable that may build anything, so the model
was never known in full. When nothing but the decorator writes the registry, the lookup builds
one of the classes it decorates (a constant key: those registered under it), and `.get(k, D)`
also `D`. A registry written anywhere else, a decorator called by hand or with a key that is
no constant, or a default we do not resolve, and the part stays unknown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import check_file, package_repository, rows_of

REGISTRY = '''
from typing import Dict, Type

import torch

NORMS: Dict[str, Type[torch.nn.Module]] = {}


def register_norm(name):
    """Register a norm class under `name`."""

    def decorator(cls):
        NORMS[name] = cls
        return cls

    return decorator


@register_norm("rms")
@register_norm("gemma")
class RMSNorm(torch.nn.RMSNorm):
    def __init__(self, dim, eps=1e-5):
        super().__init__(dim, eps=eps)


@register_norm("layer")
class LayerNorm(torch.nn.LayerNorm):
    def __init__(self, dim, eps=1e-5):
        super().__init__(dim, eps=eps)


def names():
    return sorted(NORMS.keys()), "rms" in NORMS
'''
# The package re-exports the registry as ExecuTorch's does (the objects in `__all__`).
INIT = """
from .registry import NORMS

__all__ = [NORMS]
"""
NOISY = """
import torch

from pkg.registry import register_norm


@register_norm("noisy")
class NoisyNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim, eps=eps)
        self.drop = torch.nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.norm(x))
"""
MODEL = """
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from somelib import Norm

from pkg import NORMS


class Plain(torch.nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * self.scale


class Block(torch.nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.norm = {lookup}(4, eps=1e-5)

    def forward(self, x):
        return self.norm(self.linear(x))


def quantize(x, q):
    model = Block("rms")
    return prepare_pt2e(torch.export.export(model, (x,)).module(), q)
"""
CAPTURE_ROW = MODEL.splitlines().index("    return prepare_pt2e(torch.export.export(model, (x,)).module(), q)") + 1


def _check(tmp_path, lookup: str, **others: str):
    modules = {"__init__": INIT, "registry": REGISTRY, "model": MODEL.replace("{lookup}", lookup), **others}
    root = package_repository(tmp_path / "repo", **modules)
    return check_file(root / "pkg" / "model.py", ("QL201",)).diagnostics


@pytest.mark.parametrize(
    "lookup",
    [
        "NORMS[kind]",  # any key: each registered class is mode-free
        'NORMS["rms"]',  # a constant key: the class registered under it
        "NORMS.get(kind, Plain)",  # `.get` with a default of the module
        "NORMS.get(kind)",
    ],
)
def test_a_lookup_of_a_closed_registry_of_mode_free_classes_is_mode_free(tmp_path, lookup):
    assert rows_of(_check(tmp_path, lookup)) == []


def test_a_constant_key_leaves_out_a_mode_dependent_class_registered_under_another(tmp_path):
    assert rows_of(_check(tmp_path, 'NORMS["layer"]', noisy=NOISY)) == []


@pytest.mark.parametrize("lookup", ["NORMS[kind]", 'NORMS["noisy"]', "NORMS.get(kind, Plain)"])
def test_a_registered_class_holding_dropout_is_reported_and_named(tmp_path, lookup):
    (found,) = _check(tmp_path, lookup, noisy=NOISY)
    assert found.range.start.row == CAPTURE_ROW
    assert "in `Block`, the mode changes Dropout" in found.message


FILLED_ELSEWHERE = """
from pkg.registry import NORMS
from pkg.other import Other

NORMS["other"] = Other
"""
BY_HAND = """
import torch

from pkg.registry import register_norm


class Other(torch.nn.Module):
    pass


register_norm("other")(Other)
"""
DYNAMIC_KEY = """
import torch

from pkg.registry import register_norm

KIND = "other"


@register_norm(KIND)
class Other(torch.nn.Module):
    pass
"""
RENAMED = """
import torch

from pkg.registry import register_norm as register


@register("other")
class Other(torch.nn.Module):
    pass
"""
IN_A_FUNCTION = """
import torch

from pkg.registry import register_norm


def install():
    @register_norm("other")
    class Other(torch.nn.Module):
        pass
"""
HANDED_ON = """
from pkg.registry import NORMS


def extend(table):
    table.update(NORMS)
    return table
"""


@pytest.mark.parametrize(
    "other",
    [
        FILLED_ELSEWHERE,  # another module stores into the registry
        BY_HAND,  # the decorator called by hand: whatever it is handed is registered
        DYNAMIC_KEY,  # registered under a key that is no constant
        RENAMED,  # used under another name: its uses do not spell it
        IN_A_FUNCTION,  # a class written in a function, registered when it runs
        HANDED_ON,  # the registry handed to a call that may do anything with it
    ],
)
def test_a_registry_that_may_hold_other_classes_keeps_the_finding(tmp_path, other):
    assert rows_of(_check(tmp_path, "NORMS[kind]", other=other)) == [CAPTURE_ROW]


def test_a_default_that_is_no_class_we_resolve_keeps_the_finding(tmp_path):
    assert rows_of(_check(tmp_path, "NORMS.get(kind, Norm)")) == [CAPTURE_ROW]  # a library's class


def test_a_registry_whose_decorator_stores_something_else_keeps_the_finding(tmp_path):
    # `NORMS[name] = with_dropout(cls)`: what a lookup hands out is not the class decorated.
    registry = REGISTRY.replace("        NORMS[name] = cls\n", "        NORMS[name] = with_dropout(cls)\n")
    diagnostics = _check(tmp_path, "NORMS[kind]", registry=registry)
    assert rows_of(diagnostics) == [CAPTURE_ROW]


def _cached_run(root) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    command = [sys.executable, "-m", "qlint", "check", "--select", "QL201", "--output-format", "json", "--exit-zero"]
    done = subprocess.run([*command, "."], cwd=root, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_a_class_registered_later_in_another_module_is_read_by_a_cached_run(tmp_path):
    # The project search the lookup made is a dependency of the model's module's result: a
    # class registered since, in a module that did not register one before, is read.
    unregistered = NOISY.replace('@register_norm("noisy")\n', "")
    root = package_repository(
        tmp_path / "repo",
        __init__=INIT,
        registry=REGISTRY,
        model=MODEL.replace("{lookup}", "NORMS[kind]"),
        noisy=unregistered,
    )
    assert _cached_run(root) == []
    (root / "pkg" / "noisy.py").write_text(NOISY)
    (found,) = _cached_run(root)
    assert found["location"]["row"] == CAPTURE_ROW and "Dropout" in found["message"]

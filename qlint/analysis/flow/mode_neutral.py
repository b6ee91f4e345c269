"""Decorators that leave a method's effect on a model's mode as its body says: `torch.no_grad()`,
`torch.inference_mode()` and `torch.enable_grad()` switch autograd only (issue 14; Samsung
TICO's `@torch.no_grad() def prepare(self, model, ...)`).

A decorated method is otherwise not read: the decorator may wrap it in anything. These three
are recognised by what the module's imports make of the name (`import torch`, `from torch
import no_grad as ng`), never by its spelling, and only called without arguments
(`inference_mode(False)` is left alone).
"""

from __future__ import annotations

import ast

from qlint.analysis.names.resolver import Resolver

_MODE_NEUTRAL = frozenset({"torch.no_grad", "torch.inference_mode", "torch.enable_grad"})


def mode_neutral(owner, decorators: list[ast.expr]) -> bool:
    """Every decorator is `torch.no_grad()`, `torch.inference_mode()` or `torch.enable_grad()`,
    resolved by the module's imports and called without arguments."""
    resolver = None
    for deco in decorators:
        if not (isinstance(deco, ast.Call) and not deco.args and not deco.keywords):
            return False
        resolver = resolver or Resolver(owner.scope, owner.project, owner.optable)
        if resolver.qualname(deco.func) not in _MODE_NEUTRAL:
            return False
    return True


__all__ = ["mode_neutral"]

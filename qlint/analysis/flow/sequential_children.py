"""A part built in place as `nn.Sequential(nn.Conv2d(...), nn.BatchNorm2d(...), ...)`: its
direct children are its arguments, so a loop setting each child's `training` flag
(`direct_children`) switches every mode-dependent module of it exactly when each argument is a
construction of a `torch.nn` class whose mode is its own flag (`model_torch_nn.OWN_FLAG`) or
one whose behaviour no mode changes. Read on torch 2.13 (`for m in model.body.children():
m.training = False` on such a part: its batch norm and dropout capture in eval mode); a
container among the arguments (`nn.Sequential(Body())`, `nn.Sequential(nn.Sequential(...))`)
keeps what it holds in train mode. The same holds of a whole model built so (`model =
nn.Sequential(conv, bn)` with `conv = nn.Conv2d(...)` and `bn = nn.BatchNorm2d(...)` bound
once each in the function; read on torch 2.13 too), as a later switch of `bn` by its own name
is a switch of the model's part (`held_parts`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.mode_keeping import bindings
from qlint.analysis.flow.model_torch_nn import CONTAINERS, OWN_FLAG, torch_nn_kind


def flags_reach_all(built) -> bool:
    """`built` (a part's construction, `held_parts.part_build`, or the model's own) is
    `nn.Sequential(...)` of `torch.nn` constructions each of whose mode is its own flag, or
    which has none: written in the call, or names of the function building it that every
    assignment there binds to such a construction (`conv = nn.Conv2d(...)`, then
    `nn.Sequential(conv, bn)`)."""
    call = built.call
    if built.resolver.qualname(call.func) != "torch.nn.Sequential" or call.keywords:
        return False
    for arg in call.args:
        if isinstance(arg, ast.Name) and built.func is not None:
            values = bindings(built.func, arg.id)
        else:
            values = [arg]  # `*layers`, an attribute: read as they are, so not followed
        if not values or not all(isinstance(v, ast.Call) and _own_flag(built.resolver, v) for v in values):
            return False
    return True


def _own_flag(resolver, call: ast.Call) -> bool:
    """`call` builds a `torch.nn` module, no container, whose mode is its own flag or which has none."""
    name = resolver.qualname(call.func) or ""
    last = name.rpartition(".")[2]
    if not name.startswith("torch.nn.") or name.count(".") != 2 or last in CONTAINERS:
        return False
    kind, known = torch_nn_kind(last, call)
    return known and (kind is None or last in OWN_FLAG)


__all__ = ["flags_reach_all"]

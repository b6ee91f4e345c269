"""A part built in place as `nn.Sequential(nn.Conv2d(...), nn.BatchNorm2d(...), ...)`: its
direct children are its arguments, so a loop setting each child's `training` flag
(`direct_children`) switches every mode-dependent module of it exactly when each argument is a
construction of a `torch.nn` class whose mode is its own flag (`model_torch_nn.OWN_FLAG`) or
one whose behaviour no mode changes. Read on torch 2.13 (`for m in model.body.children():
m.training = False` on such a part: its batch norm and dropout capture in eval mode); a
container among the arguments (`nn.Sequential(Body())`, `nn.Sequential(nn.Sequential(...))`)
keeps what it holds in train mode.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_torch_nn import CONTAINERS, OWN_FLAG, torch_nn_kind


def flags_reach_all(built) -> bool:
    """`built` (a part's construction, `held_parts.part_build`) is `nn.Sequential(...)` of
    `torch.nn` constructions each of whose mode is its own flag, or which has none."""
    call = built.call
    if built.resolver.qualname(call.func) != "torch.nn.Sequential" or call.keywords:
        return False
    for arg in call.args:
        if not isinstance(arg, ast.Call):
            return False  # a module named elsewhere, `*layers`: not read
        name = built.resolver.qualname(arg.func) or ""
        last = name.rpartition(".")[2]
        if not name.startswith("torch.nn.") or name.count(".") != 2 or last in CONTAINERS:
            return False
        kind, known = torch_nn_kind(last, arg)
        if not known or (kind is not None and last not in OWN_FLAG):
            return False
    return True


__all__ = ["flags_reach_all"]

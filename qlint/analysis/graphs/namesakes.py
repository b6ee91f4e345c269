"""Other modules that spell a pass's name only for a function of their own (QL101, QL102).

A public pass of a module may be called from any module of the project that spells its name,
with graphs the pass's own module never sees. A module that defines a function of the same
name at module level and names it by no import (nor takes `*` from one), no attribute
(`importer.name`) and no string (`getattr(importer, "name")`) calls its own function, not the
pass: SHARK's Stable Diffusion training script has its own `transform_fx`.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.init_fields import modules_naming

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def named_only_by_namesakes(ctx: FileContext, name: str) -> bool:
    """Whether every other module of the project that spells `name` spells it only for a
    function of its own of that name."""
    return all(own_namesake(other, name) for other in modules_naming(ctx, name))


def own_namesake(other: FileContext, name: str) -> bool:
    """Whether every spelling of `name` in the module `other` is its own function of that name."""
    if not isinstance(other.scope.functions.get(name), _FUNCS):
        return False
    for node in ast.walk(other.tree):
        if isinstance(node, ast.alias) and (node.name == "*" or name in (node.asname, *node.name.split("."))):
            return False
        if isinstance(node, ast.Attribute) and node.attr == name:
            return False
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and name in node.value:
            return False
    return True

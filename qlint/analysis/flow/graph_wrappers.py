"""Module classes of the project that hold an exported graph as a submodule (QL203):
`class Wrapper(nn.Module)` whose `__init__` stores its parameter (`self.gm = gm`), then
`Wrapper(gm).eval()`; or an instance given the graph later (`w.gm = gm`).

Measured on torch 2.13 / torchao 0.18 with graphs from `.module()`, `prepare_pt2e` and
`convert_pt2e`: `nn.Module.__setattr__` registers the graph as a submodule and
`Module.eval()`/`.train()` call every submodule's `train()`, so the wrapper's switch reaches
the graph's raising override, as for torch's containers (`graph_holders`); so does a subclass's
and one filled with `add_module`. Nothing raises when the graph was allowed first (before or
after it is stored), when the graph or the wrapper is a copy, when the graph is kept where
`__setattr__` does not register it (a list, `object.__setattr__`, `self.__dict__[...]`), or when
the class overrides `eval`/`train` without calling the base's. So only a class whose bases
reach `torch.nn.Module` through classes of the project, none of which defines `eval` or
`train`, is followed, for the attributes its `__init__` stores as they came and no method
changes (`stored_fields`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_values import CONSTRUCTED, Obj
from qlint.analysis.names.resolver import Resolver

_MODULE = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
_SWITCHES = frozenset({"eval", "train"})
_DEPTH = 4


def wrapper_fields(owner, cls) -> dict:
    """Attribute -> the construction argument (`stored_fields.Field`) that a plain module class
    of the project (`cls`, a `resolved_classes.ModelClass`) registers as a submodule; empty when
    the class is none (`owner`: the `ModelFlow` whose class index resolves its bases)."""
    return owner.stored_fields(cls) if plain_module(owner, cls) else {}


def plain_module(owner, cls, depth: int = 0) -> bool:
    """`cls` derives from `torch.nn.Module` through classes of the project, and none of them
    defines `eval` or `train`: `Module`'s own switch runs, over every submodule."""
    node = cls.node
    if depth > _DEPTH or any(_names_switch(s) for s in node.body):
        return False
    resolver = Resolver(cls.scope, owner.project, owner.optable)
    module = False
    for base in node.bases:
        if resolver.qualname(base) in _MODULE:
            module = True
            continue
        found = owner.classes.resolve(base, resolver, cls.around or {})
        if found is None:
            return False  # a class we cannot read may define its own switch
        if _mixin(found, resolver):
            if any(_names_switch(s) for s in found.node.body):
                return False
            continue
        if not plain_module(owner, found, depth + 1):
            return False
        module = True
    return module


def _mixin(cls, resolver: Resolver) -> bool:
    """A class of the project with no base but `object`."""
    return all(isinstance(b, ast.Name) and b.id == "object" for b in cls.node.bases) and not cls.node.keywords


def constructed_plain(owner, holder: Obj) -> bool:
    """`holder` is, on every path, a construction of a plain module class of the project."""
    return bool(holder.origins) and all(
        o.kind == CONSTRUCTED and o.built is not None and o.built.cls is not None and plain_module(owner, o.built.cls)
        for o in holder.origins
    )


def _names_switch(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return stmt.name in _SWITCHES
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return any(isinstance(t, ast.Name) and t.id in _SWITCHES for t in targets)
    return False


__all__ = ["constructed_plain", "plain_module", "wrapper_fields"]

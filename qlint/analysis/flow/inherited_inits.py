"""The `__init__` a construction of a project class runs, its own or inherited (issue 14), for
the readings that need every part the model holds to come from it (`evaled_fields`,
`direct_children`):

    class Wrapper(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = Net()

        def eval(self):
            self.model.eval()
            return self

    class Quantized(Wrapper):
        def forward(self, x): ...

`Quantized()` runs `Wrapper.__init__`, so `self.model` holds what that stores (read on torch
2.13: `Quantized().eval()` captures Net's batch norm and dropout in eval mode). Followed only
where the lookup is plain: each class from the constructed one up has one base (and no
metaclass), a class of the project that resolves, until one writes `__init__`.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.evaled_parts import switches_no_part
from qlint.analysis.flow.model_classes import in_check
from qlint.analysis.flow.resolved_classes import NO_PROJECT, ModelClass
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import own_init

_MAX_DEPTH = 4


def plain_init(built) -> tuple[ModelClass, ast.FunctionDef] | None:
    """(the class whose `__init__` runs, that `__init__`) for `built` (a `built_models.Built`),
    one construction of a class of the project read in full, when no class from its own up to
    that one switches a mode or adds a part outside that `__init__` (`switches_no_part`); None
    otherwise."""
    cls = getattr(built, "cls", None)
    if cls is None or cls.summarised or cls.around is not None:
        return None
    found = _running_init(in_check(built.index), cls)
    if found is None or not all(switches_no_part(c.node) for c in found[0]):
        return None
    return found[0][-1], found[1]


def _running_init(index, cls: ModelClass) -> tuple[list[ModelClass], ast.FunctionDef] | None:
    """(the classes from `cls` up to the one whose `__init__` runs, that `__init__`), found
    through `index` (a `model_classes.ClassIndex`); None where the lookup is not plain."""
    chain = [cls]
    for _ in range(_MAX_DEPTH):
        init = own_init(cls.node)
        if init is not None:
            return chain, init
        if len(cls.node.bases) != 1 or cls.node.keywords:
            return None
        base = index.resolve(cls.node.bases[0], Resolver(cls.scope, NO_PROJECT, None), cls.around or {})
        if base is None or base.around is not None or any(base.node is c.node for c in chain):
            return None
        cls = base
        chain.append(cls)
    return None


__all__ = ["plain_init"]

"""An attribute of a construction written as an element of a container (issue 14, item 7;
ExecuTorch's Qualcomm multi-graph tests).

    seq_conv = Conv2dSequential()
    modules = [seq_conv, seq_conv.second]          # weight sharing: the whole and one conv
    for module, inputs in zip(modules, sample_inputs):
        self.get_qdq_module(module, inputs)

`seq_conv.second` is a submodule of the model built on the line before: whatever it is, what
it holds is among what the whole holds (its class's content is read in full: every module
its methods build), and it is in whatever mode the whole left it. The walk gives it a value
of its own (`BUILT_PART`, unset mode, whose `Origin.built` is the whole's construction), so a
loop over the container binds its items instead of leaving them unknown, and a verdict that
the whole is known in full with nothing mode-dependent, and not given parts after its build,
holds for the part too. Only as an element: a name bound to the part (`sec = seq.second`) could
be given parts that no name of the whole shows, and stays a value the walk does not follow.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_env import Env, new_value
from qlint.analysis.flow.model_values import BUILT_PART, CONSTRUCTED, Obj, Origin


def built_part(e: ast.Attribute, env: Env) -> Obj | None:
    """The value of `e` (`seq.second`, an attribute chain of a name holding one construction),
    or None when it is no such part."""
    root = e.value
    while isinstance(root, ast.Attribute):
        root = root.value
    whole = env.vars.get(root.id) if isinstance(root, ast.Name) else None
    if whole is None or len(whole.origins) != 1:
        return None
    (origin,) = whole.origins
    if origin.kind != CONSTRUCTED or origin.built is None:
        return None
    return new_value(env, e, "", Origin(BUILT_PART, e, built=origin.built))


__all__ = ["built_part"]

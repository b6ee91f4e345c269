"""A list comprehension that builds one model per item of a table of constants, bound to a
name: the models it holds (issue 14, item 7).

ExecuTorch's Qualcomm grid_sample test writes

    grid_samples = [
        GridSample(mode, pad, align)
        for mode, pad, align in itertools.product(modes, padding_modes, align_corners)
    ]
    for i, module in enumerate(grid_samples):
        module = self.get_qdq_module(module, sample_inputs[j], quant_dtype=...)

Each element is a fresh construction of the class, made with constants: a model in the mode
its construction leaves it in, whose content is read from its class (the arguments hold no
module, `constant_values`). A loop over the name then binds its target to that construction
(`loop_items`), instead of to a model of unknown mode.

What is followed is strict: the element is a call the walk reads as a construction, every
argument of which holds constants only (no starred or `**` argument), and every generator
walks a value that holds constants only (`range`, `itertools.product` of lists of constants),
with names for targets: nothing but the constructions runs, and no model reaches them. The
conditions of the generators may leave some out: the list holds some of those models.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.constant_values import holds_constant
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import Obj


def elements(walk, comp: ast.ListComp, env: Env) -> list[Obj] | None:
    """The models the comprehension `comp` holds (one value for the construction each element
    is), or None when it is not of that form. `walk` is the function's walk (`model_interp`)."""
    call = comp.elt
    if not isinstance(call, ast.Call) or not all(_plain(gen) for gen in comp.generators):
        return None
    if any(isinstance(a, ast.Starred) for a in call.args) or any(kw.arg is None for kw in call.keywords):
        return None
    resolver = walk.resolver
    values = [*call.args, *(kw.value for kw in call.keywords)]
    tested = [*(gen.iter for gen in comp.generators), *(c for gen in comp.generators for c in gen.ifs)]
    if not all(holds_constant(walk.func, e, resolver) for e in (*values, *tested)):
        return None
    # The targets are the comprehension's own: an outer value of the same name is not what
    # the element reads (and holds no module the construction could be given).
    targets = {n.id for gen in comp.generators for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
    hidden = {name: env.vars.pop(name) for name in targets if name in env.vars}
    try:
        made = walk.expr(call, env)
    finally:
        env.vars.update(hidden)
    if made is None or walk.calls.builds.cache.get(id(call)) is None:
        return None  # no construction the walk reads (a function, a factory)
    return [made]


def _plain(gen: ast.comprehension) -> bool:
    return not gen.is_async and _names(gen.target)


def _names(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(_names(t) for t in target.elts)


__all__ = ["elements"]

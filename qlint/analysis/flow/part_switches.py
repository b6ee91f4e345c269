"""The walk's side of `part_modes`: a `.train()`/`.eval()` of a part of a model the walk holds
(`m.encoder.train()`, `m.layers[0].eval()`, `getattr(m, "encoder").train()`, or through a name
bound to the part, `enc = m.encoder; enc.train()`), read with the path reader the wrappers of
parts use (`held_parts.HeldParts.path`), recorded on the model's facts with what the part holds.

What the part holds comes from the model's construction, through the attributes its class's
`__init__` stores (`held_parts.part_build`); an item of a part (`m.layers[0]`) is judged by the
part it is taken from. A part that cannot be followed there (a parameter, a factory's model, an
attribute built outside `__init__`) is of unknown content, as a whole model whose class does not
resolve is: kept, and reported.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.evaled_fields import evaled_whole, holds_the_mode
from qlint.analysis.flow.held_parts import part_build
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.part_modes import switched


def part_switch(sem, node: ast.Call, mode: str | None, env: Env) -> None:
    """Record the switch `node` (to `mode`; None: `.train(flag)`) of a part on its model's facts."""
    path = sem.held_parts.path(node.func.value, env, items=True)
    if path is None or not path[1]:
        return  # the whole model: its own facts were just set
    root, steps = path
    if root.is_graph or root not in env.modes:
        return
    if mode == "eval" and evaled_whole(root, steps, node, env):
        return  # `w.model.eval()` of a wrapper holding nothing else that depends on the mode
    facts = env.modes[root]
    dependent = part_dependent(sem, root, steps) if mode is not None else ()
    decides = mode == "train" and holds_the_mode(root, steps, env, "eval")  # the QAT mirror
    env.modes[root] = frozenset(switched(f, steps, mode, node, dependent, decides=decides) for f in facts)


def part_dependent(sem, root, steps: tuple[str, ...]) -> tuple[str, ...] | None:
    """What the part at `steps` of `root` holds that depends on the mode (None: not known)."""
    content = part_content(sem, root, steps)
    if content is None:
        return None
    if content[0]:
        return content[0]
    return () if content[1] else None


def part_content(sem, root, steps: tuple[str, ...]) -> tuple[tuple[str, ...], bool] | None:
    """(what the part at `steps` of `root` holds that depends on the mode, whether that is all);
    None when the part's build is not known."""
    attrs = []
    for step in steps:
        if step.startswith("["):
            break
        attrs.append(step)
    built = part_build(sem.owner, (root, tuple(attrs)))
    if built is None:
        return None
    content = built.content()
    return tuple(content.dependent), content.complete

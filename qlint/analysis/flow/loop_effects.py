"""The walk's side of `looped_switches`: what a loop over a model's modules, or `m.apply(fn)`,
that switches them does to the model's facts.

- Every module (no test, or `isinstance(mod, nn.Module)`), or every module of the classes that
  hold all of the model's mode-dependent content (`isinstance(mod, (nn.BatchNorm2d,
  nn.Dropout))` on a model whose content is known to hold only those): the model, or the part
  walked, is in that mode, as after `m.eval()` (`m.encoder.eval()`).
- The modules of some classes only: a `PartMode` of those classes (`part_modes.kinds_switched`),
  naming what of the model's content they are; the other modules keep the model's mode, so a
  PTQ capture after `m.train()` and a batch-norm freeze stays a train-mode capture, and a QAT
  capture after it has its batch norms in eval mode.
- `children()` switches the direct children, not the model itself: taken as the model's
  switch unless the model's content reads `self.training` (the model's own flag would then
  differ); with a class test, only children of those classes, not the modules inside others:
  not followed. Setting each child's `training` flag there switches nothing inside a child:
  taken as the model's switch only where every mode-dependent module is a direct child
  (`direct_children`).
- Every module of a part that holds all the model's mode-dependent content, to eval mode
  (`for m in model.body.modules(): m.eval()`): the model's switch, as `model.body.eval()` is
  (`evaled_fields.evaled_whole`); to train mode after the whole's eval, the QAT mirror, as
  `model.body.train()` is (`part_modes.PartMode.decides`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.class_filters import EVERY, covered, named, selected
from qlint.analysis.flow.direct_children import every_part_direct
from qlint.analysis.flow.evaled_fields import evaled_whole, holds_the_mode
from qlint.analysis.flow.looped_switches import ClassName, LoopSwitch
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import ModeFact
from qlint.analysis.flow.part_modes import kinds_switched, switched
from qlint.analysis.flow.part_switches import part_content

_TRAINING = "`self.training`"


def modules_switched(
    sem, over: ast.expr, reach: str, found: LoopSwitch, anchor: ast.AST, env: Env, qualname, at: ast.AST
) -> bool:
    """Record on the facts of the model `over` reaches that `found` switched its modules
    (`reach`: "all" or "children"); `anchor` is the node the messages name, `qualname` reads
    the test's classes where they are written, `at` is the call or loop doing it. False when
    nothing was recorded."""
    path = sem.held_parts.path(over, env, items=True)
    if path is None:
        return False
    root, steps = path
    if root.is_graph or root not in env.modes:
        return False
    classes = EVERY if found.filters is None else _classes(found.filters, qualname)
    if classes is None or (reach == "children" and classes is not EVERY):
        return False
    if reach == "children" and found.flag and not every_part_direct(sem, over, root, steps, env.modes[root]):
        return False  # a flag of each child alone: what they hold keeps its mode
    content = part_content(sem, root, steps)
    if reach == "children" and (content is None or _TRAINING in content[0]):
        return False
    mode = found.mode
    if classes is EVERY and steps and mode == "eval" and evaled_whole(root, steps, anchor, env):
        sem.held_parts.restored_at(over, env)  # the part held all the model's mode: as `m.eval()`
    elif classes is EVERY:
        decides = bool(steps) and mode == "train" and holds_the_mode(root, steps, env, "eval")  # the QAT mirror
        env.modes[root] = _whole(sem, root, steps, mode, anchor, content, over, env.modes[root], decides)
        if mode == "train":  # `w = Wrapper(m.encoder)` before: what it holds is trained too
            sem.held_parts.trained_at(at, over, anchor, sem.walk, env)
        elif mode == "eval":  # and back: the wrapper is as it was built
            sem.held_parts.restored_at(over, env)
    else:
        env.modes[root] = _kinds(sem, root, steps, mode, anchor, content, over, classes, env.modes[root])
    return True


def handed_kinds(sem, obj, facts: frozenset, part, anchor: ast.AST, over: ast.expr) -> frozenset:
    """The caller's `facts` of `obj` after a helper it was handed to switched the modules of
    `part.kinds` in it (`freeze_bn(model)`): judged by what the caller's model holds."""
    return _kinds(sem, obj, (), part.state, anchor, part_content(sem, obj, ()), over, part.kinds, facts)


def kinds_in(fact) -> bool:
    """A helper switched the modules of some classes of the model it was handed (`freeze_bn`)."""
    return any(p.kinds is not None and not p.steps for p in fact.parts)


def _kinds(sem, root, steps, mode, anchor, content, over, classes: frozenset, facts: frozenset) -> frozenset:
    """`facts` after the modules of `classes` in the model (or its part at `steps`) were switched."""
    out: set = set()
    for f in facts:
        # `m.apply(set_bn_eval); m.apply(set_dropout_eval)`: the classes both switched.
        earlier = [p.kinds for p in f.parts if p.kinds is not None and p.steps == steps and p.state == mode]
        joined = classes.union(*earlier)
        if content is not None and content[1] and len(covered(content[0], joined)) == len(content[0]):
            out |= _whole(sem, root, steps, mode, anchor, content, over, frozenset({f}))
            continue
        dependent = _dependent(content, covered(content[0], joined) if content is not None else ())
        out.add(kinds_switched(f, steps, mode, anchor, dependent, over, joined))
    return frozenset(out)


def _classes(filters, qualname):
    """What the test selects (`class_filters`): class-name tests, or `isinstance` classes."""
    if all(isinstance(f, ClassName) for f in filters):
        return named(filters)
    if any(isinstance(f, ClassName) for f in filters):
        return None
    return selected([qualname(e) for e in filters])


def _whole(sem, root, steps, mode, anchor, content, over, facts: frozenset, decides: bool = False) -> frozenset:
    """`facts` after every module of the model (or of its part at `steps`) was switched
    (`decides`: the part holds all of the model's mode-dependent content)."""
    if not steps:
        sem.walk.containers.switched(root)
        return frozenset({ModeFact(mode or "unknown", anchor)})
    dependent = _dependent(content, content[0] if content is not None else ())
    return frozenset(switched(f, steps, mode, anchor, dependent, over, decides) for f in facts)


def _dependent(content, chosen: tuple[str, ...]) -> tuple[str, ...] | None:
    """What the switched modules hold that depends on the mode (`()`: nothing, None: not known)."""
    if chosen:
        return chosen
    return () if content is not None and content[1] else None


__all__ = ["handed_kinds", "kinds_in", "modules_switched"]

"""Parts of a model switched to another mode than the whole (`m.eval(); m.encoder.train()`).

`Module.train(mode)` sets the module and every submodule, so a part switched after the whole
model keeps its own mode until the whole is switched again. A capture then bakes that mixed
mode in: a PTQ capture with a train-mode part holding dropout or batch norm calibrates as a
train-mode capture would, and a QAT capture with an eval-mode part holding them trains it
with dropout off and frozen batch-norm statistics.

A model's `ModeFact` keeps such switches as `PartMode`s (`ModeFact.parts`): the whole model's
state stays what its last whole switch said, and each flow reads the fact in the mode that is
wrong for it (`for_flow`), so QL201 sees a PTQ capture with a train-mode part as one in train
mode and QL202 a QAT capture with an eval-mode part as one in eval mode. Only parts that hold
something whose behaviour depends on the mode, or whose content is not known (as for a whole
model whose class does not resolve), are kept: switching a `Linear` changes no graph. A later
switch of the part, of a module on the way to it, or of the whole model undoes it.

Plain data: the walk (`part_switches`) decides what a switch reached; this module only keeps it.
"""

from __future__ import annotations

import ast

from qlint.value_classes import replace, value_class


@value_class(frozen=True)
class PartMode:
    """A part of the model at `steps` (attribute names; `[]` for an item) set to `state` by `switch`."""

    steps: tuple[str, ...]
    state: str  # "eval" or "train"
    switch: ast.Call
    # What in the part depends on the mode (`("BatchNorm2d", "Dropout")`); None: its content is not known.
    dependent: tuple[str, ...] | None
    # The part as written where its modules were switched one at a time (`looped_switches`:
    # `m.encoder` of `for mod in m.encoder.modules(): mod.train()`); None: `switch`'s receiver.
    over: ast.expr | None = None
    kinds: frozenset[str] | None = None  # the torch.nn classes such a switch selects (`class_filters`)
    # The part holds all of the model's mode-dependent content (`evaled_fields.holds_the_mode`):
    # trained after the whole's eval, it trains all that matters, so QAT reads the model so.
    decides: bool = False


def switched(
    fact, steps: tuple[str, ...], state: str | None, switch: ast.Call, dependent, over=None, decides: bool = False
) -> object:
    """`fact` after the part at `steps` was switched to `state` (None: `.train(flag)`, a mode not
    known, which keeps no part, as the whole model's unknown mode reports nothing). `dependent`:
    what the part holds that depends on the mode (`()`: nothing, None: not known); `decides`:
    the part holds all of it (`PartMode.decides`)."""
    kept = tuple(p for p in fact.parts if p.steps[: len(steps)] != steps)  # those inside it are set too
    if state is None or dependent == ():
        return replace(fact, parts=kept) if kept != fact.parts else fact
    enclosing = [p for p in kept if p.kinds is None and steps[: len(p.steps)] == p.steps]
    before = max(enclosing, key=lambda p: len(p.steps)).state if enclosing else fact.state
    if before == state:
        return replace(fact, parts=kept) if kept != fact.parts else fact
    return replace(fact, parts=(*kept, PartMode(steps, state, switch, dependent, over, decides=decides)))


def kinds_switched(fact, steps, state: str | None, switch: ast.AST, dependent, over: ast.expr, kinds: frozenset):
    """`fact` after the modules of some classes in the part at `steps` (or the whole model)
    were switched to `state`: `dependent`, what of the part's mode-dependent content they are
    (None: not known). It replaces an earlier such switch of the same part; switches of single
    parts stay, as the modules of other classes in them keep their mode."""
    kept = tuple(p for p in fact.parts if p.kinds is None or p.steps != steps)
    if state is None or state == fact.state or dependent == ():
        return replace(fact, parts=kept) if kept != fact.parts else fact
    return replace(fact, parts=(*kept, PartMode(steps, state, switch, dependent, over, kinds)))


def for_flow(fact, flow: str):
    """The fact as the `flow` ("ptq" or "qat") must read it: in train mode for PTQ when a part
    is, in eval mode for QAT when a part is; the part's switch is then where the mode was set."""
    if not fact.parts:
        return fact
    wrong = "train" if flow == "ptq" else "eval"
    if fact.state == wrong:
        return _decided(fact) if flow == "qat" else fact
    found = [p for p in fact.parts if p.state == wrong]
    if not found:
        return fact
    part = found[-1]
    return replace(fact, state=wrong, node=part.switch, parts=(part,))


def _decided(fact):
    """An evaled whole as QAT reads it: in train mode where a part holding all of its
    mode-dependent content was trained since (`model.eval(); model.body.train()`) and no part
    of it was evaled again."""
    if any(p.state == "eval" for p in fact.parts):
        return fact
    part = next((p for p in reversed(fact.parts) if p.decides and p.state == "train"), None)
    return fact if part is None else replace(fact, state="train", node=part.switch, parts=(part,))


def handed(facts: frozenset, flows: set[str]) -> frozenset:
    """The facts of a model handed to a helper whose captures of it reach `flows`: read as that
    flow reads them when there is one (the helper's capture is judged by its callers' facts);
    as they are when the helper captures it for both or for neither."""
    if len(flows) != 1:
        return facts
    (flow,) = flows
    return frozenset(for_flow(f, flow) for f in facts)


def taken_part(fact, steps: tuple[str, ...]):
    """`fact` of a model, for its part at `steps` taken out (a wrapper of `m.encoder`): only the
    switches of that part, of modules inside it, or of a module on the way to it still apply."""
    if not fact.parts:
        return fact
    kept = tuple(p for p in fact.parts if p.steps[: len(steps)] == steps or steps[: len(p.steps)] == p.steps)
    return replace(fact, parts=kept) if kept != fact.parts else fact


def taken_out(fact, steps: tuple[str, ...]):
    """`fact` after the part at `steps` was replaced by another module: the old part's switches,
    and those of modules inside it, are gone with it."""
    if not fact.parts:
        return fact
    kept = tuple(p for p in fact.parts if p.steps[: len(steps)] != steps)
    return replace(fact, parts=kept) if kept != fact.parts else fact


def described(fact, source) -> str | None:
    """The words for a fact `for_flow` moved to a part's mode (`source`: an expression's text)."""
    if len(fact.parts) != 1 or fact.node is not fact.parts[0].switch:
        return None
    part = fact.parts[0]
    switch = part.switch
    held = part.dependent
    if part.kinds is not None:
        return _described_kinds(part, source)
    if part.over is None and not isinstance(switch.func, ast.Attribute):
        return None  # `setattr(model, "head", m)`: no switch of a part (`given_setters`)
    named = part.over if part.over is not None else switch.func.value
    text = f"with `{source(named)}` in {part.state} mode after `{source(switch)}` at line {switch.lineno}"
    if held:
        names = ", ".join(held[:-1]) + f" and {held[-1]}" if len(held) > 1 else held[0]
        names = names.replace("`self.training`", "code reading `self.training`")
        text += f", which holds {names}"
    return text


def _described_kinds(part: PartMode, source) -> str:
    held = part.dependent
    names = (", ".join(held[:-1]) + f" and {held[-1]}" if len(held) > 1 else held[0]) if held else ""
    names = names.replace("`self.training`", "code reading `self.training`")
    if not held and part.kinds and len(part.kinds) <= 3:  # what the model holds is not known: what was switched
        held = tuple(sorted(part.kinds))
        names = ", ".join(held[:-1]) + f" and {held[-1]}" if len(held) > 1 else held[0]
    what = f"every {names} of `{source(part.over)}`" if held else f"the modules of `{source(part.over)}` it selects"
    return f"with {what} in {part.state} mode after `{source(part.switch)}` at line {part.switch.lineno}"

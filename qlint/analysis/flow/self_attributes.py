"""`self.<attr>` first read in a method (`model_interp`): the value the class set it to
elsewhere, in the mode its stores leave it (`model_attrs`, `init_calls`, `field_instances`),
or a model in an unknown mode.

`walk` is the function's walk (`model_interp.Interpreter`, not imported: it imports this).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.field_instances import written_in_class_only
from qlint.analysis.flow.init_calls import evaled_before_call
from qlint.analysis.flow.model_attrs import Evaled, InMode, Stored, given_parts
from qlint.analysis.flow.model_env import Env, new_value
from qlint.analysis.flow.model_values import (
    ATTRIBUTE,
    CALLED_AFTER_STORE,
    CONSTRUCTED,
    IN_MODE,
    STORED,
    ModeFact,
    Obj,
    Origin,
)
from qlint.analysis.flow.switched_params import Switched
from qlint.value_classes import replace


def first_read(walk, name: str, env: Env) -> Obj:
    """`self.<attr>` first read in this method: it was set elsewhere in the class."""
    source = walk.owner.attribute_sources(walk.class_scope, walk.resolver).get(name)
    held = None
    if isinstance(source, ast.Call):
        built = walk.calls.builds.built_in_class(source)
        given = given_parts(walk.class_scope.node).get(name)
        if given:  # parts built in train mode, given to it in a method of the class
            built = replace(built, given=tuple(walk.calls.builds.built_in_class(c) for c in given))
        held = Origin(CONSTRUCTED, source, built=built)
        facts = {ModeFact("train", source, held)}
    elif isinstance(source, Evaled) and not source.passed_on_in - {id(walk.func)}:
        held = Origin(CONSTRUCTED, source.call, built=walk.calls.builds.built_in_class(source.call))
        facts = {ModeFact("eval", source.switch, held)}
    elif isinstance(source, Switched) and not source.passed_on_in - {id(walk.func)}:
        # `module.eval()` then `self.model = module` in `__init__`: the caller's object, in
        # that mode (its constructions decide what it holds).
        held = Origin(STORED, source.init, source.index, source.param)
        facts = {ModeFact(source.mode, source.switch, held)}
        branch = source.branch
        if branch is not None:
            # The other arm of `if training: module.train() else: module.eval()`: the
            # constructions' flags decide which ran (`constructor_flags`).
            other = branch.other
            facts.add(ModeFact("train", other, held) if other is not None else ModeFact("unset", source.target, held))
    elif isinstance(source, Stored) and not source.passed_on_in - {id(walk.func)}:
        # Stored from `__init__` and handed to nothing elsewhere: what the caller passed.
        held = Origin(STORED, source.init, source.index, source.param)
        facts = {ModeFact("unset", source.target, held)}
    elif isinstance(source, InMode) and not source.passed_on_in - {id(walk.func)} and _in_class_only(walk, name):
        # Every store of it in the class is of a model in a known mode, switched nowhere
        # since (`model.eval()` then `self.model = model` in `__call__`).
        held = Origin(IN_MODE, walk.func, name=name)
        facts = {ModeFact(mode, switch, held) for mode, switch in source.stores}
    if (
        held is None
        and walk.class_scope is not None
        and (switch := evaled_before_call(walk.owner.scope, walk.class_scope.node, walk.func, name))
    ):
        # A private method another method of the class calls once, right after storing an
        # eval-mode model in the attribute (`init_calls`).
        held = Origin(CALLED_AFTER_STORE, walk.func, name=name)
        facts = {ModeFact("eval", switch, held)}
    origin = Origin(ATTRIBUTE, walk.func, name=name, source=held)
    if held is None:
        facts = {ModeFact("unknown", None, origin)}
    obj = new_value(env, walk.func, name, origin, facts)
    env.vars[name] = obj
    if env.unread is not None:
        env.unread.setdefault(name, (obj, env.modes[obj]))
    return obj


def _in_class_only(walk, name: str) -> bool:
    """Nothing of the module but the class's own stores writes the attribute (no subclass
    here, no write from outside, no base of another module: `field_instances`)."""
    cls = walk.class_scope.node
    top = walk.owner.scope.classes.get(cls.name)
    return top is not None and top.node is cls and written_in_class_only(walk.owner.scope, cls, name[5:])

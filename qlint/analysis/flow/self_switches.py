"""A helper handed a method's own `self` that switches a field of what it is given (issue 14,
item 2): `set_train(self)` with `def set_train(e): e.model.train()` switches `self.model` at
the call, as `self.model.train()` written there would (`handed_self` says which other
methods' calls may change a field; this is the walk of the method making the call).

The helper's switches of `<param>.<attr>` are its `FunctionFlow.part_switches`, on every path
of its own or in a branch of its own: one in a branch the call's arguments rule out is none,
one in a branch they leave open joins the modes the field had. An exported graph held there
refuses the switch (`handed_switches.handed_part_switches` reports it, QL203).

A method of the class called on `self` before a capture in the same method (`self.tune()`,
where `tune` runs `self.model.train()` or hands `self` or `self.model` to a helper that does)
is read the same way (`switch_by_own_method`): each field `tune` read from the class leaves it
in the modes `tune`'s ends hold it in, a path that did not switch it in the modes it had here;
the message names the call ("after `self.tune()` at line N"), the method the reader meets.
The method is the one the walk resolved (on the class or a base the project defines); one a
subclass in the module overrides may run instead, and leaves the field unknown. `self.eval()`
of a module class, which reaches every submodule, switches every field (`switch_own_module`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.class_methods import method_of
from qlint.analysis.flow.dead_branches import contradicted_at_call, open_ended
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import PARAM, ModeFact
from qlint.analysis.flow.self_attributes import first_read
from qlint.value_classes import replace


def switch_own_fields(sem, node: ast.Call, callee, actual: dict, env: Env) -> None:
    """At a call handing this method's `self` to a helper that switches `<param>.<attr>`
    (`callee.part_switches`): `self.<attr>` is switched here too. A switch in a branch of the
    helper's that the call's arguments do not rule out joins the modes the field had."""
    walk = sem.walk
    if walk.class_scope is None:
        return
    written = {i: expr for i, (_, expr) in actual.items()}
    foreign = callee.path != sem.flow.path
    for (index, attr), switch in callee.part_switches.items():
        obj, expr = actual.get(index, (None, None))
        if not (isinstance(expr, ast.Name) and expr.id == "self") or obj is None or not _own_self(obj, walk.func):
            continue
        if switch.guard and contradicted_at_call(
            switch.guard, callee.node, written, sem.resolver, callee.resolver, open_ended(node)
        ):
            continue
        name = f"self.{attr}"
        field = env.vars.get(name)
        if field is None:
            field = first_read(walk, name, env)
        if field.is_graph:
            continue  # an exported graph refuses the switch (`handed_part_switches`, QL203)
        fact = ModeFact(switch.mode or "unknown", node if foreign else switch.call)
        env.modes[field] = env.facts(field) | {fact} if switch.guard else frozenset({fact})
        walk.containers.switched(field)


def switch_by_own_method(sem, node: ast.Call, callee, actual: dict, env: Env) -> None:
    """At `self.<method>(...)` (`callee`, `self` filling its first parameter): each field of
    `self` the method read from the class and switched on some path is left here in the
    modes the method's ends leave it in (a path that left it as it came: its modes here). A
    method that rebinds the field on some path is left to what the walk reads of it."""
    walk = sem.walk
    if walk.class_scope is None or not callee.returns or not callee.returns[0][0].unread:
        return
    obj, expr = actual.get(0, (None, None))
    if not (isinstance(expr, ast.Name) and expr.id == "self") or obj is None or not _own_self(obj, walk.func):
        return
    written = {i: e for i, (_, e) in actual.items()}
    ended = open_ended(node)
    for name, (entry, came_in) in callee.returns[0][0].unread.items():
        came = None
        own: set[ModeFact] = set()
        kept = False  # some path leaves it as it came
        for end, _ in callee.returns:
            field = end.vars.get(name)
            facts = end.facts(field) if field is entry else None
            if field is None or facts == came_in:
                kept = True
                continue
            if facts is None:
                own = set()
                break  # rebound there (`self.model = Net()`): not the object this method holds
            if came is None:
                came = {_bare(f) for f in came_in}
            for fact in facts:
                if _bare(fact) in came:
                    kept = True
                elif not fact.guard or not contradicted_at_call(
                    fact.guard, callee.node, written, sem.resolver, callee.resolver, ended
                ):
                    own.add(replace(fact, guard=frozenset(), node=node))  # named by the call: `self.tune()`
        if not own:
            continue
        field = env.vars.get(name)
        if field is None:
            field = first_read(walk, name, env)
        if field.is_graph:
            continue  # an exported graph refuses the switch (QL203 reads it)
        if _overridden(sem, callee.node.name):
            env.modes[field] = frozenset({ModeFact("unknown", node)})
        else:
            env.modes[field] = frozenset(own | (env.facts(field) if kept else set()))
        walk.containers.switched(field)


def switch_own_module(sem, node: ast.Call, receiver, mode: str | None, env: Env) -> None:
    """At `self.eval()` / `self.train()` of a class with a base, neither defining the method in
    the module (`Module.train`, which reaches every submodule): each field the class sets (`attribute_sources`)
    or this method read is switched with it, in place (an exported graph held there refuses it:
    QL203's concern)."""
    walk = sem.walk
    cls = walk.class_scope
    if cls is None or not cls.key_node().bases or not _own_self(receiver, walk.func):
        return
    if method_of(cls, node.func.attr, walk.owner.scope) is not None:
        return  # the class's own `train`, or a base's of its module: a method the walk reads
    names = {n for n in env.vars if n.startswith("self.") and "." not in n[5:]}
    names |= walk.owner.attribute_sources(cls, walk.resolver).keys()
    for name in sorted(names):
        field = env.vars.get(name)
        if field is None:
            field = first_read(walk, name, env)
        if not field.is_graph:
            env.modes[field] = frozenset({ModeFact(mode or "unknown", node)})
            walk.containers.switched(field)


def _bare(fact: ModeFact) -> ModeFact:
    """The fact as it came into a method, before the method's branches guarded it."""
    return replace(fact, guard=frozenset(), parts=())


def _overridden(sem, method: str) -> bool:
    """A class of the module deriving from the walk's class (through others of the module)
    defines `method`: an instance of it runs that one."""
    classes = sem.owner.scope.classes
    below = {sem.walk.class_scope.key_node().name}
    grown = True
    while grown:
        grown = False
        for name, cls in classes.items():
            if name not in below and any(_base_name(b) in below for b in cls.key_node().bases):
                below.add(name)
                grown = True
                if method in cls.methods:
                    return True
    return False


def _base_name(base: ast.expr) -> str | None:
    if isinstance(base, ast.Name):
        return base.id
    return base.attr if isinstance(base, ast.Attribute) else None


def _own_self(obj, func: ast.AST) -> bool:
    return len(obj.origins) == 1 and all(o.kind == PARAM and o.node is func and o.name == "self" for o in obj.origins)


__all__ = ["switch_by_own_method", "switch_own_fields", "switch_own_module"]

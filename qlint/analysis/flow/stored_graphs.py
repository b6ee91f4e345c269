"""`Trainer(prepare_qat_pt2e(m, q)).epoch(x)` where `epoch` runs `self.model.train()` on what
`__init__` stored from its parameter (`self.model = model`): the call switches the exported
graph the construction handed over, which raises NotImplementedError on torch 2.13 (QL203,
issue 14; measured with torch 2.13 and torchao 0.18 on graphs from `.module()` and
`prepare_qat_pt2e`, and quiet once `allow_exported_model_train_eval` ran on the graph).

`handed_fields` reads a field the walk itself set (`t.model = gm`); this reads one a
construction of this walk set, for a class of the project. Only what the class guarantees
is followed (`held_fields`: `__init__` stores the parameter once, no method of the class
reassigns the field, binds a name to it or hands it to a call, `allow_exported_model_train_eval`
included, and `self` is handed on nowhere), and only when nothing else can write the field
first: `__init__` hands the parameter to no call (`allow_exported_model_train_eval(model)`
before storing it), the class's bases are `object` or classes of torch, `abc` and `typing`
(`nn.Module` writes no field of a subclass's), and the walk assigned no attribute of that
name on the instance (`Builds.overwritten`). A construction a helper returned is not read:
its arguments are that helper's objects.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.maybe_graphs import tests_type
from qlint.analysis.flow.model_values import CONSTRUCTED, Obj
from qlint.analysis.flow.read_only_params import LOOKERS
from qlint.analysis.flow.stored_fields import Field, passed_for
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import own_init
from qlint.analysis.tree_walk import walk_kinds

# Libraries whose classes write no field a subclass names (`nn.Module`, `ABC`, `Generic[T]`).
_INERT_ROOTS = frozenset({"abc", "torch", "typing"})
_CALLS = frozenset({ast.Call})


def stored_graph(sem, receiver: Obj, name: str) -> tuple[Obj, tuple[ast.Call, ast.expr | None]] | None:
    """The exported graph `receiver`'s construction here passed for the field `self.<name>`
    that its class keeps as it came, with (the construction, the argument as written there,
    None when that is no single expression); None otherwise."""
    if len(receiver.origins) != 1 or (receiver, name) in sem.builds.overwritten:
        return None
    (origin,) = receiver.origins
    found = kept_graph(sem, origin, name)
    if found is None:
        return None
    graph, spec = found
    return graph, (origin.node, _argument(origin.node, spec))


def asks_field_type(receiver: Obj, name: str) -> bool:
    """The class `receiver` was built from asks what its field `self.<name>` is somewhere
    (`isinstance(self.model, GraphModule)`, `type(self.model)`, `hasattr(self.model, "graph")`,
    `maybe_graphs.tests_type`): its switch is written for the eager case it tells apart, also
    behind an early return the switch's guard does not show."""
    if len(receiver.origins) != 1:
        return False
    (origin,) = receiver.origins
    built = origin.built
    if origin.kind != CONSTRUCTED or built is None or built.cls is None:
        return False
    return tests_type(built.cls.node, ast.Attribute(ast.Name("self"), name))


def kept_graph(sem, origin, name: str) -> tuple[Obj, Field] | None:
    """The exported graph a construction of this walk (`origin`) passed for the field
    `self.<name>` its class keeps as it came, whatever mode a method switches it to, and
    the argument that field is (`stored_fields.Field`); None otherwise."""
    built = origin.built
    if origin.kind != CONSTRUCTED or not origin.passed or built is None or built.cls is None:
        return None
    if sem.builds.cache.get(id(origin.node)) is not built:
        return None  # a helper's construction: what it passed are that helper's objects
    spec = sem.owner.stored_fields(built.cls, held=True).get(name)
    graph = passed_for(spec, *origin.passed) if spec is not None else None
    if graph is None or not graph.is_graph:
        return None
    cls = built.cls
    if cls.node.keywords or not _inert_bases(cls, sem.owner) or _hands_on(cls.node, spec[1]):
        return None
    return graph, spec


def _inert_bases(cls, owner) -> bool:
    """Every base of the class is `object` or a class of a library that writes no field of a
    subclass's (a base of the project may write `self.<name>` in a method of its own)."""
    if not cls.node.bases:
        return True
    resolver = Resolver(cls.scope, owner.project, owner.optable)
    for base in cls.node.bases:
        if isinstance(base, ast.Subscript):  # `Generic[T]`
            base = base.value
        if isinstance(base, ast.Name) and base.id == "object" and "object" not in cls.scope.classes:
            continue
        qualname = resolver.qualname(base) or ""
        if qualname.partition(".")[0] not in _INERT_ROOTS:
            return False
    return True


def _hands_on(cls: ast.ClassDef, param: str) -> bool:
    """The class's own `__init__` hands its parameter `param` to a call other than a look at
    it (`allow_exported_model_train_eval(model)` before `self.model = model`)."""
    init = own_init(cls)
    if init is None:
        return False  # a dataclass: no `__init__` of the class's own
    for call in walk_kinds(init, _CALLS):
        if isinstance(call.func, ast.Name) and call.func.id in LOOKERS:
            continue
        for arg in (*call.args, *(kw.value for kw in call.keywords)):
            arg = arg.value if isinstance(arg, ast.Starred) else arg
            if isinstance(arg, ast.Name) and arg.id == param:
                return True
    return False


def _argument(call: ast.Call, spec: Field) -> ast.expr | None:
    """The expression `call` passes for the field (`passed_for`'s choice: the keyword first)."""
    position, keyword = spec
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if position is not None and position < len(call.args) and not isinstance(call.args[position], ast.Starred):
        return call.args[position]
    return None


__all__ = ["asks_field_type", "kept_graph", "stored_graph"]

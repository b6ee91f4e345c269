"""`q.prepare(m)` where `q` was built from a class of the module being walked: the call runs
that class's method, as `self.prepare(m)` inside the class would.

A test builds a quantizer wrapper (`quantizer = XNNPackDynamicQuantizer()`) and hands it the
model (`quantizer.prepare(m)`); the method captures it. The receiver is known only when its
every origin is one construction of a top-level class of this module (or of the module whose
callers `project_callers` reads), whose method resolves along its module's bases
(`class_methods.method_of`); a decorated method (static, class, a property, anything
wrapped) is not followed, unless its decorators only switch autograd (`mode_neutral`) or are
the project's pass-throughs of arguments and result (`pass_through`). A method of another
module's class is read when its body names a step (`method_words`) or when it returns a model
it builds, of a class deriving from `torch.nn` (`factory_methods`: `Factory().create()`
returning `Net()`, `Net` of its module or imported). A factory object the class holds
(`self.factory = Factory()` in `__init__`, then `self.factory.create()`) is that construction
when only the class's own stores write the field and the method builds what it returns
(`_held_factory`). A call on an instance a classmethod's `cls(...)` built, made for its effect
alone, of a method of this module naming nothing the walk follows, is left unread
(`cls_result_methods`).
Whether every call of such a method is known is the verdicts' business (`confined_instances`).
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.flow.cls_result_methods import left_unread
from qlint.analysis.flow.factory_methods import builds_a_model
from qlint.analysis.flow.field_instances import written_in_class_only
from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.inherited_methods import inherited_method
from qlint.analysis.flow.method_words import names_a_step
from qlint.analysis.flow.model_values import ATTRIBUTE, CONSTRUCTED, Obj
from qlint.analysis.flow.nn_classes import derives_from_nn
from qlint.analysis.flow.pass_through import transparent

_KEY = "_qlint_held_factories"  # on the module scope's `__dict__`: per module content


def method_summary(sem, attr: str, receiver: Obj, call: ast.Call | None = None) -> tuple[FunctionFlow, int] | None:
    """The summary of the method `receiver.<attr>(...)` runs, with 1 for the `self` it fills
    (None when the receiver or the method is not known, or the call, `call`, is one on a
    `cls(...)` result left unread: `cls_result_methods`). `sem` is the walk's `CallSemantics`."""
    known = _receiver_class(sem, receiver)
    if known is None:
        return None
    owner, top, origin, field, cls = known
    found = inherited_method(owner, top, attr)
    if found is None or not isinstance(found[1], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    owner, method, holder = found
    if method.decorator_list and not transparent(owner, method.decorator_list):
        return None
    if field is not None and not _held_factory(sem, field, owner, method, holder):
        return None
    if owner is sem.owner and left_unread(sem, call, origin, owner, method):
        return None  # `instance.load_weights(other)`: a call for its effect, of a method having none we follow
    if (
        owner is not sem.owner
        and not names_a_step(owner, method)
        and not sem.owner.classes.followed(cls.scope.path)
        and not builds_a_model(owner, method, holder, modules=True)
    ):
        return None  # names no step (`method_words`), is not of the module whose callers are
        # read, and builds nothing it returns (`factory_methods`)
    flow = owner.function(method, holder)
    return (flow, 1) if flow is not None else None


def defines_method(sem, attr: str, receiver: Obj) -> bool | None:
    """Whether the project class `receiver` is an instance of (as `method_summary` finds it)
    defines or inherits from the project a method `attr`; None when its class is not known."""
    known = _receiver_class(sem, receiver)
    return None if known is None else inherited_method(known[0], known[1], attr) is not None


def _receiver_class(sem, receiver: Obj):
    """(the `ModelFlow` of its module, its class scope there, the construction, the field holding
    it or None, the built class) of the one construction of a top-level class `receiver` is."""
    if len(receiver.origins) != 1:
        return None
    (origin,) = receiver.origins
    field = origin if origin.kind == ATTRIBUTE else None
    if field is not None:
        origin = _held_construction(sem, field)  # `self.factory`, stored `Factory()`
    cls = getattr(origin.built, "cls", None) if origin is not None and origin.kind == CONSTRUCTED else None
    if cls is None or cls.around is not None:
        return None
    owner = sem.owner
    scope = owner.scope
    if os.path.abspath(cls.scope.path) != os.path.abspath(scope.path):
        # Another module's class: its method is read as that module's functions are
        # (`helper_callees.callee`), from the module that builds the instance.
        if cls.scope.module is None:
            return None
        owner = owner.for_module(cls.scope.module)
        if owner is None:
            return None
        scope = owner.scope
    elif cls.summarised:
        return None
    top = scope.classes.get(cls.name)
    if top is None or top.node is not cls.node:
        return None
    return owner, top, origin, field, cls


def _held_construction(sem, origin):
    """The construction `__init__` stored in the field `self.<attr>` read in a method of the
    class (`self_attributes.first_read`: the attribute's `source`), or None."""
    held = origin.source
    cls = sem.class_scope
    if held is None or held.kind != CONSTRUCTED or cls is None or origin.node is not sem.walk.func:
        return None
    return held if origin.name.count(".") == 1 and getattr(held.built, "cls", None) is not None else None


def _held_factory(sem, origin, owner, method, holder) -> bool:
    """The method of the construction held in a field (`_held_construction`) is read: it
    returns a model it builds (`factory_methods`, whatever module the class is of: a held
    object's other methods are not read from here), its class is not known to be a module (a
    model kept in a field keeps the reading it had), and nothing but the class's own stores
    writes the field (no subclass or outside write in the module, no `setattr`:
    `field_instances.written_in_class_only`). The cheap tests first: a method's is kept per
    method, the field's per class and field."""
    if not builds_a_model(owner, method, holder, modules=True):
        return False
    if derives_from_nn(sem.owner.classes, origin.source.built.cls):
        return False
    cls = sem.class_scope.node
    top = sem.owner.scope.classes.get(cls.name)
    if top is None or top.node is not cls:
        return False
    scope = sem.owner.scope
    known = scope.__dict__.setdefault(_KEY, {})  # the walk of the module, once per class and field
    at = (id(cls), origin.name)
    if at not in known or known[at][0] is not cls:
        known[at] = (cls, written_in_class_only(scope, cls, origin.name[5:]))
    return known[at][1]


__all__ = ["defines_method", "method_summary"]

"""`self.<method>(...)` in a subclass written in another module than the method's class: a
caller of that method, read like one of its own module (issue 14, item 7).

A test suite's base class holds the capture helper (ExecuTorch's `TestQNN.get_qdq_module`,
ao's `PT2EQuantizationTestCase._test_quantizer`) and its test classes, in other modules, call
it as `self.get_qdq_module(model, inputs)`. `class_methods.method_of` reads one module's
classes, so such a call was none the flow read, and the helper was judged as if its callers
were unknown. Two halves, which must agree for a call to count:

- the flow of the caller's module runs the method `self.<name>` finds along the bases,
  through the modules that write them (`inherited_methods.inherited_method`), when that
  method is in the module whose callers are read (`ModelFlow.classes.followed`): other
  checks read what they read before (`self_method`);
- the caller search judges such a reference (`judge_self`): the method's own class found
  first along the bases, the call is one (`MAYBE`); another class's method found first (an
  override), it is not (`NOT_IT`); a base that cannot be placed (a library's class, a name
  bound otherwise) before it, or a class written inside a function, and the callers stay
  unknown (`UNREAD`).

A module subclassing the method's class whose text takes `self.<method>` as a value
(`quantize_method=self.get_qdq_module`, ExecuTorch's test_qnn_delegate.py) hands it where no
flow reads its calls: that module alone keeps the callers unknown, whatever the others hold
(`taken_as_value`, from its text: the 465 KB module is not parsed for it), and the caller search
keeps the answer with that module as its one dependency (`subclassed_methods`), as it did for
every subclass.

What a subclass's `self` is cannot be narrowed further: a subclass of it overriding the method
runs its own (no caller of this one); one calling `super().<name>(...)` is a use no flow
reads, which keeps the callers unknown (`method_references`).
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.context import FileContext
from qlint.analysis.flow.class_methods import mro_lookup
from qlint.analysis.flow.inherited_methods import inherited_method
from qlint.analysis.names.scope import ClassScope, ModuleScope

MAYBE = "maybe"
NOT_IT = "not-it"
UNREAD = "unread"
_HOPS = 3  # `from pkg import Base` where `pkg/__init__.py` re-exports it


def self_method(sem, attr: str):
    """(the `ModelFlow` of the module holding it, the def, its class scope) of the method
    `self.<attr>` runs in the walk's class, when a base written in another module holds it and
    that module's callers are being read; None otherwise (`method_of` answered for its own
    module's classes already)."""
    owner = sem.owner
    cls = sem.class_scope
    if cls is None or owner.classes.followed_path() is None:
        return None  # no caller search: nothing is followed (asked as `followed` is: logged)
    top = owner.scope.classes.get(cls.key_node().name)
    if top is None or top.key_node() is not cls.key_node():
        return None  # a class written inside a function: its bases' names are not the module's
    found = inherited_method(owner, top, attr)
    if found is None or found[0] is owner or not owner.classes.followed(found[0].scope.path):
        return None
    return found


def judge_self(other: FileContext, cls: ClassScope, name: str, owner_qual: str) -> str:
    """What `self.<name>` in the class `cls` of `other` runs, for the caller search of the
    method `owner_qual`.`name`: `MAYBE` (that method: the flow reads the call), `NOT_IT`
    (another class's, found first), `UNREAD` (not known)."""
    scope = other.scope
    top = scope.classes.get(cls.key_node().name)
    if top is None or top.key_node() is not cls.key_node():
        return UNREAD

    def base_of(where: ModuleScope, base: ast.expr):
        return placed_base(other, where, base)

    found = mro_lookup(scope, top, name, base_of)
    if found is None:
        return UNREAD
    where, _, holder = found
    module, _, owner = owner_qual.rpartition(".")
    return MAYBE if where.module == module and holder.key_node().name == owner else NOT_IT


def taken_as_value(data: bytes, name: str) -> bool:
    """The module's text takes `self.<name>` other than to call it or to hand it on as a
    keyword argument (`x = self.get_qdq_module`): read from the text alone, before the module
    is parsed (a comment that spells it so counts too, which only keeps the callers unknown)."""
    word = b"self." + name.encode()
    if word not in data:
        return False
    attr = rb"self\s*\.\s*" + re.escape(name.encode()) + rb"\b(?!\s*\()"
    taken = {m.start() for m in re.finditer(rb"\b" + attr, data)}
    # A keyword argument (`quantize_method=self.get_qdq_module`) is judged once the module is
    # parsed: a class that calls it only on mode-free models is given it (`constructor_relays`).
    handed = {m.start(1) for m in re.finditer(rb"\w=\s*(" + attr + rb")", data)}
    return bool(taken - handed)


def placed_base(other: FileContext, where: ModuleScope, base: ast.expr):
    """(its module's scope, its class scope) for a base written as a name of `where`'s module:
    a class of that module, or one it imports from a module of the project."""
    if not isinstance(base, ast.Name) or base.id in where.assigns:
        return None
    if base.id not in where.imports:
        known = where.classes.get(base.id)
        return (where, known) if known is not None else None
    module, _, name = where.imports[base.id].rpartition(".")
    for _ in range(_HOPS):
        scope = other.project.module_scope(module, other.path) if module else None
        if scope is None:
            return None
        if name in scope.classes and name not in scope.imports and name not in scope.assigns:
            return scope, scope.classes[name]
        if name not in scope.imports:
            return None
        module, _, name = scope.imports[name].rpartition(".")
    return None


__all__ = ["MAYBE", "NOT_IT", "UNREAD", "judge_self", "placed_base", "self_method", "taken_as_value"]

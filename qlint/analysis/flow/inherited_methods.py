"""Which method `instance.<name>(...)` runs when the class or one of its bases is written in
another module of the project (`class Child(Base)` with `from pkg.base import Base`).

`class_methods.method_of` stops at a base the module imports: it reads one module's classes
(the methods `self.<name>` finds inside a class). An instance built from a project class
(`Child().apply(model)`) runs the method its class inherits from wherever the base is
written, so the lookup goes on in the module the import names, found as
`helper_callees.callee` finds another module's function: from the module that imports it
(`ModelFlow.for_module`), so that a flow kept across checks reads the same modules wherever
it is met. Depth first from the left is Python's order as long as no base is shared (a
diamond), as for `method_of` (the same walk, `mro_lookup`); a base that resolves to no project class (an installed
library's, a name bound otherwise) may define the name itself, and the lookup stops there
unanswered.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.class_methods import mro_lookup
from qlint.analysis.names.scope import ClassScope
from qlint.analysis.names.summary import class_method_names

_HOPS = 3  # `from pkg import Base` where `pkg/__init__.py` re-exports it


def inherited_method(owner, cls: ClassScope, name: str):
    """(the `ModelFlow` of the module holding it, the def, its class scope) of the method
    `name` that an instance of `cls` (a top-level class of `owner`'s module) runs, or None
    when it is not found or a base from outside the project may define it."""
    return mro_lookup(owner, cls, name, base_class)


def base_class(owner, base: ast.expr):
    """(the `ModelFlow` of its module, its class scope) for a base written as a name of
    `owner`'s module: a class of the module, or one it imports from another project module."""
    if not isinstance(base, ast.Name):
        return None
    scope = owner.scope
    if base.id in scope.assigns:
        return None
    if base.id not in scope.imports:
        known = scope.classes.get(base.id)
        return (owner, known) if known is not None else None
    module, _, attr = scope.imports[base.id].rpartition(".")
    return project_class(owner, module, attr)


def project_class(owner, module: str, name: str):
    """(the `ModelFlow` of the module that writes it, its class scope) for the class `name`
    of the project module `module`, as found from `owner`'s module (None: not one)."""
    found = _class_home(owner, module, name)
    return (found[0], found[0].scope.classes[found[1]]) if found is not None else None


def _class_home(owner, module: str, name: str):
    """(the `ModelFlow` of the module that writes it, its name there) for `project_class`,
    without taking the class from that module's scope (which parses it)."""
    for _ in range(_HOPS):
        other = owner.for_module(module) if module else None
        if other is None:
            return None
        scope = other.scope
        if name in scope.classes and name not in scope.imports and name not in scope.assigns:
            return other, name
        if name not in scope.imports:
            return None
        module, _, name = scope.imports[name].rpartition(".")
        owner = other
    return None


def imported_class_methods(owner, roots) -> set[str]:
    """The method names of the classes `owner`'s module imports from other modules of the
    project (CapWords names, not from `roots`), each class's own: a body handing a graph to
    `Runner().warm(gm)` calls one of them. The names come from the modules' summaries: the
    classes are not parsed for them."""
    out: set[str] = set()
    for local, full in owner.scope.imports.items():
        if not local[:1].isupper() or full.partition(".")[0] in roots:
            continue
        module, _, name = full.rpartition(".")
        found = _class_home(owner, module, name) if module else None
        if found is not None:
            out.update(m for m in class_method_names(found[0].scope, found[1]) if not m.startswith("__"))
    return out


__all__ = ["base_class", "imported_class_methods", "inherited_method", "project_class"]

"""Which method `instance.<name>(...)` runs when the class or one of its bases is written in
another module of the project (`class Child(Base)` with `from pkg.base import Base`).

`class_methods.method_of` stops at a base the module imports: it reads one module's classes
(the methods `self.<name>` finds inside a class). An instance built from a project class
(`Child().apply(model)`) runs the method its class inherits from wherever the base is
written, so the lookup goes on in the module the import names, found as
`helper_calls.callee` finds another module's function: from the module that imports it
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

_HOPS = 3  # `from pkg import Base` where `pkg/__init__.py` re-exports it


def inherited_method(owner, cls: ClassScope, name: str):
    """(the `ModelFlow` of the module holding it, the def, its class scope) of the method
    `name` that an instance of `cls` (a top-level class of `owner`'s module) runs, or None
    when it is not found or a base from outside the project may define it."""
    return mro_lookup(owner, cls, name, _base_class)


def _base_class(owner, base: ast.expr):
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
    for _ in range(_HOPS):
        other = owner.for_module(module) if module else None
        if other is None:
            return None
        scope = other.scope
        if name in scope.classes and name not in scope.imports and name not in scope.assigns:
            return other, scope.classes[name]
        if name not in scope.imports:
            return None
        module, _, name = scope.imports[name].rpartition(".")
        owner = other
    return None


__all__ = ["inherited_method", "project_class"]

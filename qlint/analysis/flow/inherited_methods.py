"""Which method `instance.<name>(...)` runs when the class or one of its bases is written in
another module of the project (`class Child(Base)` with `from pkg.base import Base`).

`class_methods.method_of` stops at a base the module imports: it reads one module's classes
(the methods `self.<name>` finds inside a class). An instance built from a project class
(`Child().apply(model)`) runs the method its class inherits from wherever the base is
written, so the lookup goes on in the module the import names, found as
`CallSemantics.callee` finds another module's function: from the module that imports it
(`ModelFlow.for_module`), so that a flow kept across checks reads the same modules wherever
it is met. Depth first from the left is Python's order as long as no base is shared (a
diamond), as for `method_of`; a base that resolves to no project class (an installed
library's, a name bound otherwise) may define the name itself, and the lookup stops there
unanswered.
"""

from __future__ import annotations

import ast

from qlint.analysis.names.scope import ClassScope

_MAX_DEPTH = 8
_HOPS = 3  # `from pkg import Base` where `pkg/__init__.py` re-exports it


def inherited_method(owner, cls: ClassScope, name: str):
    """(the `ModelFlow` of the module holding it, the def, its class scope) of the method
    `name` that an instance of `cls` (a top-level class of `owner`'s module) runs, or None
    when it is not found or a base from outside the project may define it."""
    found = _lookup(owner, cls, name, 0, set())
    return found if isinstance(found, tuple) else None


def _lookup(owner, cls: ClassScope, name: str, depth: int, seen: set[int]):
    """(owner, def, class) found; False: not in this class tree; None: not known."""
    if name in cls.methods:
        return owner, cls.methods[name], cls
    if name in cls.assigns or depth > _MAX_DEPTH or id(cls.key_node()) in seen:
        return None  # `name = other_function` in the class body, or a loop in the bases
    seen.add(id(cls.key_node()))
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id == "object":
            continue
        where = _base_class(owner, base)
        if where is None:
            return None  # a base from elsewhere may define it
        found = _lookup(*where, name, depth + 1, seen)
        if found is not False:
            return found
    return False


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

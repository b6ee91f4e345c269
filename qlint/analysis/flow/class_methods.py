"""Which method `self.<name>(...)` runs, for a class and its base classes of the same module.

Test suites put their shared capture helper on a base class (`TestPatternMatcherBase
._test_common`) and call it from the subclasses' tests: the call is the helper's, and what
it passes decides the helper's verdict. Python looks the name up along the method resolution
order; for the classes of one module, depth first from the left is that order as long as no
base is shared (a diamond), and a base the module does not define may define the name
itself, so the lookup stops there unanswered.
"""

from __future__ import annotations

import ast

from qlint.analysis.names.scope import ClassScope, ModuleScope

_MAX_DEPTH = 8


def method_of(cls: ClassScope, name: str, scope: ModuleScope) -> tuple[ast.AST, ClassScope] | None:
    """The def `self.<name>` finds from `cls` (with the class that holds it), or None when
    it is not found or another module's class comes first in the lookup."""
    if name in cls.methods:
        return cls.methods[name], cls
    # Identity and name only (`key_node`): which class a name binds is no reading of its
    # bodies, for the flows kept across checks (`carried_flows`).
    top = scope.classes.get(cls.key_node().name)
    if top is None or top.key_node() is not cls.key_node():
        return None  # a class written inside a function: its bases' names are not the module's
    found = mro_lookup(scope, cls, name, _same_module_base)
    return found[1:] if found is not None else None


def _same_module_base(scope: ModuleScope, base: ast.expr):
    known = scope.classes.get(base.id) if isinstance(base, ast.Name) else None
    if known is None or base.id in scope.imports or scope.assigns.get(base.id):
        return None  # a base from elsewhere may define it
    return scope, known


def mro_lookup(where, cls: ClassScope, name: str, base_of):
    """(where, def, class) of the method `name` an instance of `cls` runs, or None when it
    is not found or a base `base_of(where, base)` cannot place (None) may define it.
    `where` is whatever `base_of` resolves a base's name in (a module scope, a flow)."""
    found = _walk(where, cls, name, base_of, 0, set())
    return found if isinstance(found, tuple) else None


def _walk(where, cls: ClassScope, name: str, base_of, depth: int, seen: set[int]):
    """(where, def, class) found; False: not in this class tree; None: not known."""
    if name in cls.methods:
        return where, cls.methods[name], cls
    if name in cls.assigns or depth > _MAX_DEPTH or id(cls.key_node()) in seen:
        return None  # `name = other_function` in the class body, or a loop in the bases
    seen.add(id(cls.key_node()))
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id == "object":
            continue
        placed = base_of(where, base)
        if placed is None:
            return None  # a base from elsewhere may define it
        found = _walk(*placed, name, base_of, depth + 1, seen)
        if found is not False:
            return found
    return False


def derives_from(cls: ClassScope, base: ClassScope, scope: ModuleScope, depth: int = 0) -> bool | None:
    """`cls` is `base` or inherits from it through classes of this module (None: a base
    class from elsewhere may)."""
    if cls.node is base.node:
        return True
    if depth > _MAX_DEPTH:
        return None
    unknown = False
    for b in cls.bases:
        if isinstance(b, ast.Name) and b.id == "object":
            continue
        known = scope.classes.get(b.id) if isinstance(b, ast.Name) else None
        if known is None:
            unknown = True
            continue
        found = derives_from(known, base, scope, depth + 1)
        if found:
            return True
        unknown = unknown or found is None
    return None if unknown else False


__all__ = ["derives_from", "method_of", "mro_lookup"]

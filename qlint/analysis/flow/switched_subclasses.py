"""Whether the mode `__init__` gave a stored parameter (`switched_params`) is the mode every
instance holds.

A class whose constructor does `module.eval()` then `self.original_module = module` hands
`self.original_module` on in eval mode, from its own instances. A subclass may build its
instances otherwise (its own `__init__` storing the model as it came) and inherit the
method that hands it on: the caller's mode fact, read from the base class's `__init__`,
then says nothing of those instances. So the fact vouches for a call only when no class of
the project subclasses the class: none in its module, none in a module whose text names it
(`method_references.subclassed_in`, read from the text, as `subclassed_methods` does), and
the search must have been able to read every such module (too many: unknown).
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.flow.method_references import owner_class, subclassed_in
from qlint.analysis.flow.model_values import STORED, ModeFact
from qlint.analysis.flow.project_search import candidate_modules, search_root


def from_constructor(fact: ModeFact) -> bool:
    """The mode `__init__` switched a stored parameter to (`self_attributes.first_read`): the
    switch lies in the `__init__` the fact's origin names (a switch of the attribute in the
    method itself comes from that method, and holds for any instance)."""
    origin = fact.origin
    if origin is None or origin.kind != STORED or fact.state not in ("eval", "train"):
        return False
    init, row = origin.node, getattr(fact.node, "lineno", None)
    return row is not None and init.lineno <= row <= init.end_lineno


def vouched_for_every_instance(home: FileContext, fact: ModeFact) -> bool:
    """`fact` (from a constructor's switch, read in module `home`) holds for every instance
    that can reach the call: the class is subclassed nowhere in the project."""
    if not from_constructor(fact):
        return True
    return not subclassed(home, fact.origin.node)


def subclassed(home: FileContext, method: ast.AST) -> bool:
    """The class of module `home` whose method `method` is may have subclasses: one in the
    project derives from it, or the search could not read every module naming it (also: no
    such class)."""
    owner = owner_class(home, method)
    if owner is None:
        return True
    name = owner.node.name
    for node in ast.walk(home.tree):
        if isinstance(node, ast.ClassDef) and any(_names(base, name) for base in node.bases):
            return True
    root = search_root(home.path)
    found = candidate_modules(home, root, name) if root is not None else None
    if found is None:
        return True  # too many modules name it to read them all
    return any(subclassed_in(data, name) for _, data, _ in found)


def _names(base: ast.expr, name: str) -> bool:
    """`class T(Tester)`, `class T(harness.Tester)`."""
    return (isinstance(base, ast.Name) and base.id == name) or (isinstance(base, ast.Attribute) and base.attr == name)


__all__ = ["from_constructor", "subclassed", "vouched_for_every_instance"]

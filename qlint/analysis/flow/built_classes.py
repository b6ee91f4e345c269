"""Which method a construction in another module runs, found through the built class's bases
(issue 14, item 7; the caller search of a method, `method_references`).

`pipeline = TosaPipelineFP[input_t](module, inputs, ...)` then `pipeline.run()`: ExecuTorch's
Arm tests build a generic pipeline class of the project and call its `run`, which a base
class in the same module defines. The caller search read such a receiver one level only (what
the built class defines itself) and not at all through a subscript, so every one of those
~290 test modules left the callers of any other class's `run` unknown (the harness's
`Quantize.run`, issue 14 item 2), though none of them can run it.

The class built is placed (a class of the module or of the project, reached through its
imports) and its bases are followed through the modules that write them (as a subclass's
`self` is, `subclass_self_calls`): when no class along them is the method's class, no
instance of it can run the method, whatever order Python's lookup takes them in (a
`super().run()` in one of them is a reference of its own module, judged there). Anything
else keeps the reference's earlier judgement, never fewer callers: a class of the method's
class's name along the bases, a base that cannot be placed (but `object`, `typing.Generic`
and a class of the standard library or torch, which cannot derive from the project's), a
class along them that defines `__new__` or names a metaclass (its construction may hand
back another class's instance) or defines `__getattr__` (a wrapper delegating to one), a
class not placed. `Cls[T](...)` builds an instance of `Cls` when no class along its bases
defines `__class_getitem__` (`typing.Generic`'s alias calls its origin) and every base is
placed. A module-level function of the caller's module
that returns constructions only (`_make_rnn_int_pipeline(module)` returns the local it bound
to `TosaPipelineINT[input_t](...)`) builds the classes of those constructions; one returning
anything else (a parameter, another call's result) or yielding is not followed.
"""

from __future__ import annotations

import ast
import sys

from qlint.analysis.context import FileContext
from qlint.analysis.flow.subclass_self_calls import placed_base
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ClassScope, ModuleScope, unique_value
from qlint.analysis.tree_walk import own_nodes

_GENERIC = frozenset({"typing.Generic", "typing_extensions.Generic"})
_MAX_DEPTH = 8  # levels of bases followed (the ancestry, `__class_getitem__`)
_ALIAS_HOOK = "__class_getitem__"
_LIBRARIES = frozenset({"torch"})
# A class defining one of these may build, or answer the method with, another class's instance.
_HOOKS = ("__new__", "__getattr__", "__getattribute__")


def may_run(other: FileContext, built: ast.expr, owner_qual: str, resolver: Resolver) -> bool | None:
    """Whether an instance built by calling `built` (the callee of a construction in `other`)
    may run a method of the class `owner_qual` (`module.Class`): False when the class is
    placed (or `built` is a factory of that module whose every construction returned is) and
    no class along its bases bears that name; None when that is not known."""
    owner = owner_qual.rpartition(".")[2]
    placed = _placed(other, built, resolver)
    if placed is not None:
        return _ancestry(other, *placed, owner, owner_qual.partition(".")[0], 0, set())
    made = _factory_made(other, built, resolver)
    if made is None:
        return None
    # Every class the factory may build, each judged the same way (a factory's factory is not followed).
    for callee, inner in made:
        placed = _placed(other, callee, inner)
        answer = _ancestry(other, *placed, owner, owner_qual.partition(".")[0], 0, set()) if placed else None
        if answer is not False:
            return answer
    return False


def _factory_made(other: FileContext, built: ast.expr, resolver: Resolver) -> list[tuple[ast.expr, Resolver]] | None:
    """(callee, the resolver of the factory's body) of each construction a module-level function
    of `other` returns (`return Pipeline[T](...)`, or a local bound to one and to nothing else:
    `pipeline = Pipeline[T](...)` ... `return pipeline`), when every value it returns is one
    (or None); None for anything else (a generator, a returned parameter or call result)."""
    if not isinstance(built, ast.Name) or built.id in resolver.local or built.id in other.scope.imports:
        return None
    func = other.scope.functions.get(built.id)
    if func is None or built.id in other.scope.assigns or func.decorator_list:
        return None
    body = next((b for b in bodies(other.tree, other.scope, other.cache) if b.node is func), None)
    if body is None:
        return None
    inner = Resolver(other.scope, other.project, other.optable, body.local, None)
    made = []
    for node in own_nodes(func, scopes=False):
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return None
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        value = node.value
        if isinstance(value, ast.Constant) and value.value is None:
            continue
        if isinstance(value, ast.Name) and value.id in body.local:
            value = unique_value(body.local[value.id])
        if not isinstance(value, ast.Call):
            return None
        made.append((value.func, inner))
    return made


def _ancestry(
    other: FileContext, where: ModuleScope, cls: ClassScope, owner: str, top: str, depth: int, seen: set
) -> bool | None:
    """True: `owner` is `cls` or one of its bases (compared by name: a class of that name
    anywhere may be it); False: none is; None: a base cannot be placed."""
    node = cls.key_node()
    if node.name == owner:
        return True
    if any(h in cls.methods or h in cls.assigns for h in _HOOKS) or getattr(cls.node, "keywords", None):
        return None  # `__new__`, a metaclass, `__getattr__` delegating to a wrapped instance
    if id(node) in seen:
        return False  # read already, through another base (its answer was no)
    if depth > _MAX_DEPTH:
        return None
    seen.add(id(node))
    for base in cls.bases:
        if (isinstance(base, ast.Name) and base.id == "object") or _generic(where, base):
            continue
        placed = placed_base(other, where, base)
        if placed is None:
            if _library(other, where, base, top):
                continue
            return None
        found = _ancestry(other, *placed, owner, top, depth + 1, seen)
        if found is not False:
            return found
    return False


def _library(other: FileContext, where: ModuleScope, base: ast.expr, owner_top: str) -> bool:
    """A base imported from the standard library or torch (`torch.nn.Module`,
    `unittest.TestCase`), in a project that is not that package and has no module of that
    name (a project's own `calendar` package): a library's class cannot derive from the
    project's. Other packages are not judged: a project's own package may fail to resolve
    (ExecuTorch's `executorch.*` mapped onto its root)."""
    while isinstance(base, ast.Attribute):
        base = base.value
    if not isinstance(base, ast.Name) or base.id not in where.imports or base.id in where.assigns:
        return False
    top = where.imports[base.id].partition(".")[0]
    if top == owner_top or (top not in sys.stdlib_module_names and top not in _LIBRARIES):
        return False
    return other.project.module_scope(top, other.path) is None


def _placed(other: FileContext, built: ast.expr, resolver: Resolver) -> tuple[ModuleScope, ClassScope] | None:
    """The class `built` names, written in `other` or in a module of the project; through a
    subscript only when the class hands its alias's calls to itself."""
    if isinstance(built, ast.Subscript):
        placed = _placed(other, built.value, resolver)
        return placed if placed is not None and _plain_alias(other, *placed, 0) else None
    if isinstance(built, ast.Name):
        if built.id in resolver.local:
            return None  # a local of the function (`cls = pick(); cls(...)`)
        return placed_base(other, other.scope, built)
    qual = resolver.qualname(built) if isinstance(built, ast.Attribute) else None
    if qual is None:
        return None
    module, _, attr = qual.rpartition(".")
    scope = other.project.module_scope(module, other.path) if module else None
    if scope is None or attr in scope.imports or attr in scope.assigns:
        return None
    cls = scope.classes.get(attr)
    return (scope, cls) if cls is not None else None


def _plain_alias(other: FileContext, where: ModuleScope, cls: ClassScope, depth: int) -> bool:
    """No class along `cls`'s bases defines `__class_getitem__` (or binds it in its body), and
    every base is placed, `object` or `typing.Generic` (subscripted or not)."""
    if _ALIAS_HOOK in cls.methods or _ALIAS_HOOK in cls.assigns or depth > _MAX_DEPTH:
        return False
    for base in cls.bases:
        if (isinstance(base, ast.Name) and base.id == "object") or _generic(where, base):
            continue
        placed = placed_base(other, where, base)
        if placed is None or not _plain_alias(other, *placed, depth + 1):
            return False
    return True


def _generic(where: ModuleScope, base: ast.expr) -> bool:
    """`Generic[T]`, `Generic`, `typing.Generic[T]` as the module imports it."""
    if isinstance(base, ast.Subscript):
        base = base.value
    if isinstance(base, ast.Name):
        return where.imports.get(base.id) in _GENERIC and base.id not in where.assigns
    if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
        imported = where.imports.get(base.value.id)
        return imported is not None and f"{imported}.{base.attr}" in _GENERIC
    return False


__all__ = ["may_run"]

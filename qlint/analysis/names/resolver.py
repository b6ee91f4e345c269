"""Resolve expressions to qualified names, op references and the constants behind names.

`t.ops.aten.add`, `aten.add` after `aten = torch.ops.aten`, and `DQ_OPS` imported from a
sibling module all resolve to what they denote, so rules match on meaning, not spelling.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator

from qlint.analysis.names.local_imports import LocalNames
from qlint.analysis.names.op_refs import EXIR_DIALECTS, OpRef, parse_op
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.scope import ModuleScope, unique_value
from qlint.analysis.names.star_imports import FOREIGN_PACKAGES, defines, exports, star_sources
from qlint.optable import OpTable
from qlint.value_classes import value_class

_MAX_DEPTH = 12
# Attributes of an imported module looked into (`pkg.sub.module.factory`).
_MAX_ATTRIBUTES = 3
# Imported packages whose attributes `_module_attribute` does not look up: those whose star
# imports are not followed and the standard library's (`os.path.join`, `logging.getLogger`: on
# ExecuTorch most of the lookups, a project module shadowing one taken for the library's).
_NOT_LOOKED_UP = FOREIGN_PACKAGES | sys.stdlib_module_names


def dotted_parts(expr: ast.AST, tail: bool = False) -> list[str] | None:
    """`a.b.c` -> ["a", "b", "c"]; None unless the chain starts at a name, or with `tail`
    the attributes after whatever it starts at (`f().b.c` -> ["b", "c"])."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
    elif not tail:
        return None
    return parts[::-1]


@value_class(frozen=True)
class Located:
    """An expression together with the module it is written in."""

    node: ast.expr
    scope: ModuleScope
    dict_key: bool = False  # a dict key cannot be replaced by several elements
    dict_value: ast.expr | None = None  # for a dict key: the value it maps to


class Resolver:
    """Resolves names in one function (or module) body of one file."""

    def __init__(
        self,
        scope: ModuleScope,
        project: ProjectIndex,
        optable: OpTable,
        local: dict[str, list[ast.expr]] | None = None,
        class_scope=None,
    ):
        self.scope = scope
        self.project = project
        self.optable = optable
        self.local = local if local is not None else {}
        self.class_scope = class_scope

    # -- qualified names ---------------------------------------------------------------
    def qualname(self, expr: ast.AST, depth: int = 0) -> str | None:
        """`torch.ops.aten.add` for `aten.add` after `aten = torch.ops.aten`, etc."""
        if depth > _MAX_DEPTH:
            return None
        parts = dotted_parts(expr)
        if parts is None:
            return None
        return self.qualname_of(parts, depth)

    def qualname_of(self, parts: list[str], depth: int = 0) -> str | None:
        """`qualname` of the chain whose `dotted_parts` the caller has already."""
        if depth > _MAX_DEPTH:
            return None
        head, rest = parts[0], parts[1:]
        if head in ("self", "cls") and rest and self.class_scope is not None:
            value = unique_value(self.class_scope.assigns.get(rest[0]))
            if value is None:
                return None
            base = self.qualname(value, depth + 1)
            return _join(base, rest[1:])
        if head in self.local:
            value = unique_value(self.local[head])
            if value is None or isinstance(value, ast.arg):
                return None
            return _join(self._value_qualname(value, depth + 1), rest)
        if isinstance(self.local, LocalNames) and head in self.local.imports:
            return _join(self.local.imported(head), rest)
        base = self._module_qualname(self.scope, head, depth)
        if rest and base is not None and head in self.scope.imports:
            return self._module_attribute(base, rest, depth)
        return _join(base, rest)

    def _module_attribute(self, base: str, rest: list[str], depth: int) -> str:
        """`base.rest...` for a head an import binds to `base`: an attribute a project package
        takes from its `from .mobilenet import *` (`import models`, then `models.mobilenet()`)
        is what that star import binds, as for `from models import mobilenet`
        (`_through_stars`). A name the package defines, imports or assigns itself is its own;
        a submodule (`import pkg.models`, then `pkg.models.mobilenet`) is looked into in turn."""
        top = base.partition(".")[0]
        if top in _NOT_LOOKED_UP or base.startswith(EXIR_DIALECTS):
            return _join(base, rest)  # star imports not followed, or no package of the project
        module = base
        for i, attr in enumerate(rest[:_MAX_ATTRIBUTES]):
            other = self.project.module_scope(module, self.scope.path)
            if other is None or other is self.scope or defines(other, attr):
                break
            if _stars_of(self.project, other):
                found = self._through_stars(other, attr, depth + 1, (module, self.scope))
                if found is not None:
                    return _join(found, rest[i + 1 :])
            module = f"{module}.{attr}"
        return _join(base, rest)

    def _value_qualname(self, value: ast.AST, depth: int) -> str | None:
        """`qualname` of the value a name is bound to; for a call, what a project helper that
        returns the value of a callable it is handed returns (`callable_results`: a lazy
        import's `coreai = lazy_import(_import_ops)`)."""
        if type(value) is ast.Call:
            from qlint.analysis.names.callable_results import callable_result

            return callable_result(self, value, depth) if depth <= _MAX_DEPTH else None
        return self.qualname(value, depth)

    def _module_qualname(
        self, scope: ModuleScope, name: str, depth: int, spelled: tuple[str, ModuleScope] | None = None
    ) -> str | None:
        if name in scope.imports:
            full = scope.imports[name]
            return self._through_project(full, scope, depth)
        value = scope.unique(name)
        if value is not None:
            sub = Resolver(scope, self.project, self.optable)
            return sub._value_qualname(value, depth + 1)
        if name in scope.classes or name in scope.functions:
            return f"{scope.module}.{name}" if scope.module else name
        return self._through_stars(scope, name, depth, spelled)

    def _through_stars(
        self, scope: ModuleScope, name: str, depth: int, spelled: tuple[str, ModuleScope] | None = None
    ) -> str | None:
        """A name bound by `from <project module> import *`: the last such import that exports it.

        `spelled`: the name `scope`'s module was found by and the module it was found from. A
        star import of a module of the package (`from .mobilenet import *`) is spelled from
        there too: the module's own name may not find it from that module (a package in a
        directory without `__init__.py` is named from the package down)."""
        if depth > _MAX_DEPTH or not scope.path:
            return None
        own = f"{scope.module}." if spelled is not None and scope.module else None
        for base in reversed(_stars_of(self.project, scope)):
            where, other = scope, None
            if own is not None and base.startswith(own) and spelled[0] != scope.module:
                other = self.project.module_scope(spelled[0] + base[len(own) - 1 :], spelled[1].path)
                if other is not None:
                    base, where = spelled[0] + base[len(own) - 1 :], spelled[1]
            if other is None:
                other = self.project.module_scope(base, scope.path)
            if other is None or other is scope:
                continue
            exported = exports(other, name)
            if exported is None:
                return None  # an `__all__` we cannot read: the name may come from there
            if not exported:
                continue
            if defines(other, name):
                return self._through_project(f"{base}.{name}", where, depth + 1)
            found = self._through_stars(other, name, depth + 1, (base, where))
            if found is not None:
                return found
        return None

    def _through_project(self, full: str, scope: ModuleScope, depth: int) -> str:
        """`pkg.aliases.aten` -> `torch.ops.aten` when pkg/aliases.py binds `aten` so."""
        module, _, name = full.rpartition(".")
        if not module or full.startswith(("torch.", EXIR_DIALECTS)) or depth > _MAX_DEPTH:
            return full
        other = self.project.module_scope(module, scope.path)
        if other is None or other is scope:
            return full
        if (name in other.functions or name in other.classes) and name not in other.imports:
            # Defined there: the import's spelling finds it again from here, which the other
            # module's own name may not (a module of a directory without `__init__.py`).
            return full
        if name in other.imports:
            found = self._imported(other, name, depth + 1)
            if found is not None and found[1] in found[0].imports:
                # An import cycle whose modules assign the name (`_bound_in_cycle`).
                bound, bound_name, bound_depth = found
                value = bound.unique(bound_name)
                resolved = Resolver(bound, self.project, self.optable).qualname(value, bound_depth + 1)
                return resolved or full
        resolved = self._module_qualname(other, name, depth + 1, (module, scope))
        return resolved or full

    # -- op references -----------------------------------------------------------------
    def op_ref(self, expr: ast.AST) -> OpRef | None:
        name = self.qualname(expr)
        return parse_op(self.optable, name) if name else None

    # -- constants ---------------------------------------------------------------------
    def value_of(self, expr: ast.expr, depth: int = 0) -> Located | None:
        """The expression a name stands for (following local, module and project bindings)."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            if expr.id in self.local:
                value = unique_value(self.local[expr.id])
                if value is None or isinstance(value, ast.arg):
                    return None
                return self.value_of(value, depth + 1) or Located(value, self.scope)
            return self._module_value(self.scope, expr.id, depth)
        if isinstance(expr, ast.Attribute):
            parts = dotted_parts(expr)
            if parts and parts[0] in ("self", "cls") and len(parts) == 2 and self.class_scope is not None:
                value = unique_value(self.class_scope.assigns.get(parts[1]))
                return Located(value, self.scope) if value is not None else None
            if parts and len(parts) == 2 and parts[0] in self.scope.classes:
                value = unique_value(self.scope.classes[parts[0]].assigns.get(parts[1]))
                return Located(value, self.scope) if value is not None else None
            return None
        return Located(expr, self.scope)

    def _module_value(self, scope: ModuleScope, name: str, depth: int) -> Located | None:
        if name in scope.imports:
            found = self._imported(scope, name, depth)
            if found is None:
                return None
            scope, name, depth = found
        value = scope.unique(name)
        if value is None:
            return None
        if isinstance(value, ast.Name):
            sub = Resolver(scope, self.project, self.optable)
            return sub.value_of(value, depth + 1) or Located(value, scope)
        return Located(value, scope)

    def _imported(self, scope: ModuleScope, name: str, depth: int) -> tuple[ModuleScope, str, int] | None:
        """Where the import of `name` in `scope` leads, module after module of the project: the
        module binding it otherwise (with the depth reached); for an import cycle (a imports OP
        from b, b from a) a module of it that also assigns the name, which it still imports,
        holding the cycle's value (`_bound_in_cycle`); or None: out of the project, a module
        importing itself, a cycle binding nothing or no one value. The chase stops at the
        cycle's first repeat: it recursed without end there (QL101, QL102 and QL201 "gave up",
        losing the file's other findings)."""
        chased: list[tuple[ModuleScope, str, int]] = []
        while name in scope.imports:
            module, _, attr = scope.imports[name].rpartition(".")
            other = self.project.module_scope(module, scope.path) if module else None
            if other is None or other is scope:
                return None
            chased.append((scope, name, depth))
            scope, name, depth = other, attr, depth + 1
            again = next((i for i, (s, n, _) in enumerate(chased) if s is scope and n == name), None)
            if again is not None:
                return self._bound_in_cycle(chased[again:])
        return scope, name, depth

    def _bound_in_cycle(self, cycle: list[tuple[ModuleScope, str, int]]) -> tuple[ModuleScope, str, int] | None:
        """What the modules of an import cycle that also assign the name it imports (`try: from
        pkg.a import OP` / `except ImportError: OP = aten.relu`) make it: the imports bind
        nothing but what those assignments make, so every module of the cycle holds one of
        their values (the least fixpoint). One such module: its value. Several: their join, the
        first one's value when all name the same thing (each module's fallback spelling the
        same op), else no value (a guess at one of them could be the wrong op). None: no module
        assigns it, the name is bound nowhere."""
        bound = [member for member in cycle if member[0].assigns.get(member[1])]
        if len(bound) <= 1:
            return bound[0] if bound else None
        named = set()
        for scope, name, depth in bound:
            value = scope.unique(name)
            named.add(Resolver(scope, self.project, self.optable).qualname(value, depth + 1) if value else None)
            if None in named or len(named) > 1:
                return None
        return bound[0]

    def for_scope(self, scope: ModuleScope) -> Resolver:
        if scope is self.scope:
            return self
        return Resolver(scope, self.project, self.optable)

    def members(self, expr: ast.expr, depth: int = 0) -> Iterator[Located] | None:
        """Elements of a collection an expression denotes, or None if it is not one we can read.

        Set/list/tuple literals, `set(...)`/`frozenset(...)`/`tuple(...)` of those, dict
        literals (their keys), `|`/`+` of collections, `-` of sets (`_difference`) and `*splat`
        inside literals.
        """
        located = self.value_of(expr, depth)
        if located is None or depth > _MAX_DEPTH:
            return None
        node, resolver = located.node, self.for_scope(located.scope)
        items = resolver._literal_members(node, depth)
        return items

    def _literal_members(self, node: ast.expr, depth: int) -> Iterator[Located] | None:
        if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
            out: list[Located] = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    inner = self.members(elt.value, depth + 1)
                    if inner is None:
                        return None
                    out.extend(inner)
                else:
                    out.append(Located(elt, self.scope))
            return iter(out)
        if isinstance(node, ast.Dict):
            keys = []
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:  # **other
                    inner = self.members(value, depth + 1)
                    if inner is None:
                        return None
                    keys.extend(inner)
                else:
                    keys.append(Located(key, self.scope, dict_key=True, dict_value=value))
            return iter(keys)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("set", "frozenset", "tuple", "list", "dict")
            and len(node.args) == 1
        ):
            return self.members(node.args[0], depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitOr, ast.Add)):
            left = self.members(node.left, depth + 1)
            right = self.members(node.right, depth + 1)
            if left is None or right is None:
                return None
            return iter([*left, *right])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            return self._difference(node, depth)
        return None

    def _difference(self, node: ast.BinOp, depth: int) -> Iterator[Located] | None:
        """`{aten.linear.default, getattr(aten.mm, "default", None)} - {None}`: the left set's
        elements but those the right one names (written the same, or the same op and
        overload). A right side that cannot be read could take any of them away: unknown."""
        left = self.members(node.left, depth + 1)
        right = self.members(node.right, depth + 1)
        if left is None or right is None:
            return None
        taken = list(right)
        spelled = {ast.dump(m.node) for m in taken}
        ops = {ref for m in taken if (ref := self.for_scope(m.scope).op_ref(m.node)) is not None}
        return iter(
            [m for m in left if ast.dump(m.node) not in spelled and self.for_scope(m.scope).op_ref(m.node) not in ops]
        )


def _stars_of(project: ProjectIndex, scope: ModuleScope) -> tuple[str, ...]:
    """The modules `scope`'s module star-imports (`star_sources`)."""
    stars = scope.__dict__.get("_star_sources")
    if stars is None:  # once per scope object: a scope is rebuilt when its module changes
        stars = scope.__dict__["_star_sources"] = star_sources(project, scope.path, scope.module) if scope.path else ()
    return stars


def _join(base: str | None, rest: list[str]) -> str | None:
    if base is None:
        return None
    return ".".join([base, *rest]) if rest else base

"""Attributes a class hands to an exact sink through `self`, for its subclasses to fill in.

A pass interface loops over what its subclasses declare: ExecuTorch's cadence
`RemoveOrReplacePassInterface.call` runs `for target in self.targets:` into
`graph.find_nodes(op="call_function", target=target)`, and each pass of another module
says what `targets` holds (a property returning a list of ops). A packet there finds no
node (9116df7ea715 fixed `transposed_convolution` so). The rule reports the packet where
the subclass writes it; this module says which attributes of a class reach a sink in
the methods it inherits, and where.

A use counts only when the attribute's value (`self.<name>`, or `self.<name>()` for a
method) or an element of it meets a node target exactly: an element bound by a loop over
the attribute (the loop's name bound nowhere else in the method) handed to a sink or
compared with `==`/`is` against a node target, or the attribute itself handed to a sink,
tested with `in`, looked up by a node target (`[...]`, `.get(...)`), or compared with one.
Anything else leaves the op to the method to handle: `n.target in (op, op.default)`, a
name or `overloadpacket` comparison, a method that names `OpOverloadPacket` (it types its
ops). A method a subclass (or a class between them) overrides does not run for it.

Other modules are read through a summary fact (`InheritedSinksFact`): per class its bases,
its methods' names and the attributes its methods sink. A module whose text holds neither
a sink's name nor `target` sinks nothing (its classes' bases are still followed).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

from qlint.analysis.graphs.fx_targets import is_target_attr
from qlint.analysis.graphs.package_paths import runs_through_project
from qlint.analysis.identifier_text import normalised
from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.names.scope import ClassScope, ModuleScope, function_assigns, parameter_args
from qlint.analysis.tree_walk import own_nodes
from qlint.value_classes import value_class

_VERSION = 1
_MAX_DEPTH = 6
# How a use reads the attribute: its elements (a loop, `in`, a lookup), its value as one op
# (compared with a node target), or as a sink's argument (an op, or a collection of them).
EACH, ONE, ARG = "e", "o", "a"

# A class as the fact holds it: bases (dotted names, None when not one), its methods' names,
# and per sunk attribute (`name`, or `name()` when the method is called) the first use:
# [method, how (EACH, ONE or ARG), row, col, end_row, end_col].
ClassEntry = tuple[list, frozenset, dict]


@value_class(frozen=True)
class SinkUse:
    """Where a base class's method meets a node target with an attribute of `self`."""

    path: str
    owner: str  # the class whose method holds the use
    method: str
    how: str  # EACH, ONE or ARG
    span: tuple[int, int, int, int]  # row, col (ast: UTF-8 bytes), end row, end col


@value_class(eq=False)
class InheritedModule:
    path: str
    imports: dict[str, str]
    classes: dict[str, ClassEntry]
    # The modules its imports name: `import pkg.checks` sets the attribute a base's path
    # `pkg.checks.Base` runs through (`package_paths`).
    imported_modules: frozenset[str] = frozenset()


class InheritedSinksFact:  # a SummaryFact
    lazy = True  # asked only of the modules a subclass's bases lead to

    def __init__(self, key: str, direct: Callable[[ast.Call], Iterator[ast.expr]], needles: tuple[str, ...]):
        self.key = f"inherited-sinks/{_VERSION}/{key}"
        self._direct = direct
        self._needles = needles

    def compute(self, tree: ast.Module, scope: ModuleScope, text: str) -> Any:
        text = normalised(text)  # identifiers, as Python reads them
        sinks = "target" in text or any(n in text for n in self._needles)
        return {name: class_entry(cls, self._direct if sinks else None) for name, cls in scope.classes.items()}

    def load(self, path: str, summary, value: Any) -> InheritedModule | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise TypeError("not an inherited-sinks fact")
        classes = {}
        for name, (bases, methods, sunk) in value.items():
            classes[name] = (bases, frozenset(methods), sunk)
        return InheritedModule(path, dict(summary.imports), classes, frozenset(summary.imported_modules))


def class_entry(cls: ClassScope, direct) -> list:
    """The fact's entry of a class; with no `direct` (a module naming no sink), no use."""
    sunk: dict[str, list] = {}
    for name, func in cls.methods.items() if direct is not None else ():
        for attr, how, node in _sunk_uses(func, direct):
            if attr not in sunk:
                sunk[attr] = [name, how, node.lineno, node.col_offset, node.end_lineno, node.end_col_offset]
    return [[dotted_parts(b) for b in cls.bases], sorted(cls.methods), sunk]


def _self_attr(expr: ast.AST, me: str) -> str | None:
    """`name` for `self.name`, `name()` for `self.name()` (no arguments)."""
    if isinstance(expr, ast.Call) and not expr.args and not expr.keywords:
        inner = _self_attr(expr.func, me)
        return f"{inner}()" if inner is not None and not inner.endswith(")") else None
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == me:
        return expr.attr
    return None


def _sunk_uses(func, direct) -> Iterator[tuple[str, str, ast.AST]]:
    params = parameter_args(func, star=False)
    if not params or any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list):
        return
    me = params[0].arg
    nodes = own_nodes(func, scopes=False)
    stores: dict[str, int] = {}
    for node in nodes:
        if isinstance(node, ast.Name):
            if node.id == "OpOverloadPacket":
                return  # the method types its ops: whatever it compares, it knows packets
            if isinstance(node.ctx, ast.Store):
                stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.Attribute) and node.attr == "OpOverloadPacket":
            return
    if stores.get(me):
        return  # `self` rebound: it no longer names the instance
    assigns = function_assigns(func)
    targets = frozenset(n for n, vs in assigns.items() if vs and all(is_target_attr(v) for v in vs))
    # Names bound once, by a loop over an attribute: each holds an element of it.
    elements: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and isinstance(node.target, ast.Name):
            attr = _self_attr(node.iter, me)
            if attr is not None and stores.get(node.target.id) == 1:
                elements[node.target.id] = attr

    def element(expr: ast.AST) -> str | None:
        return elements.get(expr.id) if isinstance(expr, ast.Name) else None

    def target(expr: ast.AST) -> bool:
        return is_target_attr(expr) or (isinstance(expr, ast.Name) and expr.id in targets)

    for node in nodes:
        if isinstance(node, ast.Call):
            for arg in direct(node):
                if (attr := element(arg)) is not None:
                    yield attr, EACH, node
                elif (attr := _self_attr(arg, me)) is not None:
                    yield attr, ARG, node
            func_ = node.func
            if (
                isinstance(func_, ast.Attribute)
                and func_.attr == "get"
                and node.args
                and target(node.args[0])
                and (attr := _self_attr(func_.value, me)) is not None
            ):
                yield attr, EACH, node
        elif isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators, strict=True):
                if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
                    for a, b in ((left, right), (right, left)):
                        if target(a):
                            if (attr := element(b)) is not None:
                                yield attr, EACH, node
                            elif (attr := _self_attr(b, me)) is not None:
                                yield attr, ONE, node
                elif (
                    isinstance(op, (ast.In, ast.NotIn)) and target(left) and (attr := _self_attr(right, me)) is not None
                ):
                    yield attr, EACH, node
                left = right
        elif (
            isinstance(node, ast.Subscript) and target(node.slice) and (attr := _self_attr(node.value, me)) is not None
        ):
            yield attr, EACH, node


class OwnClasses(dict):
    """The checked module's classes as the fact reads them, each read when first asked (a
    module's classes rarely derive from one another)."""

    def __init__(self, scope: ModuleScope, direct):
        super().__init__()
        self._classes = scope.classes
        self._direct = direct

    def __contains__(self, name: object) -> bool:
        return name in self._classes

    def __missing__(self, name: str) -> ClassEntry:
        bases, methods, sunk = class_entry(self._classes[name], self._direct)
        entry = self[name] = (bases, frozenset(methods), sunk)
        return entry


def inherited_uses(project, path: str, scope: ModuleScope, cls: ClassScope, fact: InheritedSinksFact, own) -> dict:
    """Attribute (`name` / `name()`) -> the `SinkUse` of a method `cls` inherits (from its
    bases in this module or other modules of the project) and runs; `own`: this module's
    classes (`OwnClasses`). Every module read is recorded as a dependency of the check of
    `path`.

    A method runs for `cls` when it comes first in the method resolution order among the
    classes defining it. C3 puts a class before its bases, but a class beside it (another
    base's branch) may come before or after it: a method is taken only when no class of the
    hierarchy but its own class and that class's ancestors defines it (quiet on a mixin that
    may override it)."""
    root = ("", "")
    classes: dict[tuple[str, str], tuple[frozenset, dict]] = {root: (frozenset(cls.methods), {})}
    above: dict[tuple[str, str], list[tuple[str, str]]] = {root: []}
    here = InheritedModule(path, dict(scope.imports), own, frozenset(scope.imported_modules))
    stack = [(root, here, parts, 0) for parts in reversed([dotted_parts(b) for b in cls.bases])]
    while stack:
        child, module, parts, depth = stack.pop()
        located = _base(project, path, module, parts, fact)
        if located is None:
            continue
        other, name, (bases, methods, sunk) = located
        key = (other.path, name)
        above[child].append(key)
        if key in classes:
            continue
        classes[key], above[key] = (methods, sunk), []
        if depth < _MAX_DEPTH:
            stack.extend((key, other, b, depth + 1) for b in reversed(bases))
    found: dict[str, SinkUse] = {}
    for key, (_, sunk) in classes.items():
        if not sunk:
            continue
        mine = _ancestors(key, above) | {key}
        for attr, (method, how, *span) in sunk.items():
            if attr not in found and all(k in mine for k, (m, _) in classes.items() if method in m):
                found[attr] = SinkUse(key[0], key[1], method, how, tuple(span))
    return found


def _ancestors(key: tuple[str, str], above: dict) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    stack = list(above[key])
    while stack:
        k = stack.pop()
        if k not in out:
            out.add(k)
            stack.extend(above.get(k, ()))
    return out


def _base(project, requester: str, module: InheritedModule, parts, fact):
    """The class a base's dotted name denotes, with the module (as the fact reads it) that
    defines it, looked up from `module`'s own classes and imports."""
    for _ in range(_MAX_DEPTH):
        if not parts:
            return None
        if len(parts) == 1 and parts[0] in module.classes:
            return module, parts[0], module.classes[parts[0]]
        head = module.imports.get(parts[0])
        if head is None:
            return None
        full = ".".join([head, *parts[1:]])
        if full.startswith(("torch.", "builtins.", "typing.", "abc.")):
            return None
        if len(parts) > 2 and not runs_through_project(project, requester, module, head, parts[1:-1]):
            return None  # `pkg.checks.Base` where the package binds `checks` to something else
        name_module, _, name = full.rpartition(".")
        found = project.find_module_in_check(name_module, module.path) if name_module else None
        if found is None:
            return None
        other = project.fact_at(found, fact)
        # Read for this check whatever it says: a change of that module changes the answer.
        project.record_read(requester, found, project.digest(found))
        if other is None or other.path == module.path:
            return None
        module, parts = other, [name]
    return None

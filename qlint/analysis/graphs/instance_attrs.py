"""Op collections a class keeps on its instances (`self.q_ops = {...}` in `__init__`).

Passes hold their op sets as class attributes or as instance attributes set in a method,
and match `n.target in self.q_ops` in another method. The name resolver knows class
attributes; this adds the instance ones to a copy of the class scope the op rules resolve
`self.<attr>` against.

Only values that stand on their own count: `self.ops = ops` (a parameter) or a value built
from the method's locals says nothing readable from the class, so such an attribute stays
unresolved (and the rules quiet).
"""

from __future__ import annotations

import ast

from qlint.analysis.names.scope import ClassScope, function_assigns
from qlint.analysis.tree_walk import walk_kinds
from qlint.source import LineIndex

_CACHE_KEY = "graphs.instance_attrs"


def with_instance_attrs(
    class_scope: ClassScope | None, cache: dict, lines: LineIndex | None = None
) -> ClassScope | None:
    """`class_scope` whose assignments also answer for `self.<attr> = value` in its methods
    (read the first time a name is not a class attribute; cached per class in `cache`)."""
    if class_scope is None:
        return None
    seen = cache.setdefault(_CACHE_KEY, {})
    key = id(class_scope.node)
    if key not in seen:
        merged = ClassScope(class_scope.node, _Assigns(class_scope, lines), class_scope.methods, class_scope.bases)
        seen[key] = (class_scope.node, merged)  # the node keeps the id from being reused
    return seen[key][1]


class _Assigns(dict):
    """Class-level assignments, falling back to the instance ones on a miss: most classes
    are never asked about an attribute they do not define at class level."""

    def __init__(self, class_scope: ClassScope, lines: LineIndex | None):
        super().__init__(class_scope.assigns)
        self._class_scope = class_scope
        self._lines = lines
        self._instance: dict[str, list[ast.expr]] = {}
        # id(method) -> every `self.<attr>` it assigns: a class is asked about several
        # attributes, and each method is walked once for all of them.
        self._per_method: dict[int, dict[str, list[ast.expr]]] = {}

    def get(self, name, default=None):
        if name not in self._instance:
            found: list[ast.expr] = []
            for method in self._class_scope.methods.values():
                # Only methods whose text names the attribute are read.
                if self._lines is not None and f".{name}" not in _source(self._lines, method):
                    continue
                assigns = self._per_method.get(id(method))
                if assigns is None:
                    assigns = self._per_method[id(method)] = instance_assigns(self._class_scope, [method])
                found += assigns.get(name, ())
            self._instance[name] = found
        values = [*dict.get(self, name, ()), *self._instance[name]]
        return values or default


def _source(lines: LineIndex, node: ast.AST) -> str:
    starts = lines.starts
    end = starts[node.end_lineno] if node.end_lineno < len(starts) else len(lines.text)
    return lines.text[starts[node.lineno - 1] : end]


def instance_assigns(class_scope: ClassScope, methods=None, only: str | None = None) -> dict[str, list[ast.expr]]:
    """`attr -> values` for `self.attr = value` in the class's methods. A value that uses a
    name local to its method is recorded as the unreadable parameter-like marker (the
    method's own `ast.arguments`), which makes the attribute ambiguous, not resolvable."""
    found: dict[str, list[ast.expr]] = {}
    for method in class_scope.methods.values() if methods is None else methods:
        params = method.args.posonlyargs + method.args.args
        if not params or any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list):
            continue
        me = params[0].arg
        local: set[str] | None = None
        # Only the nodes `_mutated_attr` or the assignments below can take, in `ast.walk` order.
        for node in walk_kinds(method, _READ):
            mutated = _mutated_attr(node, me)
            if mutated is not None and only not in (None, mutated):
                continue
            if mutated is not None:
                # `self.ops.add(aten.relu.default)`, `self.ops |= ...`: the literal is not the
                # whole content.
                found.setdefault(mutated, []).append(method.args)
                continue
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            for target in targets:
                if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)):
                    continue
                if target.value.id != me or only not in (None, target.attr):
                    continue
                if local is None:
                    local = set(function_assigns(method))
                readable = not any(isinstance(n, ast.Name) and n.id in local for n in ast.walk(value))
                found.setdefault(target.attr, []).append(value if readable else method.args)
    return found


_READ = frozenset({ast.AugAssign, ast.Call, ast.Assign, ast.Delete, ast.AnnAssign})
_MUTATORS = frozenset({"add", "update", "append", "extend", "insert", "setdefault", "__setitem__", "__ior__"})


def _mutated_attr(node: ast.AST, me: str) -> str | None:
    if isinstance(node, ast.AugAssign):
        target = node.target
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
        target = node.func.value
    elif isinstance(node, (ast.Assign, ast.Delete)) and isinstance(
        first := (node.targets[0] if node.targets else None), ast.Subscript
    ):
        target = first.value  # `self.ops[aten.relu.default] = ...`
    else:
        return None
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me:
        return target.attr
    return None

"""The class a method call's receiver was built from, where the code says so: classes as links
of a wrapper chain.

A project's insertion wrapper is often a method (`GraphBuilder(graph).insert(op)`, or
`self.builder.insert(op)` after `self.builder = GraphBuilder(graph)` in `__init__`). The helper
search resolves such a call to the class's method when the receiver is, in the code at hand,
an instance of one class: a construction `X(...)`, a local bound once to one, or an instance
attribute every assignment of which (in the class's methods, or at class level) is the same
construction. A receiver bound twice (`b = GraphBuilder(g)`, then `b = Printer()`), a
parameter, or a value built elsewhere is no known instance: the call stays unresolved, as
any other attribute call.

Only the class's dotted name is read here (`["GraphBuilder"]`, `["bl", "GraphBuilder"]`):
whether it names a class of the project, and which, the search decides as it does for bases.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.names.scope import ClassScope, function_assigns, unique_value
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk_kinds

_INSTANCE = "_qlint_receiver_instance_assigns"
_ASSIGNS = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign})


def constructed_class(
    receiver: ast.expr, local: Mapping[str, list], class_scope: ClassScope | None
) -> list[str] | None:
    """The dotted name of the class `receiver` is an instance of (`local`: the names the
    enclosing function binds, parameters included; `class_scope`: its class, for `self.a`)."""
    if isinstance(receiver, ast.Name):
        value = unique_value(local.get(receiver.id)) if receiver.id in local else None
    elif (
        isinstance(receiver, ast.Attribute)
        and isinstance(receiver.value, ast.Name)
        and receiver.value.id == "self"
        and class_scope is not None
    ):
        value = unique_value(_attribute_values(class_scope, receiver.attr))
    else:
        value = receiver
    if not isinstance(value, ast.Call):
        return None
    parts = dotted_parts(value.func)
    if not parts or parts[0] in ("self", "cls", "super") or parts[0] in local:
        return None  # a method's result, or a local named like a class: no known class
    return parts


def _attribute_values(class_scope: ClassScope, attr: str) -> list:
    """Every value `attr` is given on the class: at class level and as `self.attr = value` in
    its methods. Read from the class's own assignments, not a scope that may have merged
    them already."""
    instance = kept_on_node(class_scope.node, _INSTANCE, _instance_values)
    return [*dict.get(class_scope.assigns, attr, ()), *instance.get(attr, ())]


def _instance_values(node: ast.ClassDef) -> dict[str, list]:
    """`attr -> values` of `self.attr = value` in the class's own methods. Unlike the op
    collections' reading (`instance_attrs`), a construction's arguments may be the method's
    locals (`self.builder = GraphBuilder(gm.graph)`), and calling a method of the attribute
    (`self.builder.insert(op)`) does not change which object it holds; a class named by a
    local of the method is no known class (a marker that is no construction)."""
    found: dict[str, list] = {}
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = method.args.posonlyargs + method.args.args
        if not params or any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list):
            continue
        me = params[0].arg
        local = None
        # The assignments alone, in `ast.walk` order (torch's big classes: most of the walk).
        for stmt in walk_kinds(method, _ASSIGNS):
            if isinstance(stmt, ast.Assign):
                targets, value = stmt.targets, stmt.value
            elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
                targets, value = [stmt.target], stmt.value
                if isinstance(stmt, ast.AugAssign):
                    value = stmt  # not a construction
            else:
                continue
            for target in targets:
                for leaf in _leaves(target):
                    if not (
                        isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name) and leaf.value.id == me
                    ):
                        continue
                    held = value if leaf is target else stmt  # unpacked: not the construction
                    if isinstance(held, ast.Call):
                        local = function_assigns(method) if local is None else local
                        parts = dotted_parts(held.func)
                        if not parts or parts[0] in local:
                            held = stmt
                    found.setdefault(leaf.attr, []).append(held)
    return found


def _leaves(target: ast.expr):
    if isinstance(target, (ast.Tuple, ast.List)):
        for item in target.elts:
            yield from _leaves(item.value if isinstance(item, ast.Starred) else item)
    else:
        yield target

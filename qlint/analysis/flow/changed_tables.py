"""Tables of callables that may not hold what their literal wrote, and the one element a
constant key picks.

`handlers = {"eval": to_eval, "log": log}` then `handlers[kind](gm)`: each value may run.
Only while the table is the literal: an item stored or deleted (`handlers["eval"] = other`,
`del handlers["eval"]`), a method that changes it (`update`, `setdefault`, `pop`, `clear`,
...) or an augmented assignment (`handlers |= extra`), of the table or of a name bound to it
(`h = handlers`), or a store of it into an attribute or item (`self.table = handlers`),
makes what runs unknown, and the dispatch is not followed at all rather than guessed. Read
anywhere in the function that binds a local table, before the lookup or after it (a loop may
bring a later change round); for a table of the module, in the bodies of its functions and
methods. Not seen: a change in a top-level statement after the literal, or by a function
handed the table (`register(HANDLERS)`).

`{"eval": to_eval, "log": log}["log"](gm)`: a constant key picks one element (`[log,
to_eval][0]` likewise), the last one written under that key; a key the literal lacks picks
none (the lookup raises), and so does a key of another type than the literal's.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.read_only_params import MUTATORS
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk

_CHANGES = MUTATORS | {"pop", "popitem", "clear", "remove", "discard", "__delitem__", "sort", "reverse"}
_KEPT = "_qlint_changed_tables"


def changed_in(body: ast.AST, name: str) -> bool:
    """Whether `body` (a function, a class or a module) may change, or alias, table `name`."""
    return name in kept_on_node(body, _KEPT, _changed_names)


def _changed_names(body: ast.AST) -> frozenset[str]:
    changed: set[str] = set()
    aliases: list[tuple[str, str]] = []  # (alias, table): `h = handlers`
    for node in walk(body):  # `ast.walk`'s order; the tokens left out are none of these
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if isinstance(node.value, ast.Name):
                changed.add(node.value.id)  # `handlers["eval"] = other`, `del handlers["eval"]`
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _CHANGES and isinstance(node.func.value, ast.Name):
                changed.add(node.func.value.id)  # `handlers.update(other)`
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            changed.add(node.target.id)  # `handlers |= extra`
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for table in _aliased(node.value):
                for target in targets:
                    if isinstance(target, ast.Name):
                        aliases.append((target.id, table))
                    else:
                        changed.add(table)  # `self.table = handlers`: changed elsewhere unseen
    grown = True
    while grown:  # a table changes with each name bound to it
        grown = False
        for alias, table in aliases:
            if alias in changed and table not in changed:
                changed.add(table)
                grown = True
    return frozenset(changed)


def _aliased(value: ast.expr | None) -> list[str]:
    if isinstance(value, ast.Name):
        return [value.id]
    if isinstance(value, (ast.Tuple, ast.List)):
        return [e.id for e in value.elts if isinstance(e, ast.Name)]
    return []


def keyed(table: ast.Dict | ast.List | ast.Tuple, key: ast.expr) -> list[ast.expr] | None:
    """The elements a lookup with `key` may pick: the one a constant key names ([] when the
    literal has none there), every element for any other key; None when the literal cannot
    be read (`**other`, `*rest`)."""
    if isinstance(table, ast.Dict):
        if any(k is None for k in table.keys):
            return None
        if not isinstance(key, ast.Constant):
            return list(table.values)
        if not all(isinstance(k, ast.Constant) for k in table.keys):
            return list(table.values)  # a key of a name may equal the constant: any may run
        picked = [v for k, v in zip(table.keys, table.values, strict=True) if _same(k.value, key.value)]
        return picked[-1:]  # a later duplicate key replaces an earlier one
    if any(isinstance(e, ast.Starred) for e in table.elts):
        return None
    index = _index(key)
    if index is not None:
        return [table.elts[index]] if -len(table.elts) <= index < len(table.elts) else []
    if isinstance(key, ast.Slice) or (isinstance(key, ast.Constant) and not isinstance(key.value, int)):
        return []  # a slice is a list, no callable; a string index raises
    return list(table.elts)


def _index(key: ast.expr) -> int | None:
    """A constant int index, `-1` too (a unary minus on a constant)."""
    if isinstance(key, ast.UnaryOp) and isinstance(key.op, ast.USub):
        found = _index(key.operand)
        return -found if found is not None else None
    return key.value if isinstance(key, ast.Constant) and type(key.value) is int else None


def _same(a: object, b: object) -> bool:
    # `{1: f}[True]` finds `f` in Python, but a bool key for an int is too odd to read as meant.
    return type(a) is type(b) and a == b

"""Whether a decorator-filled registry holds only what its decorator puts there, so that the
keys a class is registered under say which callers reach it (issue 14,
`decorator_registries`).

A call recorded with a `Selection` reaches the class's method only for callers whose argument
is of a class the class is registered under. That holds when nothing but the decorator writes
the registry and the decorator registers the class under no key but those it shows:

- in the registry's module, the registry is bound once and every other appearance of it is
  the decorator's store or a lookup (`REG.get(k)`, `REG[k]`, `k in REG`), and no `global`
  names it;
- no other module of the project names the registry (it could store into it, clear it,
  hand it on);
- every use of the decorator in the project is `@decorator(key)` on a class statement, or
  registers only classes its own module defines (`registry_registrations`: a test double;
  a call `decorator(key)(cls)` of any other class may register the class under a key the
  class does not show);
- no module subclasses the class (a registered subclass runs the method under its own key).

Anything else, or a project that cannot be searched, and the selection is not trusted: every
caller of the dispatching function is a caller of the method.
"""

from __future__ import annotations

import ast
import os
import re

from qlint.analysis.context import FileContext
from qlint.analysis.flow.method_references import subclassed_in
from qlint.analysis.flow.project_search import paths_naming, tree_at
from qlint.analysis.flow.registry_registrations import ends_with_name, registers_own_classes_only

_MEMO = "registry_closure.closed"


def closed(ctx: FileContext, selection) -> bool:
    """Nothing but the decorator writes the selection's registry, and it registers the class
    under the keys its own decorators show (once per check and selection)."""
    memo = ctx.cache.setdefault(_MEMO, {})
    asked = (selection.module, selection.registry, selection.decorator, selection.cls)
    if asked not in memo:
        memo[asked] = _closed(ctx, selection)
    return memo[asked]


def _closed(ctx: FileContext, selection) -> bool:
    users = decorator_users(ctx, selection.module, selection.registry, selection.decorator)
    if users is None:
        return False
    for path in {*users, os.path.abspath(ctx.path)}:
        module = ctx.tree if path == os.path.abspath(ctx.path) else tree_at(ctx, path)
        if module is None:
            return False
        if not registers_own_classes_only(module, selection.decorator, selection.cls, named_outside(ctx, path)):
            return False
    holders = paths_naming(ctx, selection.cls)
    if holders is None:
        return False
    for path in holders:
        text = ctx.project.text(path)
        if text is None or subclassed_in(text.encode(), selection.cls):
            return False
    # The checked module's own subclasses: each registered one is a target of its own.
    return not any(
        isinstance(n, ast.ClassDef) and any(ends_with_name(b, selection.cls) for b in n.bases)
        for n in ast.walk(ctx.tree)
    )


def decorator_users(ctx: FileContext, module: str, registry: str, decorator: str) -> list[str] | None:
    """The project's modules that name `decorator`, when nothing but it writes `registry` (the
    first two conditions above); None when something else may write it or the project cannot
    be searched."""
    scope = ctx.project.module_scope(module, ctx.path)
    if scope is None:
        return None
    home = os.path.abspath(scope.path)
    tree = tree_at(ctx, home)
    if tree is None or not _written_by_decorator_only(tree, registry, decorator):
        return None
    named = paths_naming(ctx, registry)
    if named is None or any(os.path.abspath(p) != home for p in named):
        return None
    if os.path.abspath(ctx.path) != home and spells_word(ctx.text, registry):
        return None
    return paths_naming(ctx, decorator)


def _written_by_decorator_only(tree: ast.Module, registry: str, decorator: str) -> bool:
    parents: dict[int, ast.AST] = {}
    deco = next((s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == decorator), None)
    if deco is None:
        return False
    inside = {id(n) for n in ast.walk(deco)}
    bindings = 0
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and registry in node.names:
            return False
        if not (isinstance(node, ast.Name) and node.id == registry):
            continue
        parent = parents.get(id(node))
        if not isinstance(node.ctx, ast.Load):
            bindings += 1
            if not any(parent is stmt for stmt in tree.body):
                return False  # bound somewhere else than at module level
            continue
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if isinstance(parent.ctx, ast.Load) or id(parent) in inside:
                continue  # a lookup, or the decorator's own store (`decorator_registries` read it)
            return False
        if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr == "get":
            call = parents.get(id(parent))
            if isinstance(call, ast.Call) and call.func is parent:
                continue
            return False
        if (
            isinstance(parent, ast.Compare)
            and any(c is node for c in parent.comparators)
            and all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops)
        ):
            continue  # `key in REG`
        return False
    return bindings == 1


def named_outside(ctx: FileContext, path: str):
    """Whether a module of the project other than `path` names a name (unknown: yes)."""

    def named(name: str) -> bool:
        found = paths_naming(ctx, name)
        if found is None:
            return True
        here = os.path.abspath(path)
        return any(os.path.abspath(p) != here for p in found) or (
            os.path.abspath(ctx.path) != here and spells_word(ctx.text, name)
        )

    return named


def spells_word(text: str, word: str) -> bool:
    """`word` stands in `text` as a whole word: a name no parse is needed to rule out."""
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None


__all__ = ["closed", "decorator_users", "named_outside", "spells_word"]

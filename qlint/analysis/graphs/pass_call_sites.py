"""The calls of a module-level function of the project (a graph pass), for
`self_traced_graphs`: in its own module and in the project's other modules spelling its
name, each with the function making it; none at all when the name is used otherwise
anywhere (handed on, imported under another name, called at module level).

The other modules are those of the package spelling the name (`init_fields.modules_naming`),
each walked once for every name asked of it (`_index`).
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.init_fields import modules_naming
from qlint.analysis.graphs.namesakes import own_namesake
from qlint.analysis.names.functions import innermost_body
from qlint.analysis.names.modules import resolve_relative
from qlint.analysis.tree_walk import walk_kinds

__all__ = ["pass_call_sites"]

# The node kinds the call-site and import walks read (`tree_walk.walk_kinds`: the nodes of
# `ast.walk`, in its order, without queueing attribute chains nothing in them is asked of).
_SITE_KINDS = frozenset({ast.alias, ast.Call, ast.Name, ast.Attribute})
_IMPORT_FROM = frozenset({ast.ImportFrom})


def pass_call_sites(ctx: FileContext, name: str) -> list[tuple[FileContext, ast.AST, ast.Call]]:
    """(module, calling function, call) for each call of the module-level function `name` in
    its module and in the project's other modules spelling the name; empty when the name is
    used otherwise anywhere (handed on, imported under another name, called at module level)."""
    found: list[tuple[FileContext, ast.AST, ast.Call]] = []
    for module in [ctx, *modules_naming(ctx, name)]:
        if module is not ctx and own_namesake(module, name):
            continue
        sites = _sites_in(module, name, module is ctx, ctx.module)
        if sites is None:
            return []
        found.extend((module, owner, call) for owner, call in sites)
    return found


def _sites_in(module: FileContext, name: str, own: bool, home: str | None) -> list[tuple[ast.AST, ast.Call]] | None:
    # Another module that imports `name` only from modules other than `home` (the pass's own)
    # calls another function of that name when it calls `name(...)`: pytorch-shir's backend
    # imports one instruction selector's `select`, not its siblings'.
    others = not own and home is not None and _imports_elsewhere(module, name, home)
    calls, names, attributes, renamed = _index(module)
    if name in renamed:
        return None  # imported under another name: its calls are not spelled `name`
    # `name(...)`, and in another module `module.name(...)` too, in the order the walk met them.
    uses = [] if others else names.get(name, [])
    if not own and name in attributes:
        uses = sorted([*uses, *attributes[name]], key=lambda use: use[0])
    out = []
    for _, use in uses:
        call = calls.get(id(use))
        owner = innermost_body(module.tree, module.scope, module.cache, call.lineno) if call is not None else None
        if owner is None:
            return None
        out.append((owner.node, call))
    return out


# `FileContext.cache` key of `_index`: the module's loads by name, read once for every name
# asked of it (ao's qat_utils.py is asked about four of its functions, each a walk of its tree).
_INDEX = "pass_call_sites.index"


def _index(module: FileContext) -> tuple[dict[int, ast.Call], dict, dict, set[str]]:
    """(call by the id of its callee, loaded names and loaded attributes by identifier, each
    as (position in the walk, node), the last parts of the names imported under another
    name), from one walk of the module's tree."""
    found = module.cache.get(_INDEX)
    if found is None:
        calls: dict[int, ast.Call] = {}
        names: dict[str, list[tuple[int, ast.expr]]] = {}
        attributes: dict[str, list[tuple[int, ast.expr]]] = {}
        renamed: set[str] = set()
        for position, node in enumerate(walk_kinds(module.tree, _SITE_KINDS)):
            kind = type(node)
            if kind is ast.Call:
                calls[id(node.func)] = node
            elif kind is ast.Name:
                if type(node.ctx) is ast.Load:
                    names.setdefault(node.id, []).append((position, node))
            elif kind is ast.Attribute:
                if type(node.ctx) is ast.Load:
                    attributes.setdefault(node.attr, []).append((position, node))
            elif node.asname:
                renamed.add(node.name.rpartition(".")[2])
        found = module.cache[_INDEX] = (calls, names, attributes, renamed)
    return found


def _imports_elsewhere(module: FileContext, name: str, home: str) -> bool:
    """The module binds `name` by `from ... import name` statements (anywhere in it), each from
    a module of the project that defines a function or class of that name itself: its bare
    `name` is that other module's. An import from `home`, a star import from it, or one from a
    module that does not define the name (a package re-exporting it: easydist's `passes`
    package re-exports `tile_comm`) may be the pass's own."""
    found = False
    for node in walk_kinds(module.tree, _IMPORT_FROM):
        base = resolve_relative(module.module, module.path, node.level, node.module)
        for alias in node.names:
            if alias.name == "*" and base == home:
                return False
            if alias.name == name and alias.asname is None:
                if base is None or base == home or not _defines(module, base, name):
                    return False
                found = True
    return found


def _defines(module: FileContext, base: str, name: str) -> bool:
    """The module `base` of the project defines `name` at its top level (read off its text)."""
    path = module.project.find_module_in_check(base, module.path)
    text = module.project.text(path) if path is not None else None
    if text is None:
        return False
    own = re.compile(rf"^(?:async\s+def|def|class)\s+{re.escape(name)}\b", re.M)
    return own.search(text) is not None

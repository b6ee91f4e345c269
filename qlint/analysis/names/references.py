"""Who names what in a module: the rows of its references to each name, as a summary fact.

Project-wide lookups (QL201's callers of a helper) search every module for one name. The
module's text holding the name says little (docstrings, comments, a local of that name), and
walking the whole tree of each module that holds it, at every check, cost most of the lookup
on ExecuTorch. This fact is computed once per module content, from the parse that builds the
module's summary (`summary_facts`): the rows where a name is loaded (`name`, `x.name`), and
the names `from m import name as alias` binds it to. A lookup then skips a module that
never loads the name (nor an alias of it) without building its context, and walks only the
statements on those rows of the others. It also lists the names whose every use the
module's imports alone decide (`sole_imports`): a module whose `quantize_model` is imported
from a module that is not the helper's is no caller, and is not parsed to find that out.
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.statement_walk import own_statements
from qlint.analysis.tree_walk import walk
from qlint.value_classes import value_class


@value_class(frozen=True)
class References:
    loads: dict[str, tuple[int, ...]]  # name -> rows where it is loaded, as `name` or `x.name`
    aliases: dict[str, tuple[str, ...]]  # imported name -> the names `as` binds it to
    # Names bound once, by a module-level `from m import name`, and nothing else (no other
    # import, assignment, parameter, `def`, `global`, star import), never loaded as `x.name`:
    # each of their loads is that import, so the module's summary says where they come from.
    sole_imports: frozenset[str] = frozenset()

    def names_for(self, name: str) -> set[str]:
        """`name` and what imports rebind it to in this module."""
        return {name, *self.aliases.get(name, ())}

    def rows(self, names: set[str]) -> set[int]:
        """The rows where one of `names` is loaded (empty: the module never uses them)."""
        return {row for n in names for row in self.loads.get(n, ())}


_DECORATED = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_LOADS = frozenset({ast.Name, ast.Attribute})


class _ReferencesFact:
    key = "references.2"
    # Asked of the modules that name a helper QL201 looks up (ExecuTorch: 81 of the 284
    # summarised); computed at every summary it cost more than parsing those again.
    lazy = True

    def compute(self, tree: ast.Module, scope, text: str) -> dict:
        loads: dict[str, set[int]] = {}
        aliases: dict[str, list[str]] = {}
        # Statements run in the module's namespace: in its blocks (`if`, `try`), not its defs.
        module_level = {id(s) for s in own_statements(tree.body)}
        imported: dict[str, int] = {}  # name -> module-level `from` imports binding it
        other: set[str] = set()  # names bound otherwise, or loaded as an attribute
        star = False
        # `tree_walk.walk`: every module summarised computes this fact, at half `ast.walk`'s cost.
        for node in walk(tree):
            kind = type(node)
            if kind is ast.Name:
                if type(node.ctx) is ast.Load:
                    loads.setdefault(node.id, set()).add(node.lineno)
                else:
                    other.add(node.id)
            elif kind is ast.Attribute:
                if type(node.ctx) is ast.Load:
                    loads.setdefault(node.attr, set()).add(node.lineno)
                    other.add(node.attr)
            elif kind is ast.ImportFrom:
                for alias in node.names:
                    if alias.asname and alias.asname != alias.name:
                        aliases.setdefault(alias.name, []).append(alias.asname)
                    if alias.name == "*":
                        star = True
                    elif id(node) in module_level:
                        bound = alias.asname or alias.name
                        imported[bound] = imported.get(bound, 0) + 1
                    else:
                        other.add(alias.asname or alias.name)
            elif kind is ast.Import:
                other.update(a.asname or a.name.partition(".")[0] for a in node.names)
            elif kind is ast.arg:
                other.add(node.arg)
            elif kind in _BINDS_NAME:
                if node.name:
                    other.add(node.name)
            elif kind in _BINDS_NAMES:
                other.update(node.names)
            elif kind is ast.MatchMapping and node.rest:
                other.add(node.rest)
            if kind in _DECORATED and node.decorator_list:
                # A decorator sits above its statement's first row: the row of `def`/`class`
                # too, so that a walk of the statements spanning the rows reaches it.
                for decorator in node.decorator_list:
                    for sub in walk(decorator):
                        if type(sub) in _LOADS and type(sub.ctx) is ast.Load:
                            loads.setdefault(sub.id if type(sub) is ast.Name else sub.attr, set()).add(node.lineno)
        sole = [] if star else sorted(n for n, count in imported.items() if count == 1 and n not in other)
        return {"loads": {n: sorted(rows) for n, rows in loads.items()}, "aliases": aliases, "sole_imports": sole}

    def load(self, path: str, summary, value: dict) -> References:
        loads = {n: tuple(_row(r) for r in rows) for n, rows in value["loads"].items()}
        aliases = {n: tuple(_name(a) for a in names) for n, names in value["aliases"].items()}
        return References(loads, aliases, frozenset(_name(n) for n in value["sole_imports"]))


# Nodes binding the name they carry (`def f`, `class C`, `except E as e`, `case x`, `case [*x]`),
# and those binding the names they list (`global x, y`).
_BINDS_NAME = frozenset(
    {ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.MatchAs, ast.MatchStar}
)
_BINDS_NAMES = frozenset({ast.Global, ast.Nonlocal})


def _row(value) -> int:
    if type(value) is not int:
        raise TypeError("a row is an int")
    return value


def _name(value) -> str:
    if type(value) is not str:
        raise TypeError("an alias is a str")
    return value


REFERENCES = _ReferencesFact()


def spells(data: bytes, name: str) -> bool:
    """Whether `data` (a module's bytes) holds `name` as a whole identifier, the test a module
    must pass to hold a reference to it: every reference this fact lists (a load of `name` or
    `x.name`, an import `from m import name as alias` and the alias's loads) spells the name as
    a token, and an ASCII letter, digit or underscore beside it makes it another identifier
    (`name_v2`, `apply_name`: on ao, 19 of the 20 modules holding `dynamic_quant` hold it only
    so). A byte past ASCII beside it is taken as a boundary: it may be no identifier character,
    and then the module is parsed and its references decide, as without this test."""
    return _spelling(name).search(data) is not None


_SPELLINGS: dict[str, re.Pattern[bytes]] = {}


def _spelling(name: str) -> re.Pattern[bytes]:
    found = _SPELLINGS.get(name)
    if found is None:
        if len(_SPELLINGS) > 1024:  # a language server asks for names all session long
            _SPELLINGS.clear()
        found = _SPELLINGS[name] = re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(name.encode()) + rb"(?![A-Za-z0-9_])")
    return found

"""Insertions in a function nothing can call (QL102).

A node inserted by code that never runs reaches no graph. Whether a function runs is only
decidable where every way to reach it is visible in the project:

- a function nested in another is reached only through the enclosing body: uncalled there
  (its name read nowhere in that body), it never runs;
- a module-level function or a method of a class without bases whose name is private
  (`_name`, not a dunder) is not public API: if no code of its module reads the name and no
  other module of the project (the package holding it; a script outside any package has no
  known neighbours) spells it, it never runs.

A public function stays live even when the project never calls it: a library's users call
it (the Gaudi bridge's `replace_pattern_quant_dequant_softmax`, whose one call in the project
is commented out, is public by its name and module here; `dead_code` drops its findings
through `unreached_api`). So does anything a decorator may register, a method a base class
may call by name (torch's `nn.Module` calls private hooks such as `_load_from_state_dict`),
and a module that looks names up at run time (`globals()`, `vars()`, `getmembers`, `getattr`
with a computed name).
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.project_scan import scan_root
from qlint.analysis.graphs.stripped_later import named_elsewhere
from qlint.analysis.word_search import AnchoredPattern

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Run-time lookups of a module's names: any function of such a module may be called. Searched
# from where its words occur (`word_search`): asked of the whole module on most checks with
# findings, where `re` alone would try the pattern at every character.
DYNAMIC_LOOKUP = AnchoredPattern(
    r"\b(?:globals|vars|locals|getmembers)\s*\(|__dict__", ("globals", "vars", "locals", "getmembers", "__dict__")
)


def never_runs(ctx: FileContext, row: int) -> bool:
    """Whether the code at `row` sits in a function that nothing can call."""
    # Most findings sit in public functions or methods of subclasses: decided without a walk.
    candidates = [(p, f) for p, f in enclosing_definitions(ctx.tree, row) if _may_be_unreachable(ctx, p, f)]
    if not candidates or DYNAMIC_LOOKUP.in_module(ctx) or computed_getattr(ctx):
        return False
    for parent, func in candidates:
        if isinstance(parent, _FUNCS):
            if not read_in(parent, func):
                return True
        elif not read_in(ctx.tree, func) and not named_elsewhere(ctx, func.name):
            return True
    return False


def _may_be_unreachable(ctx: FileContext, parent: ast.AST, func: ast.AST) -> bool:
    """A function reached only through its enclosing body, or a private one of a module or
    of a baseless class, undecorated."""
    if not isinstance(func, _FUNCS) or func.decorator_list:
        return False
    if isinstance(parent, _FUNCS):
        return True
    if not _private(func.name) or not (isinstance(parent, ast.Module) or baseless(parent)):
        return False
    # A script outside any package: which neighbours import it is not known.
    return scan_root(ctx.path) is not None


def computed_getattr(ctx: FileContext) -> bool:
    """`getattr(obj, name)` with a name built at run time (`getattr(self, "_visit_" + op)`):
    a dispatch that may reach any function or method of the module. A text without the word
    needs no walk (asked on every keystroke), and one with it is walked only down the nodes
    spanning a row that spells it (`_spanning`): ao's 1,970-line observer.py holds four."""
    if "getattr" not in ctx.words:
        return False
    # Asked again for each finding's function (dead_code): one walk per check.
    found = ctx.cache.get(_COMPUTED_GETATTR)
    if found is None:
        rows = ctx.lines_containing("getattr")
        if not ctx.text.isascii():
            # An identifier may be spelled otherwise past ASCII (names are read NFKC-normalised),
            # and then holds a character past ASCII on its row: those rows are walked down too,
            # not the whole module (ExecuTorch's reorder_ops.py, two em dashes in a docstring:
            # a walk of its 5,300 nodes at each check with a finding).
            rows = rows.union(row for row, line in enumerate(ctx.lines.lines, 1) if not line.isascii())
        nodes = _spanning(ctx.tree, sorted(rows))
        found = ctx.cache[_COMPUTED_GETATTR] = any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and not (isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str))
            for node in nodes
        )
    return found


_COMPUTED_GETATTR = "never_called.computed_getattr"


def _spanning(tree: ast.AST, rows: list[int]):
    """The nodes of `tree` whose rows hold one of `rows` (sorted), and their descendants that
    do: a `getattr` name lies on a row that spells it, within the rows of each node holding
    it. A decorator lies above its definition's first row, so a definition spans from its
    first decorator; a node without a position is gone into, and so is an f-string (whose
    parts had unreliable positions in older Pythons)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            first = getattr(child, "lineno", None)
            if first is None or isinstance(child, ast.JoinedStr):
                todo.append(child)
                continue
            for decorator in getattr(child, "decorator_list", ()):
                first = min(first, decorator.lineno)
            i = bisect_left(rows, first)
            if i < len(rows) and rows[i] <= (child.end_lineno or first):
                todo.append(child)


def enclosing_definitions(tree: ast.Module, row: int) -> list[tuple[ast.AST, ast.AST]]:
    """(parent, definition) of each function and class holding `row`, outermost first."""
    chain: list[tuple[ast.AST, ast.AST]] = []
    parent: ast.AST = tree
    while True:
        inner = next((d for d in _definitions(parent, row) if d.lineno <= row <= (d.end_lineno or d.lineno)), None)
        if inner is None:
            return chain
        chain.append((parent, inner))
        parent = inner


def _definitions(node: ast.AST, row: int):
    """The functions and classes defined in `node`'s own statements (under `if`, `try`, ...
    too, not in nested definitions), looked for only in the statements spanning `row`: a
    statement holds what it nests within its own rows (every reported insertion asked, and
    each walked every statement of the module)."""
    todo = list(ast.iter_child_nodes(node))
    while todo:
        child = todo.pop()
        if isinstance(child, (*_FUNCS, ast.ClassDef)):
            yield child
        elif isinstance(child, ast.stmt) and child.lineno <= row <= (child.end_lineno or child.lineno):
            todo.extend(ast.iter_child_nodes(child))


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def baseless(cls: ast.AST) -> bool:
    if not isinstance(cls, ast.ClassDef) or cls.keywords:
        return False
    return all(isinstance(b, ast.Name) and b.id == "object" for b in cls.bases)


def read_in(scope: ast.AST, func: ast.AST) -> bool:
    """Whether `scope` reads (or binds again) the function's name anywhere but in its own
    definition: a name, an attribute, an import, or a string holding it as a word
    (`getattr(m, "_f")`, `__all__`)."""
    name = func.name
    word = re.compile(rf"\b{re.escape(name)}\b")
    for node in ast.walk(scope):
        if node is func:
            continue
        if isinstance(node, ast.Name) and node.id == name:
            return True
        if isinstance(node, ast.Attribute) and node.attr == name:
            return True
        if isinstance(node, ast.alias) and name in (node.name.rpartition(".")[2], node.asname):
            return True
        if isinstance(node, (*_FUNCS, ast.ClassDef)) and node.name == name:
            return True  # defined twice: which one runs is not this question's
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and word.search(node.value):
            return True
    return False

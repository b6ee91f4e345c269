"""Where a module keys graph nodes on an op (QL102's consumers): a `.target` comparison
(also with a literal list of ops bound to a name), a `partial` predicate, the decorators of
one function (a registration table). Only the top-level statements spanning a row that names
the op (or a list of it) are walked, and what each walk finds is kept on the statement: a
module is asked once per op it may consume, and large modules hold few such rows.
"""

from __future__ import annotations

import ast
import re
from collections import Counter

from qlint.analysis.context import FileContext
from qlint.analysis.names.op_refs import OpRef
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk_kinds
from qlint.lazy_patterns import lazy

SITES_KEY = "ql102.consumer-sites"


def op_sites(module: FileContext, op: str) -> list[frozenset[OpRef]]:
    """The op sets this module keys graph nodes on, among those naming `op`: a `.target`
    comparison, a `partial` predicate, the decorators of one function (a registration table)."""
    return [site for _, site in _keyed(module, op)]


def table_sites(module: FileContext, op: str) -> list[frozenset[OpRef]]:
    return [site for table, site in _keyed(module, op) if table]


def _keyed(module: FileContext, op: str) -> list[tuple[bool, frozenset[OpRef]]]:
    cache = module.cache.setdefault(SITES_KEY, {})
    if op in cache:
        return cache[op]
    # Only the top-level statements spanning a line that names the op hold its sites.
    lines = _Lines(module)
    rows = lines.holding(op)
    # ... and those naming a module-level list of it (`VIEW_OPS = [...]` compared in a function).
    listed = [
        name
        for name, value in kept_on_node(module.tree, _MODULE_BINDINGS, _module_bindings).items()
        if value is not None and any(value.lineno <= r <= (value.end_lineno or value.lineno) for r in rows)
    ]
    if listed:
        rows |= {r for n in listed for r in lines.holding(n) if re.search(rf"\b{n}\b", lines.line(r))}
    # ... and those comparing a target with a name imported from elsewhere: a table another
    # module of the pass keys (easydist's tiling pass asks `n.target in view_op_map`, imported).
    imported = module.scope.imports
    if ".target" in module.text and imported:
        rows |= {
            r
            for r in lines.holding(".target")
            if any(m.group(1) in imported for m in _COMPARED_NAME.finditer(lines.line(r)))
        }
    statements = [s for s in module.tree.body if any(s.lineno <= r <= (s.end_lineno or s.lineno) for r in rows)]
    resolver = Resolver(module.scope, module.project, module.optable)
    sites: list[tuple[bool, frozenset[OpRef]]] = []
    for statement, node, kind in ((s, n or s, k) for s in statements for n, k in _site_nodes(s)):
        exprs: list[ast.expr] = []
        table = False
        local: frozenset[str] = frozenset()
        if kind is _COMPARE:
            compared = (node.left, *node.comparators)
            scope = _function_of(statement, node)
            exprs = [_named_collection(module, scope, e, op) for e in compared if not _is_target(e)]
            local = _local_names(scope)
        elif kind is _PARTIAL:
            if not _is_partial(node.func, resolver):
                continue
            # `partial(torch.ops.aten.add, x)` calls the op; a packet handed on is a key.
            exprs = [*node.args[1:], *(k.value for k in node.keywords)]
        else:
            exprs = [a for d in node.decorator_list if isinstance(d, ast.Call) for a in d.args]
            table = True
        refs = frozenset(r for e in exprs for r in _refs(e, resolver, local))
        if refs:
            sites.append((table, refs))
    cache[op] = sites
    return sites


class _Lines:
    """The module's lines as `str.splitlines` numbers them, and the rows holding a substring.
    A text whose only line breaks are those of the parser (most) is searched through the
    module's line index (`lines_containing`, kept per check): each op's scan of every line
    took most of a reported insertion's consumer search (torch's observer.py)."""

    # Line breaks of `str.splitlines` that neither the parser nor the line index break on.
    _OTHER_BREAKS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")

    def __init__(self, module: FileContext) -> None:
        self.module = module
        text = module.text
        self.split = text.splitlines() if any(b in text for b in self._OTHER_BREAKS) else None

    def holding(self, needle: str) -> set[int]:
        if self.split is None:
            return set(self.module.lines_containing(needle))
        return {i for i, line in enumerate(self.split, 1) if needle in line}

    def line(self, row: int) -> str:
        return self.module.lines.line(row) if self.split is None else self.split[row - 1]


_COMPARE, _PARTIAL, _DECORATED = "compare", "partial", "decorated"
_COMPARED_NAME = lazy(r"\.target\s+(?:not\s+)?in\s+([A-Za-z_]\w*)")
_SITES = "_qlint_packet_consumer_sites"


def _site_nodes(statement: ast.stmt) -> list[tuple[ast.AST | None, str]]:
    """The nodes of a top-level statement that may key graph nodes on ops, in `ast.walk`
    order: `.target` comparisons, calls of a `partial`, decorated definitions. One walk
    per statement, kept on it: a module inserting several packets is asked once per op,
    and the same class or function spans the rows of each. The statement itself (a decorated
    definition) is None there: held on its own node, it would make the node a reference
    cycle, whose subtree outlives its tree until a collection runs, rarely in a run (ao:
    ~4,900 nodes)."""
    return kept_on_node(statement, _SITES, _find_site_nodes)


# The node types `_find_site_nodes` decides on: a walk that skips the rest (attribute chains
# hanging from a name hold none of them) in `ast.walk` order, a third of the time.
_SITE_KINDS = frozenset({ast.Compare, ast.Call, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def _find_site_nodes(statement: ast.stmt) -> list[tuple[ast.AST | None, str]]:
    out: list[tuple[ast.AST, str]] = []
    for node in walk_kinds(statement, _SITE_KINDS):
        if isinstance(node, ast.Compare) and any(_is_target(e) for e in (node.left, *node.comparators)):
            out.append((node, _COMPARE))
        elif isinstance(node, ast.Call) and _last_name(node.func) == "partial":
            out.append((node, _PARTIAL))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append((None if node is statement else node, _DECORATED))
    return out


def _is_partial(func: ast.expr, resolver: Resolver) -> bool:
    return _last_name(func) == "partial" and resolver.qualname(func) == "functools.partial"


def _is_target(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Attribute) and expr.attr == "target"


def _function_of(statement: ast.stmt, node: ast.AST) -> ast.AST:
    """The innermost function of `statement` holding `node` (the statement itself when none
    does), from the definitions `_site_nodes` already found: names are looked up there, not in
    a whole class."""
    inner: ast.AST = statement
    for candidate, kind in _site_nodes(statement):
        if (
            kind is _DECORATED
            and isinstance(candidate, (ast.FunctionDef, ast.AsyncFunctionDef))
            and candidate.lineno <= node.lineno <= (candidate.end_lineno or candidate.lineno)
            and candidate.lineno >= getattr(inner, "lineno", 0)
        ):
            inner = candidate
    return inner


def _named_collection(module: FileContext, scope: ast.AST, expr: ast.expr, op: str) -> ast.expr:
    """The literal list, tuple, set or dict a compared name stands for (`n.target in VIEW_OPS`, with
    `VIEW_OPS = [aten.view, aten.view.default]` bound once in the same function, or at module
    level when the function does not bind it): a pipeline's matcher that lists both forms
    consumes the packet nodes an earlier pass of it inserted (PyTorch/XLA's dynamic-view pass).
    Anything else is returned as it is."""
    if not isinstance(expr, ast.Name) or not _lists_the_op(module, expr.id, op) or expr.id in _parameters(scope):
        return expr  # a parameter stands for what the callers pass, not the module's list
    bound = kept_on_node(scope, _BINDINGS, _find_bindings)
    if expr.id not in bound:
        bound = kept_on_node(module.tree, _MODULE_BINDINGS, _module_bindings)
    return bound.get(expr.id) or expr


def _lists_the_op(module: FileContext, name: str, op: str) -> bool:
    """Whether the module's text assigns `name` a literal list, tuple, set or dict that spells `op`:
    most compared names (`n.target == op`) are no such thing, and their statements need no
    walk (a class of torchao's observer module spans a thousand rows)."""
    memo = module.cache.setdefault(_LITERAL_KEY, {})
    key = (name, op)
    if key not in memo:
        text = module.text
        found = False
        for m in re.finditer(rf"^[ \t]*{re.escape(name)}[ \t]*(?::[^=\n]*)?=[ \t]*[\[({{]", text, re.M):
            if op in text[m.end() : _closing(text, m.end() - 1)]:
                found = True
                break
        memo[key] = found
    return memo[key]


def _closing(text: str, start: int) -> int:
    """Where the bracket opened at `start` closes (brackets in strings are not told apart:
    a rough end is enough to ask whether the literal spells an op)."""
    depth = 0
    for i in range(start, min(len(text), start + 20_000)):
        if text[i] in "[({":
            depth += 1
        elif text[i] in "])}":
            depth -= 1
            if depth == 0:
                return i
    return min(len(text), start + 20_000)


_LITERAL_KEY = "ql102.literal-collections"
_BINDINGS, _MODULE_BINDINGS = "_qlint_packet_consumer_bindings", "_qlint_packet_consumer_module_bindings"
_COLLECTIONS = (ast.List, ast.Tuple, ast.Set, ast.Dict)


def _find_bindings(root: ast.AST) -> dict[str, ast.expr | None]:
    """Every name stored in `root`, with the literal collection it is bound to where that is
    its only binding; None otherwise (bound twice, or to anything else: it stands for nothing
    known). One walk."""
    stores: Counter[str] = Counter()
    literal: dict[str, ast.expr] = {}
    for node in ast.walk(root):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] += 1
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, _COLLECTIONS)
        ):
            literal[node.targets[0].id] = node.value
    return {name: literal.get(name) if count == 1 else None for name, count in stores.items()}


def _module_bindings(tree: ast.Module) -> dict[str, ast.expr | None]:
    """Module-level names, each with the literal collection it is bound to where that is its
    only module-level binding (the targets of top-level statements only: walking the values
    of a module's big tables costs more than all the rest)."""
    stores: Counter[str] = Counter()
    literal: dict[str, ast.expr] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
            targets = [statement.target]
        else:
            continue
        for target in targets:
            for name in (n for n in ast.walk(target) if isinstance(n, ast.Name)):
                stores[name.id] += 1
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and isinstance(statement.value, _COLLECTIONS):
            literal[targets[0].id] = statement.value
    return {name: literal.get(name) if count == 1 else None for name, count in stores.items()}


def _refs(expr: ast.expr, resolver: Resolver, local: frozenset[str] = frozenset()) -> list[OpRef]:
    """The ops an expression keys on: an op, a literal collection's elements, each part of a
    concatenation (`COMM_FUNCS + [aten.view, aten.flatten]`, easydist's exclusion list: a part
    that cannot be read holds nothing known, which never turns a site's other part into the
    wrong form), or the collection a module-level name stands for, in this module or one it
    imports from (`n.target in view_op_map`, a table keyed on `aten.view.default` in another
    module of the pass). `local`: the names the comparing function binds itself, which stand
    for none of those."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.BitOr)):
        return _refs(expr.left, resolver, local) + _refs(expr.right, resolver, local)
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        elements = [k for k in expr.keys if k is not None] if isinstance(expr, ast.Dict) else expr.elts
        return [r for r in map(resolver.op_ref, elements) if r is not None]
    ref = resolver.op_ref(expr)
    if ref is not None or not isinstance(expr, ast.Name) or expr.id in local:
        return [ref] if ref is not None else []
    members = resolver.members(expr)
    if members is None:
        return []
    return [r for m in members if (r := resolver.for_scope(m.scope).op_ref(m.node)) is not None]


def _local_names(scope: ast.AST) -> frozenset[str]:
    """The names a function binds (its parameters and every name it stores): not the module's."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return frozenset()
    return _parameters(scope) | frozenset(kept_on_node(scope, _BINDINGS, _find_bindings))


def _parameters(scope: ast.AST) -> frozenset[str]:
    return frozenset(a.arg for a in parameter_args(scope))


def _last_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""

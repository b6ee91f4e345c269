"""Front ends that rewrite each node's target to the packet of its own name (QL101, QL102).

A compile pipeline may normalise its graphs once, at its front, by name instead of through
`strip_overloads`: it reads the op's name off the node (`str(node.target)` is
"aten.mm.default"), and sets `node.target = getattr(torch.ops.aten, name)`. EVT's
`GTLFrontend` does so before every pass of the project runs, and those passes are keyed on
packets. What such a function licenses is `normalised_graphs`' question; this module only
finds the functions.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.resolver import Resolver
from qlint.lazy_patterns import lazy

# The text of a rename: a lookup of an op namespace (`torch.ops.aten`, an alias `aten`/`ops`) by
# a name that is not a literal, with a target store on its row or a few rows below (directly, or
# through a local). Only modules holding one are parsed: on torch, torchao and ExecuTorch none
# does (`_inductor/ir.py` and three others store targets and look namespaces up by name, far
# apart), and parsing them was most of the cost of asking. A namespace under another alias, or a
# store further from its lookup, is not looked for.
NEEDLES = ("getattr",)
# The sources name the question kept between runs: reading a lazy pattern's `.pattern` compiles it.
_LOOKUP_SOURCE = r"getattr\(\s*(?:[\w.]*\bops\b[\w.]*|aten|prims)\s*,\s*[A-Za-z_(]"
_STORE_SOURCE = r"\.target\s*=(?!=)"
_LOOKUP = lazy(_LOOKUP_SOURCE)
_STORE = lazy(_STORE_SOURCE)
_ROWS_AFTER = 12


class _RenameText:
    """`search(text)` as a compiled pattern's, for the project scan's filter: anchored on the
    lookup (one regex over the text), the store looked for near each one only. `question`
    names the filter for the answers kept between runs (`scanned_facts.module_facts`)."""

    question = f"rename-text:{_LOOKUP_SOURCE}|{_STORE_SOURCE}|{_ROWS_AFTER}"

    def search(self, text: str) -> bool | None:
        if ".target" not in text:  # a substring test is ~50x cheaper than the lookup's regex
            return None
        for found in _LOOKUP.finditer(text):
            start = text.rfind("\n", 0, found.start()) + 1
            end = found.end()
            for _ in range(_ROWS_AFTER + 1):
                end = text.find("\n", end + 1)
                if end < 0:
                    end = len(text)
                    break
            if _STORE.search(text, start, end):
                return True
        return None


LOOKUP = _RenameText()

_TORCH_OPS = "torch.ops."
# What names the op a node calls, read off its target: `str(n.target)`, `n.target.__name__`,
# `n.target.name()`, `n.target._opname`.
_NAME_ATTRS = frozenset({"__name__", "_opname", "name", "_name"})


def renaming_functions(ctx: FileContext) -> frozenset[tuple[str, int, int]]:
    """(namespace, first row, last row) of each function of the module that sets a node's
    target to `getattr(torch.ops.<namespace>, <name>)`, directly or through a local bound only
    to such lookups, where the name is not a literal and the function reads the same node's
    own target as a name. A literal name is an insertion of one packet (QL102's matter), and a
    name not read off the node may be any op: neither says the graph carries packets."""
    if "getattr" not in ctx.words or not LOOKUP.search(ctx.words):
        return frozenset()
    found: set[tuple[str, int, int]] = set()
    for body in bodies(ctx.tree, ctx.scope, ctx.cache):
        func = body.node
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        resolver = None
        for stmt in body.stmts:
            if not isinstance(stmt, ast.Assign):
                continue
            for store in stmt.targets:
                if not (isinstance(store, ast.Attribute) and store.attr == "target"):
                    continue
                resolver = resolver or Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
                namespace = _packet_by_name(stmt.value, body, resolver)
                if namespace and _reads_own_name(func, store.value):
                    found.add((namespace, func.lineno, func.end_lineno or func.lineno))
    return frozenset(found)


def _packet_by_name(value: ast.expr, body: Body, resolver: Resolver) -> str | None:
    if isinstance(value, ast.Name):
        # Every binding of the local must be such a lookup: a parameter, or a name also bound
        # to something else, may hold an overload.
        bound = body.local.get(value.id) or []
        spaces = {_lookup_namespace(v, resolver) if isinstance(v, ast.expr) else None for v in bound}
        return spaces.pop() if len(spaces) == 1 else None
    return _lookup_namespace(value, resolver)


def _lookup_namespace(value: ast.expr, resolver: Resolver) -> str | None:
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "getattr"
        and len(value.args) in (2, 3)
        and not value.keywords
        and not isinstance(value.args[1], ast.Constant)
    ):
        return None
    name = resolver.qualname(value.args[0]) or ""
    namespace = name[len(_TORCH_OPS) :] if name.startswith(_TORCH_OPS) else ""
    # `torch.ops.aten`, not `torch.ops` (a namespace looked up by name) nor `torch.ops.aten.add`
    # (whose attributes are overloads).
    return namespace if namespace and "." not in namespace else None


def _reads_own_name(func: ast.AST, node: ast.expr) -> bool:
    same = ast.dump(node)

    def own_target(expr: ast.AST) -> bool:
        return isinstance(expr, ast.Attribute) and expr.attr == "target" and ast.dump(expr.value) == same

    for sub in ast.walk(func):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "str":
            if sub.args and own_target(sub.args[0]):
                return True
        elif isinstance(sub, ast.Attribute) and sub.attr in _NAME_ATTRS and own_target(sub.value):
            return True
    return False

"""Packets a subgraph rewrite puts into graphs (QL101).

`torch.fx.replace_pattern(gm, pattern, replacement)` (and `replace_pattern_with_filters`)
symbolically traces a callable replacement and splices its graph in for each match: a call of
a packet in the replacement (`torch.ops.aten.scaled_dot_product_attention(q, k, v)`) becomes a
node whose target is that packet. ByteIR's torch-frontend rewrites attention patterns of
Dynamo's graph this way, and its next pass matches the packet it put there.

The pattern tells what graph the rewrite runs on, since the subgraph matcher compares targets
exactly: a pattern written with torch functions or tensor methods (`torch.matmul`,
`F.softmax`) matches only a graph that records those (Dynamo's, `symbolic_trace`'s), where
an ATen op is whatever a rewrite inserted; a pattern written with packets matches a graph of
packets. A pattern that spells an overload matches a graph of overloads, where the packet
would sit beside nodes that carry the overload (QL102's question, not a fact for a packet
matcher): such a rewrite, and one whose pattern or replacement is not a function of the
module (a graph built elsewhere, a lambda, an attribute), is not read.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint.analysis.context import FileContext
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.resolver import OpRef, Resolver

_REWRITES = frozenset(
    {
        "torch.fx.replace_pattern",
        "torch.fx.subgraph_rewriter.replace_pattern",
        "torch.fx.subgraph_rewriter.replace_pattern_with_filters",
    }
)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CACHE_KEY = "pattern-replacements"
_NEEDLE = "replace_pattern"


def rewrites_spelled(text: str) -> bool:
    """Whether a module's text may hold a subgraph rewrite (one the project scan does not keep:
    it spells no insertion)."""
    return _NEEDLE in text


def replaced_packets(ctx: FileContext) -> frozenset[tuple[str, str, str]]:
    """The keys of the packets the module's subgraph rewrites put into graphs that do not carry
    their overloads."""
    if _CACHE_KEY in ctx.cache:
        return ctx.cache[_CACHE_KEY]
    found: set[tuple[str, str, str]] = set()
    if rewrites_spelled(ctx.text):
        owned = {id(b.node): b for b in bodies(ctx.tree, ctx.scope, ctx.cache)}
        rows = ctx.lines_containing(_NEEDLE)
        for body in owned.values():
            resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
            for call in body.nodes(rows, frozenset({ast.Call})):
                if resolver.qualname(call.func) not in _REWRITES:
                    continue
                pattern, replacement = _argument(call, 1, "pattern"), _argument(call, 2, "replacement")
                pattern_body = owned.get(id(_traced_function(ctx, body, pattern)))
                replacement_body = owned.get(id(_traced_function(ctx, body, replacement, traced=False)))
                if pattern_body is None or replacement_body is None:
                    continue
                if any(not r.is_packet for r in op_spellings(ctx, pattern_body, calls_only=False)):
                    continue  # the graph carries overloads
                found |= {r.key for r in op_spellings(ctx, replacement_body) if r.is_packet}
    ctx.cache[_CACHE_KEY] = frozenset(found)
    return ctx.cache[_CACHE_KEY]


def _argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    if len(call.args) > index:
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _traced_function(ctx: FileContext, body, expr: ast.expr | None, traced: bool = True) -> ast.AST | None:
    """The module function `expr` names in the rewriting `body` (not a name of its own: a
    parameter may hold any callable); with `traced`, also the one a tracer call is handed
    (`symbolic_trace(pattern)`, a project's own tracing wrapper): the pattern's graph is its
    trace either way."""
    if traced and isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
        expr = expr.args[0]
    if not isinstance(expr, ast.Name) or (body.node is not ctx.tree and expr.id in body.local):
        return None
    func = ctx.scope.functions.get(expr.id)
    return func if isinstance(func, _FUNCS) else None


def op_spellings(ctx: FileContext, body: Body, calls_only: bool = True) -> Iterator[OpRef]:
    """The ops a function calls (with `calls_only` False, every op it spells: an overload
    written anywhere in a pattern is what its graph carries)."""
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
    for node in ast.walk(body.node):
        expr = node.func if isinstance(node, ast.Call) else node if not calls_only else None
        if isinstance(expr, (ast.Attribute, ast.Name)):
            ref = resolver.op_ref(expr)
            if ref is not None:
                yield ref

"""What a module inserts into graphs: every op handed to `graph.call_function` /
`create_node`, directly, through a `partial`, or through the project's own wrappers. Shared by
QL101 (packets the module inserts and then matches) and QL102 (packets inserted), which need
it without importing each other."""

from __future__ import annotations

import ast

from qlint.analysis.graphs.call_parts import bound_call, callee_name, spans_any
from qlint.analysis.graphs.called_names import called_in
from qlint.analysis.graphs.fx_targets import target_store_rows
from qlint.analysis.graphs.insertions import NEEDLES, inserted_exprs, is_nodespec, wrapper_search
from qlint.analysis.graphs.instance_attrs import with_instance_attrs
from qlint.analysis.graphs.wrapper_index import index_for
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.op_refs import OpRef
from qlint.analysis.names.resolver import Resolver
from qlint.lazy_patterns import lazy
from qlint.rules.base import FileContext

_CACHE_KEY = "ql102.insertions"
_ITEMS_KEY = "ql102.inserted-items"  # (id of `ops[0]`, op key) -> the item it reads


def insertions(ctx: FileContext) -> list[tuple[OpRef, ast.expr]]:
    """Every packet the module inserts into a graph (shared with QL101 through ctx.cache)."""
    return [(ref, expr) for ref, expr in inserted_ops(ctx) if ref.is_packet]


def inserted_overloads(ctx: FileContext) -> set[tuple[str, str, str]]:
    """Ops the module inserts as overloads (`graph.call_function(aten.relu.default, ...)`)."""
    return {ref.key for ref, _ in inserted_ops(ctx) if not ref.is_packet}


def inserted_ops(ctx: FileContext) -> list[tuple[OpRef, ast.expr]]:
    """Every op (packet or overload) the module inserts into a graph."""
    if _CACHE_KEY in ctx.cache:
        return ctx.cache[_CACHE_KEY]
    found: list[tuple[OpRef, ast.expr]] = []
    # A project's own `insert(graph, op, args)` that hands `op` to `graph.call_function`
    # inserts what its callers pass.
    wrappers = wrapper_search(ctx.project, ctx.optable, ctx.scope.path, deep=True)
    names = wrappers.find_helpers(
        ctx.scope,
        _rows_for(ctx),
        Resolver(ctx.scope, ctx.project, ctx.optable),
        called_in(ctx),
        index_for(ctx.path, ctx.project),
        ctx.words,
    )
    lines = _inserting_rows(ctx) | target_store_rows(ctx)
    if names:
        lines |= ctx.lines_containing(*sorted(names))
    # The callee can sit on one line and the packet on the next: widen each row by one.
    lines = lines | {row + 1 for row in lines}
    if lines:
        rows = sorted(lines)
        for body in bodies(ctx.tree, ctx.scope, ctx.cache):
            if body.node is not ctx.tree and not spans_any(body.node, rows):
                continue  # its statements lie within its rows: none of them is walked
            class_scope = with_instance_attrs(body.class_scope, ctx.cache, ctx.lines)
            resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, class_scope)
            for node in body.nodes(lines):
                if is_nodespec(node, resolver):
                    continue
                exprs = list(inserted_exprs(node))
                if not exprs and isinstance(node, ast.Call):
                    # `partial(insert_op, op=aten.relu)` inserts what it binds, at each call.
                    call = bound_call(node, resolver) or node
                    exprs = list(inserted_exprs(call)) if call is not node else []
                    if not exprs and callee_name(call) in names:
                        exprs = wrappers.forwarded_args(call, resolver)
                for expr in exprs:
                    ref = resolver.op_ref(expr)
                    if ref is None and isinstance(expr, ast.Subscript):
                        # `graph.call_function(ops[0], ...)`: each op the item may be, reported
                        # where it is inserted (`item_targets`).
                        found.extend(_item_insertions(ctx, body, expr))
                        continue
                    if ref is None and isinstance(expr, ast.Name):
                        located = resolver.value_of(expr)
                        if located is not None and located.scope is ctx.scope and located.node is not expr:
                            ref = resolver.op_ref(located.node)
                            expr = located.node if ref is not None else expr
                    if ref is not None:
                        found.append((ref, expr))
    unique = {(ref, expr.lineno, expr.col_offset): (ref, expr) for ref, expr in found}
    ctx.cache[_CACHE_KEY] = list(unique.values())
    return ctx.cache[_CACHE_KEY]


def _item_insertions(ctx: FileContext, body, expr: ast.Subscript) -> list[tuple[OpRef, ast.expr]]:
    from qlint.analysis.graphs.item_targets import item_ops

    found = []
    items = ctx.cache.setdefault(_ITEMS_KEY, {})
    for item, owner in item_ops(ctx, body, expr):
        class_scope = with_instance_attrs(owner.class_scope, ctx.cache, ctx.lines)
        ref = Resolver(ctx.scope, ctx.project, ctx.optable, owner.local, class_scope).op_ref(item)
        if ref is not None:
            found.append((ref, expr))
            items[(id(expr), ref.key)] = item
    return found


def inserted_item(ctx: FileContext, expr: ast.expr, ref: OpRef) -> ast.expr | None:
    """Where the op `ref` an insertion of `expr` (`ops[0]`) reads is written: the tuple's item,
    which a fix edits (the subscript stands for every op the tuple may hold)."""
    return ctx.cache.get(_ITEMS_KEY, {}).get((id(expr), ref.key))


# Where `<graph>.call_function` / `.create_node` can be written: the attribute's row (the dot
# may end the row before). Rows that only hold the strings (`n.op == "call_function"`, on
# every row of a matcher) insert nothing.
_INSERTING = lazy(r"(?:\.|^)\s*(?:call_function|create_node)\b")


def _inserting_rows(ctx: FileContext) -> frozenset[int]:
    line = ctx.word_lines.line  # the rows `lines_containing` found, as it read them
    return frozenset(r for r in ctx.lines_containing(*NEEDLES) if _INSERTING.search(line(r)))


def _rows_for(ctx: FileContext):
    """`lines_containing` for the wrapper search: a wrapper's own insertion is a call of the
    attribute too, so the rows of the needles are those where the attribute is written."""

    def rows(*needles: str) -> frozenset[int]:
        others = tuple(n for n in needles if n not in NEEDLES)
        found = _inserting_rows(ctx)
        return found | ctx.lines_containing(*others) if others else found

    return rows


def inserted_packets(ctx: FileContext) -> set[tuple[str, str]]:
    return {ref.key for ref, _ in insertions(ctx)}

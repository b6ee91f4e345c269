"""QL102's verdict on an insertion behind a node match that never holds on the graph it sees.

`if n.target == P: graph.create_node("call_function", P, ...)` where P is a packet QL101
reports as never matching (torchao's `_duplicate_dequantize_node`, run by `convert_pt2e` on
graphs of `dequantize_per_tensor.default`): the branch never runs, so the insertion makes no
node. QL101's finding at the guard is the report the user needs; fixing it to the overload makes
the branch run, and then the packet insertion is reported (the guard no longer fails). Only a
guard on the op inserted counts: a pass that rewrites one op into another (`prims.div` into
`aten.div`) needs two edits, and both reports stay so the fix is not found one step at a time.

An out variant (`aten.empty_permuted.out`) in a graph QL101 takes for an exported one (its
`sees_overloads` evidence, in a module of ATen graphs) never holds either: export and AOT
graphs are functional. In-place overloads are not excused: torch.export keeps them
(`aten.mul_.Tensor`, `aten.relu_.default` in its graphs).
"""

from __future__ import annotations

import ast

from qlint.analysis.graphs.graph_context import packet_graph_context
from qlint.analysis.graphs.instance_attrs import with_instance_attrs
from qlint.analysis.graphs.target_guards import Guard, target_guards
from qlint.analysis.names.functions import Body
from qlint.analysis.names.op_refs import OpRef
from qlint.analysis.names.resolver import Resolver
from qlint.rules.base import FileContext


def behind_failing_guard(ctx: FileContext, body: Body | None, node: ast.expr, inserted: OpRef) -> bool:
    """Whether the insertion of `inserted` at `node` runs only under a node-target test that
    never holds."""
    guards = target_guards(body.node if body is not None else ctx.tree, node.lineno)
    if not guards:
        return False
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable)
    if body is not None:
        class_scope = with_instance_attrs(body.class_scope, ctx.cache, ctx.lines)
        resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, class_scope)
    return any(_never_holds(ctx, body, guard, resolver, inserted) for guard in guards)


def _never_holds(ctx: FileContext, body: Body | None, guard: Guard, resolver: Resolver, inserted: OpRef) -> bool:
    for expr in guard:
        ref = resolver.op_ref(expr)
        if ref is None:
            return False  # something the analysis cannot name may match
        if ref.is_packet:
            if ref.key != inserted.key or ctx.range_of(expr) not in _never_matching(ctx):
                return False
        elif not (_out_variant(ref) and _functional_graph(ctx, body, expr.lineno)):
            return False
    return True


def _out_variant(ref: OpRef) -> bool:
    return ref.overload == "out" or (ref.overload or "").endswith("_out")


def _functional_graph(ctx: FileContext, body: Body | None, row: int) -> bool:
    """QL101's judgement of the graph's origin: a module of ATen graphs (no legacy FX, no
    compiler internals) whose code exports the graph the match sees."""
    if body is None or packet_graph_context(ctx) is not None:
        return False
    from qlint.analysis.graphs.reexport import sees_overloads

    return sees_overloads(ctx, body, row)


def _never_matching(ctx: FileContext) -> frozenset:
    """Where QL101 reports a packet compared with node targets: its verdict that the match
    never holds on the graphs this module sees (with the rule's default options). The run's
    own QL101 check of the module leaves it when it ran with those options (QL101 runs
    before QL102); otherwise the check is run here, and leaves it the same way."""
    from qlint.rules.ql101_packet_matcher import REPORTED_WITH_DEFAULTS, PacketMatcher

    if REPORTED_WITH_DEFAULTS not in ctx.cache:
        for _ in PacketMatcher().check(ctx):
            pass
    return ctx.cache[REPORTED_WITH_DEFAULTS]

"""QL102 packet-insertion: a pass inserts an `OpOverloadPacket` as a node target.

This is the producer side of QL101: torchao 0.18's affine observers inserted
`torch.ops.torchao.*_affine` packets, and every exact matcher downstream (which keys on
`.default`, as re-exported graphs carry) missed those nodes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint.analysis.graphs.graph_context import COMPILER_INTERNAL, COMPILER_PACKAGES, packet_graph_context
from qlint.analysis.graphs.insertions import may_insert_packet
from qlint.analysis.names.functions import innermost_body
from qlint.analysis.names.op_refs import OpRef
from qlint.diagnostic import Diagnostic
from qlint.evidence.ops import OpEvidence
from qlint.rules.base import FileContext, FixAvailability, Rule
from qlint.rules.module_insertions import inserted_item, insertions
from qlint.rules.overload_fixes import (
    FixSite,
    op_evidence,
    op_info,
    overload_facts,
    overload_fix,
    packet_producers,
    shown,
)


class PacketInsertion(Rule):
    code = "QL102"
    name = "packet-insertion"
    summary = "`OpOverloadPacket` inserted into an FX graph as a node target"
    runtime_check = "qlint.runtime.checks.ql101"
    evidence_type = OpEvidence
    # Necessary substrings only; `triggered_by` decides (the attribute may be split across rows).
    triggers = ("call_function", "create_node", "target", "replace_pattern")
    identifier_triggers = True  # `graph.call_function(...)` in fullwidth calls it
    # A file that inserts only through the project's own wrapper, imported from another module
    # (`insert_op(gm.graph, aten.relu, args)`), holds none of them.
    import_trigger = "qlint.analysis.graphs.wrapper_index:inserts_through_imports"
    # The insertion must be written here and a packet spelled here (`packet_text`): a packet
    # or a wrapper imported is the import trigger's question.
    text_trigger = "qlint.analysis.graphs.insertions:may_insert_packet"
    # Inductor's own passes insert packets into graphs that accept them.
    skipped_modules = COMPILER_PACKAGES
    fix_availability = FixAvailability.SOMETIMES

    def triggered_by(self, text: str) -> bool:
        return may_insert_packet(text)

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        yield from _rewrite_insertions(self, ctx)
        found = insertions(ctx)
        if not found or packet_graph_context(ctx):
            return
        refs = [r for r, _ in found]
        for ref, node in found:
            info = op_info(ctx.optable, ref)
            own = info is None and (_own_op_checked_here(ctx, ref, found) or _own_op_keyed(ctx, ref, refs))
            if own and not _verified_program(ctx, node):
                continue  # the project's own op, and its own code keyed on the packet takes the node
            if _left_alone(ctx, ref, node, refs):
                continue
            consumer = _consumer(ctx, ref, node, info, refs)
            if consumer is None:
                continue  # the project's own code takes the graph next, and none of it tells the forms apart
            spelled = ctx.source_of(node)
            who, why = consumer
            message = f"{shown(spelled, ref)} is an OpOverloadPacket inserted as a graph node target: {who}"
            help_ = f"{why[:1].upper()}{why[1:]}; {overload_facts(info)}"
            # `ops[0]`: the fix edits the tuple's item the op is written as.
            item = inserted_item(ctx, node, ref) if isinstance(node, ast.Subscript) else None
            fixed = node if item is None else item
            fix = overload_fix(
                info,
                ctx.source_of(fixed),
                ctx.range_of(fixed),
                FixSite("other"),
                producers=packet_producers(ctx.optable, info),
            )
            evidence = op_evidence("insertion", [ref], info)
            yield ctx.diagnostic(self, node, message, fix, evidence=evidence, help=help_)


def _rewrite_insertions(rule: PacketInsertion, ctx: FileContext) -> Iterator[Diagnostic]:
    """Packets a subgraph rewrite's replacement calls, spliced into a graph of overloads (its
    pattern spells overloads, which the matcher compares exactly: `pattern_replacements`).
    The pattern says what the graph is, whatever the module imports, except in a compiler's
    graphs, which accept packets."""
    from qlint.analysis.graphs.pattern_replacements import packets_among_overloads, rewrites_spelled

    if not rewrites_spelled(ctx.words):
        return
    found = packets_among_overloads(ctx)
    if not found or packet_graph_context(ctx) == COMPILER_INTERNAL:
        return
    # The verdicts' modules, only once there is a packet to judge.
    from qlint.analysis.graphs.never_called import never_runs
    from qlint.analysis.graphs.stripped_later import rewrite_stripped_next
    from qlint.rules.packet_consumers import consumed_by_own_code, own_op_keyed_on_packet

    refs = [r for r, _, _ in found]
    for ref, node, call in found:
        info = op_info(ctx.optable, ref)
        if info is None and own_op_keyed_on_packet(ctx, ref, refs, [node.lineno]):
            continue  # the project's own op, keyed on as a packet wherever the project names it
        if never_runs(ctx, call.lineno) or consumed_by_own_code(ctx, ref, refs, [node.lineno]):
            continue  # no graph gets the node, or the project's own code keyed on the packet takes it
        if rewrite_stripped_next(ctx, call, ref):
            continue  # the function strips the graph to packets right after the rewrite
        spelled = ctx.source_of(node)
        message = (
            f"{shown(spelled, ref)} is an OpOverloadPacket a subgraph rewrite's replacement puts into "
            f"a graph of overloads (its pattern spells overloads)"
        )
        help_ = f"Matchers keyed on overloads will miss this node: {overload_facts(info)}"
        fix = overload_fix(
            info, spelled, ctx.range_of(node), FixSite("other"), producers=packet_producers(ctx.optable, info)
        )
        yield ctx.diagnostic(rule, node, message, fix, evidence=op_evidence("insertion", [ref], info), help=help_)


def _own_op_keyed(ctx: FileContext, ref: OpRef, refs: list[OpRef]) -> bool:
    # The verdicts' modules are imported when a check first asks: an insertion of a test's
    # own op (ao's test_quantize_pt2e.py) is settled before, and most files insert nothing.
    from qlint.rules.packet_consumers import own_op_keyed_on_packet

    return own_op_keyed_on_packet(ctx, ref, refs, _rows_of(ctx, ref))


def _left_alone(ctx: FileContext, ref: OpRef, node: ast.expr, refs: list[OpRef]) -> bool:
    """The graph the packet goes into carries or accepts packets, or never gets the node."""
    from qlint.analysis.graphs.compiled_next import compiled_after
    from qlint.analysis.graphs.dynamo_graph_attributes import inserted_after_dynamo_attribute
    from qlint.analysis.graphs.dynamo_meta_guards import inserted_under_dynamo_meta
    from qlint.analysis.graphs.guarded_after_strip import row_runs_after_strips
    from qlint.analysis.graphs.hand_built_graphs import inserted_into_kept_graph
    from qlint.analysis.graphs.never_called import never_runs
    from qlint.analysis.graphs.passes_after_strip import called_after_strips
    from qlint.analysis.graphs.printed_name_keys import keyed_on_printed_packet
    from qlint.analysis.graphs.returned_graph_uses import inserted_on_stripped_return
    from qlint.analysis.graphs.self_built_graphs import inserted_into_own_graph
    from qlint.analysis.graphs.self_traced_graphs import self_traced_insertion
    from qlint.analysis.graphs.stripped_here import inserted_after_strip
    from qlint.analysis.graphs.stripped_later import stripped_after
    from qlint.rules.guarded_insertions import behind_failing_guard
    from qlint.rules.packet_consumers import consumed_by_own_code

    if (consumed_by_own_code(ctx, ref, refs, _rows_of(ctx, ref)) or keyed_on_printed_packet(ctx, ref)) and not (
        _verified_program(ctx, node)
    ):
        return True  # the project's own packet-keyed code is the node's consumer
    if _into_normalised_graph(ctx, node) or _into_renamed_graph(ctx, ref, node):
        return True  # the graph carries packets everywhere by then: the packet fits in
    # Dynamo's passes read the project's other modules (~4 modules): past the excuses above only.
    from qlint.analysis.graphs.dynamo_graph_passes import inserted_before_aot, sees_dynamo_graph

    inner = _innermost_function(ctx, node.lineno)
    if sees_dynamo_graph(ctx, inner) or inserted_before_aot(ctx, inner, node):
        return True  # Dynamo's graph, which AOT autograd re-traces to overloads next
    if inserted_into_kept_graph(ctx, inner, node, ref.op):
        return True  # a graph built here, traced by nothing: what it holds is what was put
    if inserted_into_own_graph(ctx, inner, node, ref.op):
        return True  # a graph an object builds on itself by hand: it holds what was put
    if stripped_after(ctx, inner, ref, node):
        return True  # every caller strips the graph to packets next
    if called_after_strips(ctx, inner):
        return True  # run only on graphs its callers have already stripped to packets
    if row_runs_after_strips(ctx, inner, node.lineno):
        return True  # reached only in the calls made on graphs their callers have stripped
    if inserted_after_strip(ctx, inner, node):
        return True  # the function itself stripped this graph to packets just before
    if inserted_on_stripped_return(ctx, inner, node):
        return True  # the graph a function of the project returned stripped to packets
    if compiled_after(ctx, inner, ref, node):
        return True  # every caller has Dynamo trace the graph next, as a user's code
    if behind_failing_guard(ctx, inner, node, ref):
        return True  # inside a node match that never holds (QL101 reports the match)
    if self_traced_insertion(ctx, node, inner):
        return True  # the project's own trace, handed through its own passes, run by itself
    if inserted_under_dynamo_meta(inner, node):
        return True  # only into Dynamo's graph (its `grapharg` meta): traced to overloads first
    if "_param_name_to_source" in ctx.words and inserted_after_dynamo_attribute(inner, node):
        return True  # only into Dynamo's graph (read its `_param_name_to_source` first): as above
    return never_runs(ctx, node.lineno)  # a private function nothing calls: no graph gets the node


def _verified_program(ctx: FileContext, node: ast.expr) -> bool:
    """The pass also edits an exported program, whose verifier rejects the packet whatever the
    project's own code keys on (`packet_distinguishers` names it). A module that does not spell
    `ExportPass` holds no such pass, and the verdict's module is not imported for it."""
    if "ExportPass" not in ctx.words:
        return False
    from qlint.rules.packet_distinguishers import exported_program_pass

    return exported_program_pass(ctx, node) is not None


def _consumer(ctx: FileContext, ref: OpRef, node: ast.expr, info, refs: list[OpRef]) -> tuple[str, str] | None:
    """Which consumer downstream tells the packet node from its overload (None: nothing the
    project shows does, and the packet runs as its overload would)."""
    # Imported when an insertion survives every other verdict: most checks never get here.
    from qlint.rules.packet_distinguishers import distinguishing_consumer

    return distinguishing_consumer(ctx, ref, node, info, refs, _rows_of(ctx, ref))


def _rows_of(ctx: FileContext, ref: OpRef) -> list[int]:
    """The lines this module inserts `ref` on (what `packet_consumers` counts as inserting)."""
    return [e.lineno for r, e in insertions(ctx) if r.key == ref.key]


def _own_op_checked_here(ctx: FileContext, ref: OpRef, found: list[tuple[OpRef, ast.expr]]) -> bool:
    """An op the module defines itself (`custom_op("ns::name")`), inserted as a packet and
    consumed by the module's own packet-keyed checks (a test's op): nothing else inserts or
    matches it, so the graph carries what its only consumers expect."""
    name = f"{ref.namespace}::{ref.op}"
    if f'"{name}"' not in ctx.text and f"'{name}'" not in ctx.text:
        return False
    from qlint.rules.packet_consumers import packet_spellings

    inserted = sum(1 for r, _ in found if r.key == ref.key)
    return packet_spellings(ref, ctx.words) > inserted


def _into_renamed_graph(ctx: FileContext, ref: OpRef, node: ast.expr) -> bool:
    """The project's front end rewrites every node's target to the packet of its own name
    (`normalised_graphs.renamed_by_front_end`): the packet is the form its graphs carry."""
    if ref.dialect != "aten":
        return False
    from qlint.rules.normalised_graphs import renamed_by_front_end

    return renamed_by_front_end(ctx, _innermost_function(ctx, node.lineno), ref.namespace)


def _innermost_function(ctx: FileContext, row: int):
    """The body of the innermost function holding `row` (None at module level): what runs
    the insertion, and what a decorator or a front end's own body is asked about."""
    return innermost_body(ctx.tree, ctx.scope, ctx.cache, row)


def _into_normalised_graph(ctx: FileContext, node: ast.expr) -> bool:
    """The insertion is made in a function decorated by a decorator of the project whose
    wrapper normalises the graph to packets before calling it (or called only from such a
    function of a library's decorator, on its graph): every node carries a packet,
    and what runs the graph next accepts them (QL101 leaves the matchers of such functions
    alone for the same reason). Only the decorator's own module is read: scanning the
    project's normalisers for each reported insertion cost ~0.4 s a check in torch."""
    inner = _innermost_function(ctx, node.lineno)
    from qlint.rules.normalised_graphs import called_by_library_normalised, decorated_by_normaliser

    return inner is not None and (decorated_by_normaliser(ctx, inner) or called_by_library_normalised(ctx, inner))

"""Where the packets a matcher compares with come from, beyond its own module (QL101).

A packet matcher is right when the graphs it sees really carry packets: the project inserts
that packet itself in another module, into graphs that carry packets (legacy FX graph mode,
a compiler's graphs), or puts it there with a subgraph rewrite whose replacement calls it
(`pattern_replacements`, in the matcher's own module too), or inserts it in a module linked to
the matcher's, whose packet-keyed consumer the matcher is (`consumes_linked_insertion`). Graphs
normalised to packets before the matcher runs are `normalised_graphs`' question.
"""

from __future__ import annotations

import ast
import functools

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import kept_module_facts
from qlint.analysis.graphs.graph_context import packet_graph_context
from qlint.analysis.graphs.insertions import wrapper_search
from qlint.analysis.graphs.own_insertions import spelled_packet
from qlint.analysis.graphs.pattern_replacements import (
    replaced_packets,
    replaced_through_own_classes,
    rewrites_spelled,
)
from qlint.analysis.graphs.scanned_facts import module_facts, parses, unkept_module_facts
from qlint.analysis.names.op_refs import OpRef
from qlint.rules.module_insertions import inserted_packets, insertions


def inserted_elsewhere(ctx: FileContext, key: tuple[str, str, str]) -> bool:
    """Whether another module of the project inserts the packet `key` into graphs that
    carry packets (legacy FX, compiler graphs: QL102 leaves those insertions alone), or a
    subgraph rewrite of the project (this module's too, or another's through a class of this
    one) puts it into graphs of no overloads. An
    insertion QL102 reports does not count: once fixed, the matcher would be wrong, and a
    second `qlint fix` would change what the first left."""
    if key in replaced_packets(ctx):
        return True
    op = key[2]
    spelled = spelled_packet(op)
    if any(key in found for found in module_facts(ctx, (op,), _packets_into_packet_graphs, spelled)):
        return True
    # A module that inserts it only through the project's own wrapper (`insert_op(gm.graph,
    # op, args)` imported from another module) spells no insertion: the scan does not keep
    # it, and is asked for it only now, with QL102's import trigger as the filter.
    wrappers = wrapper_search(ctx.project, ctx.optable, ctx.path)

    def imports_a_wrapper(text: str, path: str) -> bool:
        # A subgraph rewrite is no insertion the scan keeps either.
        return rewrites_spelled(text) or wrappers.imports_helper(ctx.project, path, text)

    found = unkept_module_facts(ctx, (op,), _packets_into_packet_graphs, spelled, imports_a_wrapper)
    return any(key in packets for packets in found) or replaced_through_own_classes(ctx, key)


def _packets_into_packet_graphs(ctx: FileContext) -> frozenset[tuple[str, str, str]]:
    """The packets a module inserts into graphs that carry packets (none when its graphs carry
    overloads), and those its subgraph rewrites put in: what the project scan keeps of the
    module instead of its tree."""
    packets = inserted_packets(ctx)
    inserted = frozenset(packets) if packets and packet_graph_context(ctx) is not None else frozenset()
    return inserted | replaced_packets(ctx)


def _op_keys(data) -> frozenset[tuple[str, str, str]]:
    """`_packets_into_packet_graphs` as `kept_module_facts` wrote it (sorted op keys)."""
    if type(data) is not tuple or not all(
        type(k) is tuple and len(k) == 3 and all(type(p) is str for p in k) for k in data
    ):
        raise TypeError("not op keys")
    return frozenset(data)


# Kept between runs with what it read (`kept_module_facts`): a check of one edited file read
# and parsed every other module spelling the packet again for it.
kept_module_facts.keep_on_disk(
    _packets_into_packet_graphs, "packets-into-packet-graphs-2", kept_module_facts.sorted_tuple, _op_keys
)


def consumes_linked_insertion(ctx: FileContext, key: tuple[str, str, str]) -> bool:
    """Whether a module linked to this one (one imports the other) inserts the packet `key`,
    and QL102 leaves that insertion alone because the project's own code keyed on the packet
    consumes those nodes (`packet_consumers.consumed_by_own_code`), this module among it:
    every site here that keys graph nodes on the op keys on its packet. easydist's ZeRO pass
    inserts `aten.flatten` nodes before its scatters, and the tiling pass it imports keeps
    exactly those out of its computation nodes by the packet; no code of the project keys on a
    flatten overload. Once QL102 reports the insertion (an overload-keyed site anywhere in
    the pair, a re-export between them), the matcher is reported again: fixing the insertion
    would leave it matching nothing."""
    from qlint.rules.helper_links import linked_through_importers, may_link_through_importers
    from qlint.rules.packet_consumers import consumed_by_own_code, linked_modules, may_link
    from qlint.rules.packet_sites import op_sites

    ref = OpRef(key[1], key[2], None, key[0])
    spelled = spelled_packet(ref.op)
    # No other module spelling the packet, no linked insertion: known from the scan's kept
    # answers, before this module's sites are read (a walk of every statement naming the op,
    # ~15 ms per packet on the language server's 2,000-line bench module).
    if not module_facts(ctx, (ref.op,), parses, spelled):
        return False
    sites = [s for s in op_sites(ctx, ref.op) if any(r.key == key for r in s)]
    if not sites or any(not any(r.key == key and r.is_packet for r in s) for s in sites):
        return False  # the matcher is no site QL102 reads, or this module also keys on an overload

    def consumes_its_insertion(module: FileContext) -> bool:
        if not linked_modules(module, ctx) and not linked_through_importers(module, ctx, ctx):
            return False  # asked first: QL102's verdict reads the project
        found = insertions(module)
        rows = [e.lineno for r, e in found if r.key == key]
        return bool(rows) and consumed_by_own_code(module, ref, [r for r, _ in found], rows)

    # A module no import can link to this one, directly or through the passes importing it
    # (`helper_links`), is not parsed for it (`may_link`).
    def linkable(text: str, path: str) -> bool:
        return may_link(text, path, ctx) or may_link_through_importers(text, path, ctx)

    # Only the modules the project scan keeps (they insert) are asked; the verdict depends on
    # other modules, so it is not kept with the inserting module's content.

    return any(module_facts(ctx, (ref.op,), consumes_its_insertion, spelled, keep=False, admits=linkable))


def keyed_on_own_traced_insertion(ctx: FileContext, key: tuple[str, str, str], body) -> bool:
    """Whether the matcher's function is a pass of the project's own traced graphs
    (`self_traced_graphs`: made by its own `make_fx`/`symbolic_trace`, handed through its own
    passes, never exported, lowered or serialised), and this module or one linked to it (one
    imports the other) inserts the packet `key` only into graphs of that kind. The matcher is
    keyed on the nodes the project puts there itself: easydist's tiling pass keeps the
    `aten.view` packets its ZeRO pass inserts out of its computation nodes by the packet."""
    from qlint.analysis.graphs.self_traced_graphs import node_helper_callers, self_traced_insertion, self_traced_pass
    from qlint.rules.packet_consumers import linked_modules, may_link

    if body is None or not isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    spelled = spelled_packet(key[2])
    inserting: list[tuple[FileContext, list[ast.expr]]] = []

    def inserts_it(module: FileContext, near: FileContext) -> bool:
        if module.path != near.path and linked_modules(module, near) and all(m is not module for m, _ in inserting):
            exprs = [e for r, e in insertions(module) if r.key == key]
            if exprs:
                inserting.append((module, exprs))
        return False

    def linked_insertions(near: FileContext) -> None:
        # A module no import can link to `near` (`may_link`) is not parsed for it.
        asked = functools.partial(inserts_it, near=near)
        module_facts(near, (key[2],), asked, spelled, keep=False, admits=functools.partial(may_link, other=near))

    # The linked modules inserting the packet first (kept answers of the project scan): asking
    # where the matcher's graph comes from reads every module that names its function.
    linked_insertions(ctx)
    # The matcher's own module, as well: pytorch-shir's rewriter object matches the `aten.view`
    # packets its own methods inserted earlier in the same walk of the graph it holds.
    own = [e for r, e in insertions(ctx) if r.key == key]
    if own:
        inserting.append((ctx, own))
    if not inserting:
        # A helper handed the nodes of its callers' graphs: what the modules linked to those
        # callers insert (pytorch-shir's tiny-YOLO selector hands `isel_utils` the nodes the
        # rewriter it imports put there). Asked of a self-traced pass only (a kept answer).
        if not self_traced_pass(ctx, body.node):
            return False
        for caller in node_helper_callers(ctx, body.node):
            linked_insertions(caller)
    if not inserting or not self_traced_pass(ctx, body.node):
        return False
    return any(all(self_traced_insertion(module, e) for e in exprs) for module, exprs in inserting)

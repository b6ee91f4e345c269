"""Where the packets a matcher compares with come from, beyond its own module (QL101).

A packet matcher is right when the graphs it sees really carry packets: the project inserts
that packet itself in another module, into graphs that carry packets (legacy FX graph mode,
a compiler's graphs), or puts it there with a subgraph rewrite whose replacement calls it
(`pattern_replacements`, in the matcher's own module too). Graphs normalised to packets before
the matcher runs are `normalised_graphs`' question.
"""

from __future__ import annotations

import re

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.graph_context import packet_graph_context
from qlint.analysis.graphs.insertions import wrapper_search
from qlint.analysis.graphs.pattern_replacements import replaced_packets, rewrites_spelled
from qlint.analysis.graphs.project_scan import module_facts, unkept_module_facts
from qlint.rules.ql102_packet_insertion import inserted_packets


def inserted_elsewhere(ctx: FileContext, key: tuple[str, str, str]) -> bool:
    """Whether another module of the project inserts the packet `key` into graphs that
    carry packets (legacy FX, compiler graphs: QL102 leaves those insertions alone), or a
    subgraph rewrite of the project (this module's too) puts it into graphs of no overloads. An
    insertion QL102 reports does not count: once fixed, the matcher would be wrong, and a
    second `qlint fix` would change what the first left."""
    if key in replaced_packets(ctx):
        return True
    op = key[2]
    # The packet is spelled somewhere in a module that inserts it: `.op` not followed by
    # an overload (modules that only spell `.op.default` are not parsed).
    spelled = re.compile(rf"\.{re.escape(op)}\b(?!\s*\.\s*\w)")
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
    return any(key in packets for packets in found)


def _packets_into_packet_graphs(ctx: FileContext) -> frozenset[tuple[str, str, str]]:
    """The packets a module inserts into graphs that carry packets (none when its graphs carry
    overloads), and those its subgraph rewrites put in: what the project scan keeps of the
    module instead of its tree."""
    packets = inserted_packets(ctx)
    inserted = frozenset(packets) if packets and packet_graph_context(ctx) is not None else frozenset()
    return inserted | replaced_packets(ctx)

"""Where the packets a matcher compares with come from, beyond its own module (QL101).

A packet matcher is right when the graphs it sees really carry packets: the project inserts
that packet itself in another module, into graphs that carry packets (legacy FX graph mode,
a compiler's graphs), or the graphs are normalised to packets before the matcher runs (a backend that calls
`strip_overloads` and then the pass, or a decorator whose wrapper does).
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.graph_context import packet_graph_context
from qlint.analysis.graphs.insertions import wrapper_search
from qlint.analysis.graphs.project_scan import (
    module_facts,
    normalised_callees,
    normalising_decorator,
    unkept_module_facts,
)
from qlint.analysis.names.functions import Body
from qlint.analysis.names.resolver import Resolver
from qlint.rules.ql102_packet_insertion import inserted_packets


def inserted_elsewhere(ctx: FileContext, key: tuple[str, str, str]) -> bool:
    """Whether another module of the project inserts the packet `key` into graphs that
    carry packets (legacy FX, compiler graphs: QL102 leaves those insertions alone). An
    insertion QL102 reports does not count: once fixed, the matcher would be wrong, and a
    second `qlint fix` would change what the first left."""
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
        return wrappers.imports_helper(ctx.project, path, text)

    found = unkept_module_facts(ctx, (op,), _packets_into_packet_graphs, spelled, imports_a_wrapper)
    return any(key in packets for packets in found)


def _packets_into_packet_graphs(ctx: FileContext) -> frozenset[tuple[str, str, str]]:
    """The packets a module inserts into graphs that carry packets (none when its graphs carry
    overloads): what the project scan keeps of the module instead of its tree."""
    packets = inserted_packets(ctx)
    return frozenset(packets) if packets and packet_graph_context(ctx) is not None else frozenset()


def normalised_before(ctx: FileContext, body: Body) -> bool:
    """Whether the project normalises graphs to packets before calling the function (or the
    class) `body` belongs to."""
    if ctx.module is None:
        return False
    names = set()
    func = body.node if isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    owner = body.class_scope.node if body.class_scope is not None else None
    if func is not None and owner is None and ctx.scope.functions.get(func.name) is func:
        names.add(f"{ctx.module}.{func.name}")
    if owner is not None and ctx.scope.classes.get(owner.name) is not None:
        names.add(f"{ctx.module}.{owner.name}")
        if func is not None:
            names.add(f"{ctx.module}.{owner.name}.{func.name}")
    decorators = [*(func.decorator_list if func is not None else ()), *(owner.decorator_list if owner else ())]
    if not names and not decorators:
        return False
    normalised = normalised_callees(ctx)
    if names & normalised:
        return True
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable)
    for deco in decorators:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = resolver.qualname(target)
        if not name:
            continue
        if name in normalised:
            return True
        # A script outside any package (a test next to no `__init__.py`) has no project scan,
        # and a namespace package's module is named by its file alone: the decorator's own
        # module, found as the import resolves, is read instead.
        if normalising_decorator(ctx, name):
            return True
    return False

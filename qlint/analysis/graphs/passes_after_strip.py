"""Packets inserted by a pass that runs only on graphs its callers have already stripped (QL102).

SHARK's importer traces a model, strips the graph to packets with its own loop
(`strip_loops.calls_after_strip`; ByteIR's torch-frontend with torch's `strip_overloads`), and
only then runs its f16 and GPTQ passes, which insert packets: the node they add carries the
form every other node carries by then, and what reads the graph next (TorchScript scripting)
wants packets. QL101's side of the same fact is `project_normalisers` (a matcher in a function
called after the strip sees packets).

Read in the insertion's own module: every use of the pass's name there is a call made in a
function's own body, on the graph that function has stripped unconditionally before (bound
since only to itself: `g = g.half()`, or to what the pass returns: `g = upcast(g)`), and
none before the strip; a
public pass is also looked for by name in the project's other modules, where a caller that
does not strip may sit.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.strip_loops import calls_after_strip
from qlint.analysis.graphs.stripped_later import named_elsewhere
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.tree_walk import name_loads

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def called_after_strips(ctx: FileContext, body: Body | None) -> bool:
    """Whether the module function `body` is called only after its callers strip graphs."""
    if body is None or not isinstance(body.node, _FUNCS):
        return False
    if "overloadpacket" not in ctx.words and "strip_overloads" not in ctx.words:
        return False  # neither a strip loop of the module's nor torch's strip
    func = body.node
    name = func.name
    if ctx.scope.functions.get(name) is not func or func.decorator_list:
        return False
    loads = name_loads(ctx.tree, name)
    if not loads:
        return False
    after = 0
    for caller in bodies(ctx.tree, ctx.scope, ctx.cache):
        mine = [
            c for c in caller.nodes(None, frozenset({ast.Call})) if isinstance(c.func, ast.Name) and c.func.id == name
        ]
        if not mine:
            continue
        resolver = Resolver(ctx.scope, ctx.project, ctx.optable, caller.local, caller.class_scope)
        split = calls_after_strip(caller.node, ctx.scope.functions, mine, resolver.qualname)
        if split is None:
            continue
        if split[0]:
            return False  # this caller runs it before its strip too
        after += len(split[1])
    if after != len(loads):
        return False  # called elsewhere, or handed on: on what graph is not known
    return name.startswith("_") or not named_elsewhere(ctx, name)

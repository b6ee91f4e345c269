"""Rows of a pass that run only in the calls made after the caller stripped the graph (QL101,
QL102), the pass's parameters read call by call.

SHARK's importer runs `transform_fx(fx_g, quantized=True)` on the traced graph, then strips it
to packets with its own loop, then runs `transform_fx(fx_g)` for f16. Past its
`if quantized: continue`, the pass matches and inserts packets: those rows run only in the
second call, on a graph whose every node carries a packet. `passes_after_strip` asks the same
of a pass as a whole; here the row's conditions on the pass's parameters
(`row_guards.row_guard`) are checked against each call's arguments.

Read in the pass's own module: the pass is a module function, not decorated, spelling no
overload (a node it sets to one in the call after the strip would not equal the packet:
`stripped_here` asks the same), every use of its name there a call. Each call either passes
constants (written, or the defaults it leaves) that rule the row out
(`dead_branches.contradicted_at_call`: a non-constant argument, or `*args`/`**kwargs` that
may pass it, rules nothing out), or is made on the graph its caller has just stripped
(`strip_loops.calls_after_strip`), and at least one is. A public pass is also looked for by
name in the project's other modules, whose callers and their strips are not read: a module
spelling its name is a caller that may reach the row, unless it defines a function of that
name of its own and never names it otherwise (SHARK's Stable Diffusion training script has
its own `transform_fx`).
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.flow.dead_branches import contradicted_at_call, open_ended
from qlint.analysis.flow.row_guards import row_guard
from qlint.analysis.graphs.namesakes import named_only_by_namesakes
from qlint.analysis.graphs.overload_spellings import writes_an_overload
from qlint.analysis.graphs.strip_loops import calls_after_strip
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.tree_walk import name_loads

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CALLS = frozenset({ast.Call})


def row_runs_after_strips(ctx: FileContext, body: Body | None, row: int) -> bool:
    """Whether every call of the module function `body` whose arguments let it reach `row` is
    made on a graph its caller has just stripped to packets."""
    if body is None or not isinstance(body.node, _FUNCS) or "overloadpacket" not in ctx.words:
        return False
    func = body.node
    name = func.name
    if ctx.scope.functions.get(name) is not func or func.decorator_list:
        return False
    guard = row_guard(func, row)
    if not guard:
        return False  # the row runs in every call: `passes_after_strip` asks that
    if writes_an_overload(ctx, body, func):
        return False
    loads = name_loads(ctx.tree, name)
    seen = after_strip = 0
    for caller in bodies(ctx.tree, ctx.scope, ctx.cache):
        mine = [c for c in caller.nodes(None, _CALLS) if isinstance(c.func, ast.Name) and c.func.id == name]
        if not mine:
            continue
        seen += len(mine)
        split = calls_after_strip(caller.node, ctx.scope.functions, mine)
        stripped = {id(c) for c in split[1]} if split is not None else set()
        for call in mine:
            if id(call) in stripped:
                after_strip += 1
            elif not contradicted_at_call(guard, func, _passed(func, call), open_ended=open_ended(call)):
                return False  # this call may reach the row on a graph with overloads
    if seen != len(loads) or not after_strip:
        return False  # handed on, or called elsewhere: with what, on what graph, is not known
    return name.startswith("_") or named_only_by_namesakes(ctx, name)


def _passed(func: ast.AST, call: ast.Call) -> dict[int, ast.expr]:
    """Parameter index -> the argument `call` writes for it (positional up to a `*args`, or by
    keyword); a parameter left out is absent (its default counts)."""
    args = func.args
    params = parameter_args(func, star=False)
    positional = len(args.posonlyargs) + len(args.args)
    out: dict[int, ast.expr] = {}
    for index, arg in enumerate(call.args[:positional]):
        if isinstance(arg, ast.Starred):
            break
        out[index] = arg
    by_name = {a.arg: i for i, a in enumerate(params) if i >= len(args.posonlyargs)}
    for kw in call.keywords:
        if kw.arg in by_name:
            out[by_name[kw.arg]] = kw.value
    return out

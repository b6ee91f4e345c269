"""The graph side of a subgraph matcher, and the graphs its callers hand it (QL101).

torch's `SubgraphMatcher` compares the nodes of a pattern graph with those of the graph it
searches, and its hooks take the pattern's node first and the searched graph's node second:
`_match_nodes(pn, gn, match)`, `_nodes_are_equal(pn, gn)`, `_match_attributes(pn, gn)`,
`_match_literals(pn, gn, match)`, and `_match_args(pn, gn)`, the pair walk inside torch's
`_match_nodes` that subclasses write as a method of their own. A subgraph rewriter that
traces its patterns symbolically imports `symbolic_trace`, which makes its module legacy FX
graph mode (whose graphs carry packets). That holds for the pattern side: the trace records
the packets a pattern function calls. The searched graph is its callers' business.

A caller that hands the rewriter a function calling ATen overloads, in a parameter the rewriter
traces, says what the searched graph is: the matcher compares targets exactly, so a pattern of
overloads matches only a graph of overloads, a dispatcher-level one (AITemplate's fx2ait
composes `mm`/`bmm` back in captured ATen graphs, which carry `sym_size.int`). An ATen packet
compared with the graph side's target there never matches a node. A pattern written with torch
functions or with packets alone (the trace of user code) says the searched graph is a trace as
well, and the legacy excuse stands; so it does when no caller is found.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.pattern_replacements import op_spellings
from qlint.analysis.graphs.project_texts import parsed_module, texts_naming
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import parameter_args

# torch's hooks that receive (pattern node, graph node) after `self`.
_HOOKS = frozenset({"_match_nodes", "_nodes_are_equal", "_match_attributes", "_match_literals", "_match_args"})
_MATCHERS = (
    "torch.fx.passes.utils.matcher_utils.SubgraphMatcher",
    "torch.fx.passes.utils.matcher_with_name_node_map_utils.SubgraphMatcherWithNameNodeMap",
    "torch.fx.passes.utils.SubgraphMatcher",
)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CACHE_KEY = "matcher_sides.overload_patterns"
# Following a parameter handed on between the module's own functions stops after this many.
_MAX_ROUNDS = 4


def graph_side_compared(ctx: FileContext, body: Body, use: ast.expr) -> bool:
    """Whether `use` (a packet, or a collection of them) is compared with the target of the
    searched graph's node in a hook of a `SubgraphMatcher` subclass of the module."""
    func = body.node
    if not isinstance(func, _FUNCS) or func.name not in _HOOKS or not _matcher_class(ctx, body):
        return False
    params = parameter_args(func, star=False)
    if len(params) < 3:
        return False
    graph_node = params[2].arg
    for node in ast.walk(func):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(o is use for o in operands) and any(_target_of(o, graph_node) for o in operands):
                return True
    return False


def handed_overload_patterns(ctx: FileContext) -> bool:
    """Whether code of the project (this module's too) hands a function of this module a
    function calling an ATen overload, in a parameter the module traces symbolically."""
    if _CACHE_KEY not in ctx.cache:
        ctx.cache[_CACHE_KEY] = _handed(ctx)
    return ctx.cache[_CACHE_KEY]


def _handed(ctx: FileContext) -> bool:
    traced = _traced_parameters(ctx)
    if not traced:
        return False
    callers = [ctx]
    if ctx.module:
        short = ctx.module.rsplit(".", 1)[-1]
        callers += [c for path, text in texts_naming(ctx, short) if (c := parsed_module(ctx, path, text))]
    return any(_hands_overloads(ctx, caller, traced) for caller in callers)


def _matcher_class(ctx: FileContext, body: Body) -> bool:
    cls = body.class_scope
    if cls is None:
        return False
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable)
    return any(resolver.qualname(base) in _MATCHERS for base in cls.bases)


def _target_of(expr: ast.expr, name: str) -> bool:
    return (
        isinstance(expr, ast.Attribute)
        and expr.attr == "target"
        and isinstance(expr.value, ast.Name)
        and expr.value.id == name
    )


def _traced_parameters(ctx: FileContext) -> dict[str, dict[int, str]]:
    """Module-level functions by name, with the parameters (position: name) whose values the
    module traces symbolically: `symbolic_trace(p)` in the function, or `p` handed to one of
    the module's functions that traces it (`replace_pattern` calling `_replace_pattern`)."""
    funcs = {name: f for name, f in ctx.scope.functions.items() if isinstance(f, _FUNCS)}
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable)
    traced: dict[str, dict[int, str]] = {}
    for _ in range(_MAX_ROUNDS):
        changed = False
        for name, func in funcs.items():
            params = {a.arg: i for i, a in enumerate(parameter_args(func, star=False))}
            for call in (n for n in ast.walk(func) if isinstance(n, ast.Call)):
                for arg in _traced_arguments(call, resolver, funcs, traced):
                    if isinstance(arg, ast.Name) and arg.id in params:
                        known = traced.setdefault(name, {})
                        if params[arg.id] not in known:
                            known[params[arg.id]] = arg.id
                            changed = True
        if not changed:
            break
    return traced


def _traced_arguments(call: ast.Call, resolver: Resolver, funcs, traced) -> list[ast.expr]:
    callee = resolver.qualname(call.func) or ""
    if callee.startswith("torch.") and callee.endswith(".symbolic_trace"):
        return call.args[:1]
    if isinstance(call.func, ast.Name) and call.func.id in traced:
        return _arguments_at(call, traced[call.func.id], funcs[call.func.id])
    return []


def _arguments_at(call: ast.Call, wanted: dict[int, str], func: ast.AST) -> list[ast.expr]:
    offset = 1 if _is_method(func) else 0
    found = [a for i, a in enumerate(call.args) if i + offset in wanted]
    names = set(wanted.values())
    return found + [k.value for k in call.keywords if k.arg in names]


def _is_method(func: ast.AST) -> bool:
    params = parameter_args(func, star=False)
    return bool(params) and params[0].arg in ("self", "cls")


def _hands_overloads(home: FileContext, caller: FileContext, traced: dict[str, dict[int, str]]) -> bool:
    wanted = {f"{home.module}.{name}" if home.module else name: name for name in traced}
    owned = {id(b.node): b for b in bodies(caller.tree, caller.scope, caller.cache)}
    for body in owned.values():
        resolver = Resolver(caller.scope, caller.project, caller.optable, body.local, body.class_scope)
        for call in body.nodes(None, frozenset({ast.Call})):
            name = wanted.get(resolver.qualname(call.func) or "")
            if name is None:
                continue
            func = home.scope.functions[name]
            for arg in _arguments_at(call, traced[name], func):
                pattern = _module_function(caller, body, arg, owned)
                if pattern is not None and any(
                    r.namespace == "aten" and not r.is_packet for r in op_spellings(caller, pattern)
                ):
                    return True
    return False


def _module_function(ctx: FileContext, body: Body, expr: ast.expr, owned: dict[int, Body]) -> Body | None:
    """The body of the module-level function `expr` names (not a local name of `body`: a
    parameter may hold any callable)."""
    if not isinstance(expr, ast.Name) or (body.node is not ctx.tree and expr.id in body.local):
        return None
    return owned.get(id(ctx.scope.functions.get(expr.id)))

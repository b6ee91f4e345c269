"""Graphs the project traces itself, rewrites and runs, never exported (QL101, QL102).

A packet in a graph is harmful where the graph later meets code keyed on overloads: an
export or lowering turns the packet into `.default` (re-export), or a library's matcher
compares the node exactly. A graph the project makes with its own trace (`make_fx(f)(...)`,
`torch.fx.symbolic_trace(m)`), hands only through its own passes and then runs itself, meets
neither: easydist traces a training step with `make_fx`, its ZeRO pass inserts `aten.view`
packets, its tiling pass inserts `aten.chunk`/`aten.concat` packets and keeps the inserted
views out of its computation nodes by the packet, and the compiled object calls the graph.

`self_traced_pass` answers for a module-level function whose first parameter is the graph:
every call of it in the project (by name, in its own module and in the modules spelling the
name) is made from a function whose argument is, on every binding, the result of such a
trace, of a pass of the project applied to such a graph (`g = p(g)`, `h = p(g)`, `h = g`; the
pass read, and calling nothing that exports), one element of a tuple a function of the project
returns, that element traced there (easydist's `..., graph = ed_compile_func(...)`), the
`.graph` of such a graph module (`graph = gm.graph`, or `helper(gm.graph, node)`), or the
function's own graph parameter, answered the same way for its callers (a few calls deep). No
function on the way may call anything that exports, lowers or serialises (`export`, `to_edge`,
`save`, ...: by the call's last name, whatever it is given; `torch.onnx.export` is none, see
`graph_local_reads`), nor store the graph in an attribute or item. A function where the graph is
made, and which returns a value that may hold it (easydist returns an object wrapping the graph;
traininglib returns ONNX bytes, which cannot), is followed one step further: it must be called,
by functions that call nothing of the kind, in modules that spell no such call. A graph from
anywhere else (`torch.export`, `ep.module()`, a caller outside the project, a name used other
than by calls, a method's parameter) is unknown, and unknown stays reported.

`pass_call_sites` finds a function's calls in the project, `graph_local_reads` reads what a
function's own body does with a graph local (its bindings, stores, returns, and calls that
export, lower or serialise).
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import kept_module_facts
from qlint.analysis.graphs.compile_backends import before_retrace, compile_backend, hands_off, registers_backends
from qlint.analysis.graphs.graph_local_reads import (
    LEAVING,
    body_nodes,
    calls_leaving,
    local_bindings,
    may_return_local,
    stores_local,
)
from qlint.analysis.graphs.graph_objects import graph_constructions, inserts_into_held_graph, method_class
from qlint.analysis.graphs.graph_parameter_passes import graph_parameter_pass
from qlint.analysis.graphs.param_graph_nodes import param_graph_node
from qlint.analysis.graphs.pass_call_sites import pass_call_sites
from qlint.analysis.graphs.project_texts import read_module
from qlint.analysis.graphs.retargeted_nodes import retargeting_pass
from qlint.analysis.graphs.scanned_facts import module_facts
from qlint.analysis.names.functions import Body, innermost_body
from qlint.analysis.names.resolver import Resolver

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# The project's own traces: what they return holds the ops the traced code ran, as overloads
# (make_fx) or as the torch functions it called (symbolic_trace), and goes nowhere by itself.
_TRACES = frozenset(
    {
        "torch.fx.experimental.proxy_tensor.make_fx",
        "torch.fx.symbolic_trace",
        "torch.fx._symbolic_trace.symbolic_trace",
    }
)
_MAKE_FX = "torch.fx.experimental.proxy_tensor.make_fx"
_LIBRARIES = ("torch.", "torchao.", "executorch.")
_DEPTH = 4


def self_traced_insertion(ctx: FileContext, expr: ast.expr, body: Body | None = None) -> bool:
    """Whether the insertion at `expr` (in the function `body`, looked up when not given) is
    made into the graph parameter of a module-level pass that only ever gets graphs the
    project traced itself and never exports, lowers or serialises."""
    if body is None:
        body = innermost_body(ctx.tree, ctx.scope, ctx.cache, expr.lineno)
    # Into the graph parameter's graph: a node inserted, or one of its nodes retargeted.
    func = graph_parameter_pass(ctx, body, expr) or retargeting_pass(ctx, body, expr)
    if func is not None:
        return self_traced_pass(ctx, func)
    # A method inserting into the graph its object holds (`graph_objects`).
    cls = method_class(ctx, body)
    return cls is not None and _gate(ctx) and inserts_into_held_graph(ctx, body, expr) is cls and _object(ctx, cls)


def self_traced_pass(ctx: FileContext, func: ast.AST | None) -> bool:
    """Whether `func`, a module-level function of `ctx`, only ever gets as its first parameter
    a graph the project traced itself and never exports, lowers or serialises (above); or a
    method of a class whose objects are only ever built around such graphs (`graph_objects`)."""
    if not isinstance(func, _FUNCS):
        return False
    if ctx.scope.functions.get(func.name) is not func:
        cls = next((c.node for c in ctx.scope.classes.values() if func in c.node.body), None)
        return cls is not None and not func.decorator_list and _gate(ctx) and _object(ctx, cls)
    if not _gate(ctx):
        return False
    key = ("self_traced_pass", id(func))
    if key not in ctx.cache:
        ctx.cache[key] = False  # asked again on the way (a helper's caller calling it): no source
        ctx.cache[key] = _Walk(ctx).param_traced(ctx, func, 0, 0) or bool(_node_helper_callers(ctx, func))
    return ctx.cache[key]


def node_helper_callers(ctx: FileContext, func: ast.AST) -> list[FileContext]:
    """The modules calling `func`, a module-level helper of `ctx` handed nodes rather than a
    graph, when every call hands it first a node of the graph of a self-traced pass calling it
    (`param_graph_nodes`: `for n in gm.graph.nodes: helper(n.args[0])`); empty otherwise.
    pytorch-shir's `isel_utils.extract_qconv_leaky` matches the intrinsics' packets on the
    nodes the tiny-YOLO selector hands it, which backend2's graph holds."""
    if not isinstance(func, _FUNCS) or ctx.scope.functions.get(func.name) is not func or not _gate(ctx):
        return []
    return _node_helper_callers(ctx, func)


def _node_helper_callers(ctx: FileContext, func: ast.AST) -> list[FileContext]:
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if not params or any(
        isinstance(n, ast.Attribute)
        and n.attr in ("graph", "nodes")
        and isinstance(n.value, ast.Name)
        and n.value.id == params[0]
        for n in ast.walk(func)
    ):
        return []  # its parameter is read as a graph: `param_traced` answered for it
    # Asked again while answered (a caller's graph traced back to the helper): no source. The
    # modules found are not kept in the cache: the checked module among them would hold itself.
    key = ("node_helper_callers", id(func))
    if ctx.cache.get(key):
        return []
    ctx.cache[key] = True
    try:
        return _callers_handing_nodes(ctx, func)
    finally:
        ctx.cache[key] = False


def _callers_handing_nodes(ctx: FileContext, func: ast.AST) -> list[FileContext]:
    sites = pass_call_sites(ctx, func.name)
    found: list[FileContext] = []
    for module, owner, call in sites:
        if (
            not call.args
            or isinstance(call.args[0], ast.Starred)
            or not isinstance(owner, _FUNCS)
            or module.scope.functions.get(owner.name) is not owner
            or not param_graph_node(owner, call.args[0])
            or not self_traced_pass(module, owner)
        ):
            return []
        if all(m is not module for m in found):
            found.append(module)
    return found


def _gate(ctx: FileContext) -> bool:
    """A graph the project keeps to itself can start here at all: a trace of its own, or a
    `torch.compile` backend registered in the repository."""
    return _traces_in_project(ctx) or registers_backends(ctx)


def _object(ctx: FileContext, cls: ast.ClassDef) -> bool:
    """Every construction of the top-level class `cls` builds it around a graph the project
    keeps to itself, and its methods export, lower, serialise and re-trace nothing."""
    key = ("self_traced_object", id(cls))
    if key not in ctx.cache:
        made = None if calls_leaving(cls) or hands_off(cls) else graph_constructions(ctx, cls)
        walk = _Walk(ctx)
        ctx.cache[key] = bool(made) and all(walk.name_traced(m, owner, name, 1) for m, owner, name in made)
    return ctx.cache[key]


def _traces_in_project(ctx: FileContext) -> bool:
    """A module the project scan keeps (one that inserts into graphs), this one included,
    spells a trace: the project's passes and their trace sit together (easydist's
    `compile_dp`); without one the caller search below, which reads every module naming the
    pass, is not made (a trace only in modules that insert nothing stays reported). Kept
    between runs, so a later run reads no module for it. One such module that parses is the
    answer: the scan stops there (the installed torch: the first question parsed all 69 kept
    modules spelling a trace, 4.2 M characters, ~0.55 s of CPU, where the first one said yes)."""
    return any(module_facts(ctx, _TRACE_WORDS, _spells_trace, own=True, saved=True, first=True))


_TRACE_WORDS = ("make_fx", "symbolic_trace")


def _spells_trace(module: FileContext) -> bool:
    """Kept per module content by `module_facts`: the needles are the question."""
    return True


def _kept_true(data) -> bool:
    if data is not True:
        raise TypeError("not a kept trace fact")
    return True


# Kept between runs with what it read (`kept_module_facts`): since QL101 asks it of a matcher
# keyed on its own module's insertions, a check of one edited file parsed again every module
# spelling a trace (and every one that does not parse, asked again at each run).
kept_module_facts.keep_on_disk(_spells_trace, "spells-trace-1", bool, _kept_true)


_SITES = "self_traced_graphs.sites"


class _Walk:
    """One question's walk: what it has visited (a pass applied to its own result is no new
    source), and the modules it has read."""

    def __init__(self, home: FileContext):
        self.seen: set[tuple[str, int, str]] = set()
        # (module path, name) -> its call sites, read once for all the questions asked of
        # `home` (the module whose functions are asked about): a caller is asked for where its
        # graph parameter comes from and then, when it returns a value, for where that goes
        # (`_callers_stay`), and each of the module's matchers asks again along the same
        # callers (ao's qat_utils.py: 2 questions, each reading `convert_pt2e`'s 4 caller
        # modules twice). Kept on `home`'s cache as `self_traced_pass` keeps its answers there,
        # with `home` itself held as None: a context holding itself is a cycle.
        self.home = home
        self.sites: dict[tuple[str, str], list[tuple[FileContext | None, ast.AST, ast.Call]]] = home.cache.setdefault(
            _SITES, {}
        )

    def call_sites(self, ctx: FileContext, name: str) -> list[tuple[FileContext, ast.AST, ast.Call]]:
        """`pass_call_sites`, once per module and name for the questions asked of `home`."""
        home = self.home
        key = (ctx.path, name)
        found = self.sites.get(key)
        if found is None:
            found = pass_call_sites(ctx, name)
            self.sites[key] = [(None if module is home else module, owner, call) for module, owner, call in found]
            return found
        return [(home if module is None else module, owner, call) for module, owner, call in found]

    def param_traced(self, ctx: FileContext, func: ast.AST, index: int, depth: int) -> bool:
        """Every call of the module-level `func` in the project hands a self-traced graph as
        its positional argument `index`."""
        if depth > _DEPTH or calls_leaving(func):
            return False
        sites = self.call_sites(ctx, func.name)
        if not sites:
            # Nothing calls it that we can see: where its graph comes from is unknown, unless
            # the repository hands it to `torch.compile` as its backend, which Dynamo calls
            # with a fresh trace that nothing else holds (`compile_backends`).
            return index == 0 and compile_backend(ctx, func)
        for module, owner, call in sites:
            arg = call.args[index] if len(call.args) > index else None
            name = _held(arg)
            if name is None or any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
                return False
            if (
                index == 0
                and isinstance(arg, ast.Name)
                and before_retrace(module, owner, call)
                and not calls_leaving(owner)
                and not stores_local(owner, name)
            ):
                continue  # Dynamo's graph, re-traced to overloads by AOT once the pass has run
            if not self.name_traced(module, owner, name, depth + 1):
                return False
        return True

    def name_traced(self, ctx: FileContext, func: ast.AST, name: str, depth: int, returned: bool = False) -> bool:
        """Every binding of the local `name` in `func` is a self-traced graph. `returned`: the
        caller that asks binds what `func` returns, and is followed itself."""
        key = (ctx.path, id(func), name)
        if key in self.seen:
            return True  # `g = p(g)`: the pass keeps what the other bindings say
        self.seen.add(key)
        if depth > _DEPTH or calls_leaving(func) or stores_local(func, name):
            return False
        values = local_bindings(func, name)
        if values is None:
            return False
        params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        if name in params:
            if ctx.scope.functions.get(func.name) is not func:
                return False  # a method or a nested function: its callers are not looked up
            if not self.param_traced(ctx, func, params.index(name), depth):
                return False
        elif not values:
            return False
        elif not returned and may_return_local(func, name) and not _callers_stay(ctx, func, self):
            return False  # what it returns may hold the graph, and goes where we do not look
        resolver = Resolver(ctx.scope, ctx.project, ctx.optable)
        for value, position in values:
            if position is not None:
                if not self.unpacked_traced(ctx, value, position, resolver, depth):
                    return False
                continue
            if _traced_here(value, resolver):
                continue
            source = _source(ctx, value, resolver)
            if source is None or not self.name_traced(ctx, func, source, depth):
                return False
        return True

    def unpacked_traced(self, ctx: FileContext, value: ast.expr, position: int, resolver: Resolver, depth: int) -> bool:
        """`..., g, ... = f(...)`, `f` a module-level function of the project each of whose
        returns is a tuple holding, at `position`, a local self-traced there."""
        found = _project_function(ctx, value, resolver)
        if found is None:
            return False
        other, func = found
        returns = [n for n in body_nodes(func) if isinstance(n, ast.Return)]
        if not returns:
            return False
        for ret in returns:
            elts = ret.value.elts if isinstance(ret.value, ast.Tuple) else None
            if elts is None or len(elts) <= position or any(isinstance(e, ast.Starred) for e in elts):
                return False
            element = elts[position]
            if not isinstance(element, ast.Name) or not self.name_traced(other, func, element.id, depth + 1, True):
                return False
        return True


def _project_function(ctx: FileContext, value: ast.expr, resolver: Resolver) -> tuple[FileContext, ast.AST] | None:
    """(module, function) of the project's module-level function that the call `value` calls."""
    qualname = resolver.qualname(value.func) if isinstance(value, ast.Call) else None
    if not qualname or qualname.startswith(_LIBRARIES):
        return None
    module, _, name = qualname.rpartition(".")
    path = ctx.project.find_module_in_check(module, ctx.path) if module else None
    if path is None:
        return None
    other = ctx if os.path.abspath(path) == os.path.abspath(ctx.path) else read_module(ctx, path)
    if other is None:
        return None
    if other is not ctx:
        # What the check reads of that module is what its answer depends on.
        ctx.project.hand_over_dependencies(other.path, ctx.path)
    func = other.scope.functions.get(name)
    return (other, func) if isinstance(func, _FUNCS) else None


def _traced_here(value: ast.expr, resolver: Resolver) -> bool:
    """`make_fx(f, ...)(*args)` or `symbolic_trace(m)`."""
    if not isinstance(value, ast.Call):
        return False
    inner = value.func
    if isinstance(inner, ast.Call) and resolver.qualname(inner.func) == _MAKE_FX:
        return True
    return resolver.qualname(value.func) in _TRACES and resolver.qualname(value.func) != _MAKE_FX


def _held(arg: ast.expr | None) -> str | None:
    """The local an argument hands on: `g`, or `gm.graph`, the graph a traced graph module
    holds (traininglib's passes take `gm` and hand `gm.graph` to the helper that inserts)."""
    if isinstance(arg, ast.Attribute) and arg.attr == "graph":
        arg = arg.value
    return arg.id if isinstance(arg, ast.Name) else None


def _source(ctx: FileContext, value: ast.expr, resolver: Resolver) -> str | None:
    """The local a binding's graph comes from: `h = g`, `graph = gm.graph`, or `h = p(g, ...)`
    with `p` a module-level function of the project that exports, lowers and serialises nothing
    (a library's function, or one we cannot read, may hand back anything: an export's program)."""
    if isinstance(value, (ast.Name, ast.Attribute)):
        return _held(value)
    if not isinstance(value, ast.Call) or not value.args or not isinstance(value.args[0], ast.Name):
        return None
    found = _project_function(ctx, value, resolver)
    if found is None or calls_leaving(found[1]):
        return None
    return value.args[0].id


def _callers_stay(ctx: FileContext, func: ast.AST, walk: _Walk) -> bool:
    """What the trace's function returns may hold the graph (easydist wraps it in the object it
    returns): it is called, and no function calling it, nor any other module calling it,
    exports, lowers or serialises anything."""
    if ctx.scope.functions.get(func.name) is not func:
        return False
    sites = walk.call_sites(ctx, func.name)
    if not sites or any(calls_leaving(owner) for _, owner, _ in sites):
        return False
    return not any(LEAVING.search(module.text) for module, _, _ in sites if module is not ctx)


__all__ = ["node_helper_callers", "self_traced_insertion", "self_traced_pass"]

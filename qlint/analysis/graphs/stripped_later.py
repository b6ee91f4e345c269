"""Packets inserted by a pass whose every caller strips the graph's overloads next (QL102).

`strip_overloads(gm)` rewrites every node's target to its packet (a backend's lowering to
TorchScript does so). A pass whose callers all run it on a graph and then strip that same
graph, unconditionally, before anything else could read a node's overload, inserts a packet
into a graph where every target is about to be one: what reads the graph afterwards expects
packets. Between the two, only passes of the module that never name the inserted op may run
on the graph (they cannot be keyed on its overload); anything else that sees the graph (a
return, a store, a call of something else, a condition around the strip) makes the caller
unknown, and the insertion stays reported.

The strip is torch's `strip_overloads`, or the project's own loop that does what it does
(`strip_loops`: written in the caller, or a helper of the module or of another module of the
project, applied to the same graph). Between the pass and the strip, graph upkeep that reads
no target (`gm.recompile()`) and definitions may run too, and so may a blind pass of another
module, or one nested in the caller, or one of an installed package, read from its source
(`installed_passes`; not installed, it is unknown). A pass nested in a function is called
there alone.

The strip may follow the `if` (or `with`) the call is made in: the end of either arm leads
there, so a strip after the block covers the call in the arm, with nothing between keyed on
the op (SHARK's importer runs its pass in the quantized arm, then strips after the `else`). A
loop's body does not lead on (the pass may run again first), nor a `try`'s. A caller may also
run the pass after its own strip (`strip_loops.calls_after_strip`, as `passes_after_strip`
asks of every call): the packet goes into a graph of packets; at least one call is stripped
next, or this is that module's question.

Read in the insertion's own module; a public pass is also looked for by name in the other
modules of the project, where a caller that does not strip may sit (a module that spells the
name only for its own function of that name calls none: `namesakes`).
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.blind_passes import blind_function
from qlint.analysis.graphs.call_statements import SIMPLE, call_statement, calls_of, statement_lists
from qlint.analysis.graphs.graph_parameter_passes import graph_parameter_pass, nested_pass
from qlint.analysis.graphs.namesakes import named_only_by_namesakes
from qlint.analysis.graphs.overload_spellings import writes_an_overload
from qlint.analysis.graphs.pattern_replacements import blind_rewrite
from qlint.analysis.graphs.project_texts import read_module, texts_naming
from qlint.analysis.graphs.strip_loops import calls_after_strip, strip_helper, strip_loop, torch_strip, upkeep
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.op_refs import OpRef
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.tree_walk import mentions_name

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def stripped_after(ctx: FileContext, body: Body | None, ref: OpRef, expr: ast.expr) -> bool:
    """Whether the insertion of `ref` (at `expr`, in the function `body`) is made into the
    function's graph parameter, and every call of the function strips that graph's overloads
    next."""
    # No gate on the module's text: the strip may be a helper of another module.
    func = graph_parameter_pass(ctx, body, expr)
    # A pass nested in a function is called by that function alone: its calls are there.
    outer = None if func is not None else nested_pass(ctx, body, expr)
    if outer is not None:
        func = body.node
    if func is None:
        return False
    calls = calls_of(outer or ctx.tree, func.name)
    if not calls:
        return False
    owners = {id(b.node): b for b in bodies(ctx.tree, ctx.scope, ctx.cache)}
    stripped_next = after_strip = False
    for owner, stmts, index in calls:
        held = owners.get(id(owner))
        if held is None:
            return False
        resolver = Resolver(ctx.scope, ctx.project, ctx.optable, held.local, held.class_scope)
        if _strips_next(ctx, owner, stmts, index, ref, resolver):
            stripped_next = True
        elif _made_after_strip(ctx, owner, stmts[index], resolver):
            after_strip = True
        else:
            return False
    if not stripped_next:
        return False  # every call after a strip: `passes_after_strip` asks that
    if after_strip and writes_an_overload(ctx, body, func):
        return False  # on the stripped graph it sets nodes to overloads the packet sits beside
    return outer is not None or func.name.startswith("_") or named_only_by_namesakes(ctx, func.name)


def _made_after_strip(ctx: FileContext, owner: ast.AST, stmt: ast.stmt, resolver: Resolver) -> bool:
    """Whether the call statement `stmt` runs the pass on the graph its caller has already
    stripped to packets (`strip_loops.calls_after_strip`): the node it inserts carries the form
    every other node carries by then."""
    split = calls_after_strip(owner, ctx.scope.functions, [stmt.value], resolver.qualname)
    return split is not None and bool(split[1])


def rewrite_stripped_next(ctx: FileContext, call: ast.Call, ref: OpRef) -> bool:
    """Whether the subgraph rewrite `call` (`replace_pattern(gm, ...)`, a statement of its own)
    is followed in its function by a strip of the same graph, with nothing between that could
    be keyed on the overload of `ref` (as `stripped_after` asks of a pass's callers): the
    packet the rewrite splices in is the form every node is about to carry."""
    if not call.args or not isinstance(call.args[0], ast.Name):
        return False
    owners = {id(b.node): b for b in bodies(ctx.tree, ctx.scope, ctx.cache)}
    for owner in ast.walk(ctx.tree):
        if not isinstance(owner, _FUNCS):
            continue
        for stmts in statement_lists(owner):
            for index, stmt in enumerate(stmts):
                if isinstance(stmt, ast.Expr) and stmt.value is call:
                    held = owners.get(id(owner))
                    if held is None:
                        return False
                    resolver = Resolver(ctx.scope, ctx.project, ctx.optable, held.local, held.class_scope)
                    return _stripped_from(ctx, owner, stmts, index, call.args[0].id, ref, resolver)
    return False


def _strips_next(
    ctx: FileContext, owner: ast.AST, stmts: list[ast.stmt], index: int, ref: OpRef, resolver: Resolver
) -> bool:
    graph = call_statement(stmts[index], _callee(stmts[index]))
    if graph is None:
        return False
    return _stripped_from(ctx, owner, stmts, index, graph, ref, resolver)


def _stripped_from(
    ctx: FileContext, owner: ast.AST, stmts: list[ast.stmt], index: int, graph: str, ref: OpRef, resolver: Resolver
) -> bool:
    """Whether `graph` is stripped after statement `index` of `stmts` (in `owner`), with only
    upkeep and passes blind to `ref` between."""
    todo = list(stmts[index + 1 :])
    while True:
        if not todo:
            # The end of an `if` arm (or of a `with` body) leads on to what follows the block,
            # whichever arm ran: a strip there covers the insertion in either.
            block = _after_block(owner, stmts, graph)
            if block is None:
                return False
            stmts, index = block
            todo = list(stmts[index + 1 :])
            continue
        stmt = todo.pop(0)
        if isinstance(stmt, ast.With):
            # The body of a `with` runs unless its context manager raises: read on.
            if any(mentions_name(item, graph) for item in stmt.items):
                return False
            todo = list(stmt.body) + todo
            continue
        if strip_loop(stmt, graph):
            return True
        if isinstance(stmt, _FUNCS) and not stmt.decorator_list:
            continue  # a definition runs nothing
        if not isinstance(stmt, SIMPLE):
            return False  # a branch, loop or exit: the strip may not come
        if not mentions_name(stmt, graph) or upkeep(stmt, graph) or blind_rewrite(ctx, stmt, graph, ref.op, resolver):
            continue
        call = _graph_call(stmt, graph)
        if call is None:
            return False  # the graph read, stored, returned or bound anew
        callee = call.func.id
        name = _imported_in(owner, callee) or resolver.qualname(call.func) or ""
        if torch_strip(name) and len(call.args) == 1 and isinstance(stmt, ast.Expr):
            return True
        func = _function_named(ctx, owner, callee, name)
        if isinstance(stmt, ast.Expr) and len(call.args) == 1 and not call.keywords and strip_helper(func):
            return True
        if _names_op(call, ref) or not blind_function(func, ref, returned=isinstance(stmt, ast.Assign)):
            return False


def _after_block(owner: ast.AST, stmts: list[ast.stmt], graph: str) -> tuple[list[ast.stmt], int] | None:
    """The statement list holding the `if` or `with` whose arm or body `stmts` is, and the
    block's index there; None when `stmts` is a function's body, or that of a loop (which
    may run the pass again before the strip), a `try` (whose handlers may run instead) or a
    `with` whose context manager is handed the graph (its exit may read it)."""
    first = stmts[0]
    for outer in statement_lists(owner):
        for index, block in enumerate(outer):
            if isinstance(block, ast.If) and any(arm and arm[0] is first for arm in (block.body, block.orelse)):
                return outer, index
            if isinstance(block, ast.With) and block.body[0] is first:
                return None if any(mentions_name(item, graph) for item in block.items) else (outer, index)
    return None


def _graph_call(stmt: ast.stmt, graph: str) -> ast.Call | None:
    """`f(graph, ...)` as a statement of its own, or bound to names other than the graph's."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
        return None
    if not value.args or not isinstance(value.args[0], ast.Name) or value.args[0].id != graph:
        return None
    if any(mentions_name(a, graph) for a in (*value.args[1:], *value.keywords)):
        return None
    if isinstance(stmt, ast.Assign) and not all(isinstance(t, ast.Name) and t.id != graph for t in stmt.targets):
        return None
    return value


def _function_named(ctx: FileContext, owner: ast.AST, name: str, qualname: str) -> ast.AST | None:
    """The function `name` calls in `owner`: one nested in it, the module's, a function of
    another module of the project as its import resolves, or else of an installed package
    (`installed_passes`)."""
    for stmts in statement_lists(owner):
        for stmt in stmts:
            if isinstance(stmt, _FUNCS) and stmt.name == name:
                return stmt
    func = ctx.scope.functions.get(name)
    if func is not None:
        return func
    module, _, attr = qualname.rpartition(".")
    if not module or name in ctx.scope.classes:
        return None
    path = ctx.project.find_module_in_check(module, ctx.path)
    if path is None:
        # Another library's pass: its installed source is what the call runs.
        from qlint.analysis.graphs.installed_passes import installed_function

        return installed_function(qualname, ctx)
    if os.path.abspath(path) == os.path.abspath(ctx.path):
        return None
    other = read_module(ctx, path)
    return other.scope.functions.get(attr) if other is not None else None


def _names_op(call: ast.Call, ref: OpRef) -> bool:
    """An argument spelling the inserted op: what the callee keys on is handed to it."""
    return any(
        (isinstance(n, ast.Attribute) and n.attr == ref.op)
        or (isinstance(n, ast.Constant) and isinstance(n.value, str) and ref.op in n.value)
        for a in (*call.args, *call.keywords)
        for n in ast.walk(a)
    )


def _imported_in(func: ast.AST, name: str) -> str | None:
    """What `from m import x` in the function itself binds `name` to (absolute imports only:
    a relative one is the project's)."""
    for node in ast.walk(func):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return f"{node.module}.{alias.name}"
    return None


def _callee(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name):
        return stmt.value.func.id
    return None


def named_elsewhere(ctx: FileContext, name: str) -> bool:
    """Whether another module of the project spells the pass's name (a caller there may not
    strip the graph). Kept per check: QL101 asked it of one private function of torch's
    `mkldnn_fusion.py` three times, each a scan of the project up to the first module naming it."""
    known = ctx.cache.setdefault(_NAMED_ELSEWHERE, {})
    if name not in known:
        known[name] = next(texts_naming(ctx, name), None) is not None
    return known[name]


_NAMED_ELSEWHERE = "stripped_later.named_elsewhere"

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
from qlint.analysis.graphs.namesakes import named_only_by_namesakes
from qlint.analysis.graphs.overload_spellings import writes_an_overload
from qlint.analysis.graphs.pattern_replacements import blind_rewrite
from qlint.analysis.graphs.project_scan import read_module, texts_naming
from qlint.analysis.graphs.strip_loops import calls_after_strip, strip_helper, strip_loop, torch_strip, upkeep
from qlint.analysis.names.functions import Body, bodies, module_function
from qlint.analysis.names.resolver import OpRef, Resolver, dotted_parts
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import mentions_name, name_loads, target_names, walk, walk_kinds

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Statements that cannot leave the statement list early nor hold another one.
SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Import, ast.ImportFrom, ast.Pass)


def stripped_after(ctx: FileContext, body: Body | None, ref: OpRef, expr: ast.expr) -> bool:
    """Whether the insertion of `ref` (at `expr`, in the function `body`) is made into the
    function's graph parameter, and every call of the function strips that graph's overloads
    next."""
    # No gate on the module's text: the strip may be a helper of another module.
    func = graph_parameter_pass(ctx, body, expr)
    # A pass nested in a function is called by that function alone: its calls are there.
    outer = None if func is not None else _nested_pass(ctx, body, expr)
    if outer is not None:
        func = body.node
    if func is None:
        return False
    calls = _calls_of(outer or ctx.tree, func.name)
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


def graph_parameter_pass(ctx: FileContext, body: Body | None, expr: ast.expr) -> ast.AST | None:
    """The module-level function `body` when the insertion at `expr` is made into its first
    parameter's graph: `gm.graph.call_function(op, ...)`, `gm.call_function(...)`, or the same
    on a local bound once to `gm.graph`, the parameter never bound anew. What its callers do
    with that graph next decides what the inserted node meets (`stripped_after`,
    `compiled_next.compiled_after`)."""
    func = module_function(body, ctx.scope)
    if func is None:
        return None
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    return func if params and _inserts_into(func, params[0], expr) else None


def _nested_pass(ctx: FileContext, body: Body | None, expr: ast.expr) -> ast.AST | None:
    """The function that `body` is a statement of, when `body` is a function inserting into
    its first parameter's graph (as `graph_parameter_pass` asks of a module's function)."""
    if body is None or not isinstance(body.node, _FUNCS) or body.node.decorator_list:
        return None
    func = body.node
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if not params or not _inserts_into(func, params[0], expr):
        return None
    for owner in bodies(ctx.tree, ctx.scope, ctx.cache):
        if isinstance(owner.node, _FUNCS) and any(func in stmts for stmts in statement_lists(owner.node)):
            return owner.node
    return None


_WALK = "_qlint_stripped_later_walk"


def inserts_into_parameter(func: ast.AST, param: str, expr: ast.expr) -> bool:
    """Whether the insertion at `expr` is made into the graph of `func`'s parameter `param`
    (`param.graph.call_function(op, ...)`, `param.call_function(...)`, or the same on a local
    bound once to `param.graph`), `param` never bound anew in `func`."""
    return _inserts_into(func, param, expr)


def _inserts_into(func: ast.AST, param: str, expr: ast.expr) -> bool:
    # One walk of the function, its bindings read once: asked of every reported insertion,
    # and kept on the function, which an editor's next check reuses while it is unchanged.
    nodes = kept_on_node(func, _WALK, walk)
    # The receiver first: a method's insertion into the graph of a module it is handed
    # (`model.graph.call_function(...)`, asked as `self`'s) is settled without the bindings.
    call = next((n for n in nodes if isinstance(n, ast.Call) and any(a is expr for a in n.args)), None)
    parts = dotted_parts(call.func.value) if call is not None and isinstance(call.func, ast.Attribute) else None
    if parts is None:
        return False
    if parts not in ([param], [param, "graph"]) and not any(
        isinstance(n, ast.Assign) and dotted_parts(n.value) == [param, "graph"] and parts[0] in _bound(n) for n in nodes
    ):
        return False  # neither the parameter's graph nor a local bound to it
    bound = [(node, _bound(node)) for node in nodes]
    aliases = {param}
    for node, targets in bound:
        for target in targets:
            if target == param:
                return False
            value = node.value if isinstance(node, ast.Assign) else None
            if dotted_parts(value) == [param, "graph"] and isinstance(node, ast.Assign) and len(node.targets) == 1:
                aliases.add(target)
    for alias in aliases - {param}:
        if sum(1 for _, targets in bound for t in targets if t == alias) != 1:
            return False
    return parts in ([param], [param, "graph"]) or parts[0] in aliases - {param}


def _bound(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in node.items]
    else:
        return []
    return [name for t in targets if t is not None for name in target_names(t)]


def _calls_of(tree: ast.Module, name: str) -> list[tuple[ast.AST, list[ast.stmt], int]] | None:
    """Each `name(x)` statement of the module: (the function holding it, its statement list,
    its index). None when the name is used otherwise (handed on, called in an expression, at
    module level): what runs it then is not known."""
    uses = name_loads(tree, name)
    if not uses:
        return None  # not even named: no walk (asked for every insertion into a graph parameter)
    sites = call_statements(tree).get(name, ())
    found = [(owner, stmts, i) for owner, stmts, i in sites if _call_statement(stmts[i], name) is not None]
    return found if found and len(uses) == len(found) else None


def call_statements(tree: ast.AST) -> dict[str, list[tuple[ast.AST, list[ast.stmt], int]]]:
    """The `f(...)` statements of the functions under `tree` (`tree` itself if one), by the
    name `f`: (the function, its statement list, the index), in `ast.walk` order of the
    functions. One walk, kept on `tree`, for every pass the check asks about (`_calls_of`,
    `compiled_next`). Shared: not to be changed."""
    return kept_on_node(tree, _CALL_STATEMENTS, _index_call_statements)


def _index_call_statements(tree: ast.AST) -> dict[str, list[tuple[ast.AST, list[ast.stmt], int]]]:
    found: dict[str, list[tuple[ast.AST, list[ast.stmt], int]]] = {}
    for owner in walk_kinds(tree, _FUNC_KINDS):
        for stmts in statement_lists(owner):
            for index, stmt in enumerate(stmts):
                if (
                    isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Call)
                    and isinstance(stmt.value.func, ast.Name)
                ):
                    found.setdefault(stmt.value.func.id, []).append((owner, stmts, index))
    return found


_CALL_STATEMENTS = "_qlint_call_statements"
_FUNC_KINDS = frozenset(_FUNCS)


def statement_lists(func: ast.AST) -> list[list[ast.stmt]]:
    """The statement lists of a function's own body (not of its nested functions)."""
    out = []
    todo = [func]
    while todo:
        node = todo.pop()
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            value = getattr(node, field, None)
            if not isinstance(value, list):
                continue
            stmts = [s for s in value if isinstance(s, ast.stmt)]
            if stmts:
                out.append(stmts)
            todo.extend(s for s in value if not isinstance(s, (*_FUNCS, ast.ClassDef, ast.Lambda)))
    return out


def _call_statement(stmt: ast.stmt, name: str) -> str | None:
    """The graph's name in `name(graph)` written as a statement of its own."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    if not (isinstance(call.func, ast.Name) and call.func.id == name):
        return None
    if call.args and isinstance(call.args[0], ast.Name):
        return call.args[0].id
    return None


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
    graph = _call_statement(stmts[index], _callee(stmts[index]))
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


def blind_pass(ctx: FileContext, name: str, ref: OpRef) -> bool:
    """A function of the module that never names the inserted op (so cannot be keyed on its
    overload) and hands its graph to no other function."""
    return blind_function(ctx.scope.functions.get(name), ref)


def blind_function(func: ast.AST | None, ref: OpRef, returned: bool = False) -> bool:
    """`blind_pass` of a function found (of the project or of an installed package); with
    `returned`, whose result is kept: it must not return its graph (a name for it the caller
    could hand on)."""
    if not isinstance(func, _FUNCS):
        return False
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if not params:
        return False
    for node in ast.walk(func):
        if _spells_op(node, ref, func):
            return False
        if isinstance(node, ast.Call) and _hands_on(node, params[0]):
            return False
        if (
            returned
            and isinstance(node, ast.Return)
            and node.value is not None
            and mentions_name(node.value, params[0])
        ):
            return False
    return True


def _spells_op(node: ast.AST, ref: OpRef, func: ast.AST) -> bool:
    """`x.<op>`, or a string holding the op's name that is not a docstring of `func` or of what
    it defines: a docstring is never a key (gaudi's `remove_duplicated_outputs` shows a graph of
    `add_.Tensor` nodes in its own, and keys on nothing but the output node)."""
    if isinstance(node, ast.Attribute):
        return node.attr == ref.op
    text = node.value if isinstance(node, ast.Constant) else None
    return isinstance(text, str) and ref.op in text and not any(d is node for d in _docstrings(func))


def _docstrings(func: ast.AST) -> list[ast.Constant]:
    """The docstrings of `func` and of the functions and classes defined in it."""
    found = []
    for node in ast.walk(func):
        body = node.body if isinstance(node, (*_FUNCS, ast.ClassDef)) else None
        first = body[0].value if body and isinstance(body[0], ast.Expr) else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            found.append(first)
    return found


def _hands_on(call: ast.Call, graph: str) -> bool:
    """`f(graph)`, `obj.save(graph)`, `f(x, module=graph)`, `legalize(graph.graph)`: the graph
    (or a part of it: its Graph, its nodes) an argument of a call, which may key on its nodes'
    overloads, export or serialise it; only the builtins that collect or count the nodes
    (`list(graph.graph.nodes)`) read nothing of them. A call of the graph's own methods
    (`graph.graph.lint()`) is not handed it, and such upkeep is what a blind pass may do."""
    if isinstance(call.func, ast.Name) and call.func.id in _COLLECTING:
        return False
    return any(mentions_name(value, graph) for value in (*call.args, *(k.value for k in call.keywords)))


# Builtins that only gather or count what they are handed.
_COLLECTING = frozenset({"list", "tuple", "len", "enumerate", "reversed", "iter", "set"})


def named_elsewhere(ctx: FileContext, name: str) -> bool:
    """Whether another module of the project spells the pass's name (a caller there may not
    strip the graph). Kept per check: QL101 asked it of one private function of torch's
    `mkldnn_fusion.py` three times, each a scan of the project up to the first module naming it."""
    known = ctx.cache.setdefault(_NAMED_ELSEWHERE, {})
    if name not in known:
        known[name] = next(texts_naming(ctx, name), None) is not None
    return known[name]


_NAMED_ELSEWHERE = "stripped_later.named_elsewhere"

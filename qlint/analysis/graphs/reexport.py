"""Evidence that a matcher sees graphs that carry overloads, for ops the installed stack
inserts as packets (torchao's `convert_pt2e` inserts `torch.ops.torchao.*_affine` packets).

Such a packet is right on a graph fresh from `convert_pt2e` and wrong on one exported again
(export, `to_edge`, `run_decompositions` turn it into `.default`). Only the module can tell
which one a matcher sees, so the evidence is read from it:
- the function holding the matcher, or one of the module's functions calling it, exports
  before the match with no `convert_pt2e` in between (a re-export, or an export of a model
  converted elsewhere);
- the function walks an exported program's graph (`ep.graph_module`, `exported_program()`)
  where the match can see it: before the match, in the statement holding it or a loop
  around it (code that runs only after the match decides nothing about the graph it saw).
Without evidence the matcher is taken to see fresh graphs, the form its author wrote.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.call_parts import call_arguments, callee_name, spans_any
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.tree_walk import own_nodes

# Calls that produce a graph from a module or program: its nodes carry overloads.
_EXPORTS = frozenset(
    {
        "export",
        "export_for_training",
        "export_for_inference",
        "_export",
        "to_edge",
        "to_edge_transform_and_lower",
        "run_decompositions",
        "capture_pre_autograd_graph",
    }
)
_CONVERTS = frozenset({"convert_pt2e", "_convert_to_reference_decomposed_fx"})
# Attributes through which a function reaches an exported program's graph.
_EXPORTED = frozenset({"graph_module", "exported_program"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def sees_overloads(ctx: FileContext, body: Body, row: int) -> bool:
    """Whether the matcher of `body` at `row` sees graphs whose nodes carry overloads."""
    funcs = _enclosing(ctx, body.node)
    if not funcs:
        return _exported_into(ctx.tree.body, row, None)  # module-level code
    for func in funcs:
        # A function around the one holding the match may call it after any of its reads.
        if _reads_exported(func, row if func is funcs[0] else None) or _exported_into(func.body, row, None):
            return True
    # The module's own callers of the function (`f(...)`, `self.f(...)`), one level up:
    # an export counts there when what it made is handed to the call.
    # Only functions spanning a row that holds the name can call it by that name.
    name = funcs[-1].name
    rows = sorted(ctx.lines_containing(name))
    for caller in _functions(ctx):
        if caller not in funcs and spans_any(caller, rows):
            for call in _calls_of(caller, name):
                if _exported_into(caller.body, call.lineno, call) or _on_exported(caller, call):
                    return True
    return False


def _enclosing(ctx: FileContext, node: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The function `node` is (none at module level) and the functions around it, innermost first."""
    if not isinstance(node, _FUNCS):
        return []
    chain = [f for f in _functions(ctx) if f.lineno <= node.lineno <= f.end_lineno]
    return sorted(chain, key=lambda f: -f.lineno)


def _functions(ctx: FileContext) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function of the module, from the statement split the rules share (a function
    is a statement: no expression walk finds one it misses)."""
    return [b.node for b in bodies(ctx.tree, ctx.scope, ctx.cache) if isinstance(b.node, _FUNCS)]


def _exported_into(stmts: list[ast.stmt], row: int, call: ast.Call | None) -> bool:
    """Whether the last export or convert written before `row` is an export whose result
    reaches the match: read after it in these statements, or (for a caller) handed to `call`."""
    if call is not None and any(_outermost_is_export(a) for a in call_arguments(call)):
        return True
    last: tuple | None = None  # (end of the call, whether it exports, its statement, the call)
    for stmt in own_nodes(stmts, scopes=False):
        if not isinstance(stmt, ast.stmt) or isinstance(stmt, _COMPOUND):
            continue
        for node in own_nodes([stmt], scopes=False):
            # An inner call completes first: `convert_pt2e(prepare_pt2e(export(m)))` converts last.
            if isinstance(node, ast.Call) and node.lineno < row and callee_name(node) in _EXPORTS | _CONVERTS:
                end = (node.end_lineno, node.end_col_offset)
                if last is None or end > last[0]:
                    last = (end, callee_name(node) in _EXPORTS, stmt, node)
    if last is None or not last[1]:
        return False
    stmt, export = last[2], last[3]
    if call is not None and any(n is export for a in call_arguments(call) for n in ast.walk(a)):
        return True
    bound = {".".join(p) for t in _targets(stmt) if (p := dotted_parts(t))}
    if not bound:
        return False
    if call is not None:
        readers = [call_arguments(call)]
    else:
        readers = [[n] for n in own_nodes(stmts, scopes=False) if stmt.end_lineno < getattr(n, "lineno", 0) <= row]
    for exprs in readers:
        for expr in exprs:
            for n in ast.walk(expr):
                if isinstance(n, (ast.Name, ast.Attribute)) and ".".join(dotted_parts(n) or ()) in bound:
                    return True
    return False


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match)


def _outermost_is_export(expr: ast.expr) -> bool:
    """`export(convert_pt2e(m)).module()`: the first export or convert met from the outside."""
    stack = [expr]
    while stack:
        node = stack.pop(0)
        if isinstance(node, ast.Call) and callee_name(node) in _EXPORTS | _CONVERTS:
            return callee_name(node) in _EXPORTS
        stack.extend(ast.iter_child_nodes(node))
    return False


def _targets(stmt: ast.stmt) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets)
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
        return [stmt.target]
    return []


def _reads_exported(func: ast.AST, row: int | None) -> bool:
    """Whether `func` reads an exported program's graph (`<ep>.graph_module`,
    `<mgr>.exported_program()`) where the match at `row` can see it: on a row before it, in
    the statement holding it (`[n.target == P for n in ep.graph_module.graph.nodes]` spans
    rows) or in a loop around it (a later iteration matches what the read gave). A read on a
    later row outside these runs after the match, on whatever graph it reads (ExecuTorch's
    llama export prints each lowered program's graph after folding fresh converted ones),
    unless it reads the program whose graph the match walks (`_walked_program`).
    With `row` None every read counts."""
    nodes = own_nodes(func, scopes=False)
    reads = [n for n in nodes if isinstance(n, ast.Attribute) and n.attr in _EXPORTED]
    if row is None or any(n.lineno <= row for n in reads):
        return bool(reads)
    spans = [part for s in nodes if isinstance(s, ast.stmt) for part in _run_with(s, row)]
    if any(a.lineno <= n.lineno <= a.end_lineno for a in spans for n in reads):
        return True
    return _walked_program(nodes, row, reads)


_COMPS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _walked_program(nodes: list[ast.AST], row: int, reads: list[ast.Attribute]) -> bool:
    """Whether a read after the match is of the very object whose graph the match walks:
    `for n in ep.graph.nodes` around the match, then `ep.graph_module` with `ep` not bound
    again in between. What has a `graph_module` is an exported program, and so is the graph
    walked (the same object, read later)."""
    owners = set()
    for n in nodes:
        if isinstance(n, (ast.For, ast.AsyncFor)) and n.lineno <= row <= n.end_lineno:
            iters = [n.iter]
        elif isinstance(n, _COMPS) and n.lineno <= row <= n.end_lineno:
            iters = [g.iter for g in n.generators]
        else:
            continue
        for it in iters:
            parts = dotted_parts(it)
            if parts and len(parts) > 2 and parts[-2:] == ["graph", "nodes"]:
                owners.add(tuple(parts[:-2]))
    for read in reads:
        base = dotted_parts(read.value)
        if base and tuple(base) in owners and not _bound(nodes, base, row, read.lineno):
            return True
    return False


def _bound(nodes: list[ast.AST], dotted: list[str], after: int, until: int) -> bool:
    """Whether `a.b.c` (or `a.b`, or `a`) is bound again on a row in (`after`, `until`]."""
    for n in nodes:
        if isinstance(n, (ast.Name, ast.Attribute)) and not isinstance(n.ctx, ast.Load) and after < n.lineno <= until:
            parts = dotted_parts(n)
            if parts and parts == dotted[: len(parts)]:
                return True
    return False


def _run_with(stmt: ast.stmt, row: int) -> list[ast.AST]:
    """The parts of `stmt` holding `row` whose every row may run before the code on `row`
    does: a whole loop, a whole simple statement, a compound statement's header (its body
    runs after the test, its `else`/`except`/`finally` after its body)."""
    if not stmt.lineno <= row <= stmt.end_lineno:
        return []
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
        return [stmt]
    if isinstance(stmt, ast.If):
        parts = [stmt.test]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        parts = [i.context_expr for i in stmt.items]
    elif isinstance(stmt, ast.Match):
        parts = [stmt.subject]
    elif hasattr(stmt, "body"):  # try (and try*): nothing before its body
        parts = []
    else:
        parts = [stmt]
    return [p for p in parts if p.lineno <= row <= p.end_lineno]


def _on_exported(func: ast.AST, call: ast.Call) -> bool:
    """Whether the call runs on an exported program's nodes: the statement holding it, or a
    loop around it, walks `<ep>.graph_module` (`f(n) for n in ep.graph_module.graph.nodes`)."""
    for stmt in own_nodes(func, scopes=False):
        if isinstance(stmt, ast.stmt) and stmt.lineno <= call.lineno <= stmt.end_lineno:
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                scope = [stmt.iter]
            elif isinstance(stmt, _COMPOUND):
                continue
            else:
                scope = [stmt]
            if any(isinstance(n, ast.Attribute) and n.attr in _EXPORTED for e in scope for n in ast.walk(e)):
                return True
    return False


def _calls_of(func: ast.AST, name: str) -> list[ast.Call]:
    out = []
    for node in own_nodes(func, scopes=False):
        if isinstance(node, ast.Call):
            parts = dotted_parts(node.func)
            if parts and parts[-1] == name and (len(parts) == 1 or parts[0] in ("self", "cls")):
                out.append(node)
    return out


def never_runs(ctx: FileContext, body: Body) -> bool:
    """A function defined inside another one that never names it (not called, not passed
    on, not decorated into a registry): its body cannot run, whatever it compares."""
    func = body.node
    if not isinstance(func, _FUNCS) or func.decorator_list:
        return False
    outer = [f for f in _enclosing(ctx, func) if f is not func]
    if not outer or func not in outer[0].body:
        return False
    return not any(
        isinstance(n, ast.Name) and n.id == func.name and not isinstance(n.ctx, ast.Store) for n in ast.walk(outer[0])
    )

"""An insertion made after the function read Dynamo's `_param_name_to_source` off the graph
module (QL102).

Dynamo sets `gm._param_name_to_source` on the `GraphModule` it hands a `torch.compile`
backend (`OutputGraph`, just before it calls the backend; DDP's graph splitter copies it to the
pieces) and `torch.export`'s Dynamo front end deletes it before the graph becomes a program:
no other graph module has it (checked on torch 2.13). A statement that reads it without a guard
raises `AttributeError` on any other graph, so an insertion that runs only after such a read,
on the same path, goes into Dynamo's output graph (pytorch-shir's instruction selection, which
registers each new parameter there). Dynamo's graph records a packet the user's code called as
that packet and holds torch-level calls no ATen matcher knows: whatever keys on overloads traces
it first (AOT autograd, export, `make_fx`), and the trace dispatches the packet to its overload.

Only a read the insertion cannot run without counts: a simple statement (an assignment, an
expression, a `del`; not an `assert`, which `python -O` drops) of a block that holds the
insertion, before it, reading `M._param_name_to_source` where the evaluation cannot skip it (not
under a lambda, a comprehension, a conditional expression or the right of `and`/`or`), or calling
a function nested in this one whose top-level simple statements, before any other statement, so
read it. `M` is a parameter of the function that no code of it (nested functions included)
rebinds, and the insertion is `G.call_function(packet, ...)` / `G.create_node(..., packet, ...)`
or `n.target = packet` for `n` the variable of an enclosing loop over `G.nodes`, where `G` is
`M.graph` or a name bound once, to `M.graph`. `getattr(M, "_param_name_to_source", None)` and
`hasattr` read nothing: such code runs on any graph.
"""

from __future__ import annotations

import ast

from qlint.analysis.graphs.dynamo_meta_guards import walked_graph
from qlint.analysis.names.functions import Body
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.tree_walk import block_spans

_ATTR = "_param_name_to_source"
_INSERTS = frozenset({"call_function", "create_node"})
_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Delete)
# Statements a nested function may open with before its read: they bind nothing of the graph
# module, and an `assert` that fails ends the call (and so the insertion after it) at once.
_PREAMBLE = (ast.Import, ast.ImportFrom, ast.Nonlocal, ast.Global, ast.Pass, ast.Assert)


def inserted_after_dynamo_attribute(body: Body | None, node: ast.expr) -> bool:
    """Whether the packet `node` goes into the graph of a graph-module parameter `M` only after
    a read of `M._param_name_to_source` that the insertion cannot run without."""
    if body is None or not isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    func = body.node
    if _ATTR not in {n.attr for n in ast.walk(func) if isinstance(n, ast.Attribute)}:
        return False  # most passes: nothing to look for
    stored = _stores(func)
    graph = _inserting_graph(func, node, stored)
    module = _graph_owner(func, graph, stored) if graph is not None else None
    if module is None:
        return False
    nested = {s.name: s for s in func.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    readers = {name for name, f in nested.items() if stored.get(name) == 1 and _opens_with_read(f, module)}
    return _after_read(func.body, node.lineno, module, readers)


def _inserting_graph(func: ast.AST, node: ast.expr, stored: dict[str, int]) -> str | None:
    """`G` (as written) of `G.call_function(node, ...)` / `G.create_node(..., node, ...)`, or of
    `n.target = node` inside a loop over `G.nodes` whose variable `n` nothing else binds."""
    for stmt in ast.walk(func):
        if (
            isinstance(stmt, ast.Call)
            and isinstance(stmt.func, ast.Attribute)
            and stmt.func.attr in _INSERTS
            and (any(arg is node for arg in stmt.args) or any(kw.value is node for kw in stmt.keywords))
        ):
            return ast.unparse(stmt.func.value)
        if isinstance(stmt, ast.Assign) and stmt.value is node and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Attribute) and target.attr == "target" and isinstance(target.value, ast.Name):
                return _loop_graph(func, target.value.id, node.lineno, stored)
    return None


def _loop_graph(func: ast.AST, name: str, row: int, stored: dict[str, int]) -> str | None:
    """`G` of the loop `for name in G.nodes` whose body holds `row`, when that loop is the one
    binding of `name` in the function."""
    if stored.get(name) != 1:
        return None
    for loop in ast.walk(func):
        if (
            isinstance(loop, (ast.For, ast.AsyncFor))
            and isinstance(loop.target, ast.Name)
            and loop.target.id == name
            and block_spans(loop.body, row)
        ):
            return walked_graph(loop)
    return None


def _graph_owner(func: ast.FunctionDef | ast.AsyncFunctionDef, graph: str, stored: dict[str, int]) -> str | None:
    """The parameter `M` that nothing in the function rebinds, with `G` = `M.graph` (as written)
    or a local name bound once, to `M.graph`."""
    params = {a.arg for a in parameter_args(func, star=False)}
    unbound = {p for p in params if stored.get(p, 0) == 0}
    if graph.endswith(".graph") and graph[: -len(".graph")] in unbound:
        return graph[: -len(".graph")]
    if not graph.isidentifier() or stored.get(graph, 0) != 1:
        return None
    for stmt in ast.walk(func):
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == graph
        ):
            value = stmt.value
            if isinstance(value, ast.Attribute) and value.attr == "graph" and isinstance(value.value, ast.Name):
                return value.value.id if value.value.id in unbound else None
    return None


def _stores(func: ast.AST) -> dict[str, int]:
    """How many times each name is bound anywhere in `func`, nested functions included (a
    nested function's own parameters count too: they shadow the name there)."""
    counts: dict[str, int] = {}
    own = {id(a) for a in parameter_args(func)}
    for n in ast.walk(func):
        names: list[str] = []
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names = [n.id]
        elif isinstance(n, ast.arg) and id(n) not in own:
            names = [n.arg]
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names = [(a.asname or a.name).partition(".")[0] for a in n.names]
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not func:
            names = [n.name]
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return counts


def _opens_with_read(func: ast.FunctionDef | ast.AsyncFunctionDef, module: str) -> bool:
    """A nested function whose top-level simple statements, before any other kind, read
    `module._param_name_to_source` unskippably (and that binds no parameter of that name)."""
    if module in {a.arg for a in parameter_args(func)}:
        return False
    for stmt in func.body:
        if isinstance(stmt, _PREAMBLE):
            continue
        if not isinstance(stmt, _SIMPLE):
            return False
        if _reads(stmt, module):
            return True
    return False


def _after_read(block: list[ast.stmt], row: int, module: str, readers: set[str]) -> bool:
    """Walk down the statements holding `row` to it: true when a simple statement before it in
    one of those blocks reads the attribute."""
    for i, stmt in enumerate(block):
        if not (stmt.lineno <= row <= (stmt.end_lineno or stmt.lineno)):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return False  # runs when called, not after the reads around it
        if any(isinstance(s, _SIMPLE) and _reads(s, module, readers) for s in block[:i]):
            return True
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and block_spans(inner, row):
                blocks = [h.body for h in inner] if field == "handlers" else [inner]
                return any(block_spans(b, row) and _after_read(b, row, module, readers) for b in blocks)
        return False
    return False


def _reads(stmt: ast.stmt, module: str, readers: set[str] | frozenset[str] = frozenset()) -> bool:
    """The statement's evaluation cannot skip a read of `module._param_name_to_source` (or a
    call of a nested function that opens with one)."""
    return any(_is_read(n, module, readers) for n in _unskipped(stmt))


def _is_read(n: ast.AST, module: str, readers: set[str]) -> bool:
    if isinstance(n, ast.Attribute) and n.attr == _ATTR:
        return isinstance(n.value, ast.Name) and n.value.id == module
    return isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in readers


def _unskipped(node: ast.AST):
    """The nodes under `node` whose evaluation always runs when `node`'s does."""
    yield node
    if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        if node.generators:
            yield from _unskipped(node.generators[0].iter)
        return
    if isinstance(node, ast.IfExp):
        yield from _unskipped(node.test)
        return
    if isinstance(node, ast.BoolOp):
        yield from _unskipped(node.values[0])
        return
    for child in ast.iter_child_nodes(node):
        yield from _unskipped(child)

"""Strip loops a project writes itself (QL101, QL102): a loop over a graph's nodes that sets every
overload target to its packet, as torch's `strip_overloads` does (backends that lower to
TorchScript copy it: `torch.jit.script` wants packets). Recognised by what the loop does,
whatever the function holding it is called:

    for n in gm.graph.nodes:                        # or `gm.nodes`, `list(gm.graph.nodes)`
        if isinstance(n.target, torch._ops.OpOverload):
            n.target = n.target.overloadpacket

The guard may only narrow to overloads (`isinstance(n.target, ...OpOverload)`,
`hasattr(n.target, "overloadpacket")`) or to calls (`n.op == "call_function"`), alone,
joined by `and`, or nested: any other test (an op, a name, a set) strips only some nodes, and
the rest keep their overloads. Nothing else may run in the loop, nor an `else` of a guard
(the inserted packet, not an overload, is exactly what reaches it).

Also here: the graph upkeep that reads no node's target (`gm.recompile()`,
`gm.graph.lint()`, ...), which may run between an insertion and the strip.
And torch's own `strip_overloads`, known by where its import resolves (`torch_strip`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.flow.model_torch_nn import SELF_RETURNING_METHODS
from qlint.analysis.names.resolver import dotted_parts

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_STRIP = "strip_overloads"
# How a function's names resolve (`Resolver.qualname`).
Qualname = Callable[[ast.expr], "str | None"]
# GraphModule and Graph methods that regenerate code, check or prune the graph, never keyed on
# an op: `eliminate_dead_code` asks a packet's purity through its `.default` (torch 2.13's
# `is_impure`), as it asks the overload's.
_UPKEEP = {("recompile",), ("graph", "recompile"), ("graph", "lint"), ("graph", "eliminate_dead_code")}
_UPKEEP_WITH_ARGS = {("graph", "set_codegen")}


def strip_loop(stmt: ast.stmt, graph: str) -> bool:
    """Whether `stmt` is a loop over the nodes of `graph` (a GraphModule's name, or a Graph's)
    that sets every overload target to its packet."""
    if not isinstance(stmt, ast.For) or stmt.orelse or not isinstance(stmt.target, ast.Name):
        return False
    if not _nodes_of(stmt.iter, graph):
        return False
    return _strips_all(stmt.body, stmt.target.id)


def strip_helper(func: ast.AST) -> bool:
    """Whether `func` strips its first parameter's graph: its body is a strip loop over it,
    with at most a docstring and graph upkeep around."""
    if not isinstance(func, _FUNCS) or func.decorator_list:
        return False
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if not params:
        return False
    loops = 0
    for stmt in func.body:
        if strip_loop(stmt, params[0]):
            loops += 1
        elif not (_docstring(stmt) or upkeep(stmt, params[0])):
            return False
    return loops == 1


def own_strip(func: ast.AST, module_functions: dict, qualname: Qualname | None = None) -> tuple[int, str] | None:
    """The line and graph of a statement of `func`'s own body (not in a branch or loop) that
    strips that graph: `h(g)` with `h` a strip helper nested in `func` or of the module, or,
    given `qualname` (how the function's names resolve), torch's own `strip_overloads`."""
    if not isinstance(func, _FUNCS):
        return None
    nested = {s.name: s for s in func.body if isinstance(s, _FUNCS)}
    for stmt in func.body:
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            continue
        call = stmt.value
        if not isinstance(call.func, ast.Name) or len(call.args) != 1 or call.keywords:
            continue
        if not isinstance(call.args[0], ast.Name):
            continue
        helper = nested.get(call.func.id) or module_functions.get(call.func.id)
        if strip_helper(helper):
            return stmt.lineno, call.args[0].id
        # The project's own function of that name may do anything: only an import counts.
        if helper is None and qualname is not None and torch_strip(qualname(call.func) or ""):
            return stmt.lineno, call.args[0].id
    return None


def torch_strip(name: str) -> bool:
    """Whether the qualified `name` is torch's `strip_overloads` (`torch._functorch.compile_utils`,
    re-exported by `functorch.compile`), not a project function of that name."""
    return name.rpartition(".")[2] == _STRIP and name.partition(".")[0] in ("torch", "functorch")


def calls_after_strip(
    func: ast.AST, module_functions: dict, calls: list[ast.Call], qualname: Qualname | None = None
) -> tuple[list, list] | None:
    """`calls` (made in `func`'s own body) split into those that may see its graph before
    `own_strip` stripped it, and those made on the stripped graph after it: the graph is
    their first argument, bound since only to itself through a module method that returns
    the module (`g = g.half()`), or to what the call itself returns (`g = run_pass(g)`: the
    binding comes after the call). None when `func` strips no graph of its own."""
    strip = own_strip(func, module_functions, qualname)
    if strip is None:
        return None
    line, graph = strip
    rebound = [
        n
        for n in ast.walk(func)
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr))
        and n.lineno > line
        and not keeps_module(n, graph)
        and any(isinstance(t, ast.Name) and t.id == graph and isinstance(t.ctx, ast.Store) for t in ast.walk(n))
    ]
    # A loop holding both the call and a binding runs the call again on what was bound.
    loops = [
        (n.lineno, n.end_lineno or n.lineno)
        for n in ast.walk(func)
        if isinstance(n, (ast.For, ast.AsyncFor, ast.While))
        and any(n.lineno <= r.lineno <= (n.end_lineno or n.lineno) for r in rebound)
    ]
    before, after = [], []
    for call in calls:
        on_graph = bool(call.args) and isinstance(call.args[0], ast.Name) and call.args[0].id == graph
        fresh = not any(line < r.lineno <= call.lineno and not _binds_result(r, call) for r in rebound) and not any(
            a <= call.lineno <= b for a, b in loops
        )
        if call.lineno > line and on_graph and fresh:
            after.append(call)
        elif call.lineno <= line:
            before.append(call)
    return before, after


def _binds_result(node: ast.AST, call: ast.Call) -> bool:
    """`g = call(...)`: the binding of what `call` returns, made once it has run."""
    return isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is call


def keeps_module(node: ast.AST, graph: str) -> bool:
    """`g = g.half()` and the like."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)):
        return False
    target, func = node.targets[0], node.value.func
    return (
        isinstance(target, ast.Name)
        and target.id == graph
        and isinstance(func, ast.Attribute)
        and func.attr in SELF_RETURNING_METHODS  # the module itself, so its graph
        and isinstance(func.value, ast.Name)
        and func.value.id == graph
    )


def upkeep(stmt: ast.stmt, graph: str) -> bool:
    """`graph.recompile()`, `graph.graph.lint()` and the like as a statement of its own,
    with no argument that mentions the graph."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return False
    call = stmt.value
    parts = dotted_parts(call.func)
    if not parts or parts[0] != graph:
        return False
    method = tuple(parts[1:])
    if call.keywords or call.args:
        if method not in _UPKEEP_WITH_ARGS:
            return False
        return not any(isinstance(n, ast.Name) and n.id == graph for a in call.args for n in ast.walk(a))
    return method in _UPKEEP or method in _UPKEEP_WITH_ARGS


def _nodes_of(expr: ast.expr, graph: str) -> bool:
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("list", "tuple"):
        if len(expr.args) != 1 or expr.keywords:
            return False
        expr = expr.args[0]
    return dotted_parts(expr) in ([graph, "graph", "nodes"], [graph, "nodes"])


def _strips_all(body: list[ast.stmt], node: str) -> bool:
    if len(body) != 1:
        return False
    stmt = body[0]
    if isinstance(stmt, ast.If):
        return not stmt.orelse and _narrows(stmt.test, node) and _strips_all(stmt.body, node)
    return _sets_packet(stmt, node)


def _sets_packet(stmt: ast.stmt, node: str) -> bool:
    """`node.target = node.target.overloadpacket`."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return False
    return dotted_parts(stmt.targets[0]) == [node, "target"] and dotted_parts(stmt.value) == [
        node,
        "target",
        "overloadpacket",
    ]


def _narrows(test: ast.expr, node: str) -> bool:
    """A test that lets every overload target through: to overloads, or to calls."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return all(_narrows(v, node) for v in test.values)
    if isinstance(test, ast.Compare):
        return _is_call_function(test, node)
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and len(test.args) == 2):
        return False
    subject, what = test.args
    if dotted_parts(subject) != [node, "target"] or test.keywords:
        return False
    if test.func.id == "hasattr":
        return isinstance(what, ast.Constant) and what.value == "overloadpacket"
    if test.func.id == "isinstance":
        kinds = what.elts if isinstance(what, ast.Tuple) else [what]
        return any((dotted_parts(k) or [""])[-1] == "OpOverload" for k in kinds)
    return False


def _is_call_function(test: ast.Compare, node: str) -> bool:
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    return any(dotted_parts(s) == [node, "op"] for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "call_function" for s in sides
    )


def _docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)

"""Packets inserted by a pass whose every caller hands the graph to `torch.compile` next (QL102).

`torch.compile(gm)` has Dynamo trace the GraphModule's generated code, where a node whose
target is a packet is a call of that packet: Dynamo records it as it records a user's call
of the packet, the form a backend's passes expect before AOT autograd re-traces it to an
overload (`dynamo_graph_passes`). A pass whose graph is compiled next, with nothing that could
be keyed on the op's overload reading the graph in between, inserts what the graph would hold
had the user called the packet.

Callers are read as `stripped_later` reads them, with one more shape: a method of a class
runs the pass on `self.<field>`, set in `__init__` from a parameter and nowhere else (a
replacer object); its callers are then the constructions of the class in the project, each
bound to a local whose one use is the call of that method in the next statement, and the
graph is what the construction was given. From the call on, in the same function (out of
`if` and `with` bodies), the graph may be read only by the module's passes that never name
the op, by logging, and by methods that only print it or keep it for export
(`graph_readers`), until a statement (or every branch of an `if`) hands it to
`torch.compile`. A branch that may return first, a loop, any other use of the graph, and
the finding stands.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import graph_readers, init_fields
from qlint.analysis.graphs.blind_passes import blind_pass
from qlint.analysis.graphs.call_statements import SIMPLE, call_sites, statement_lists
from qlint.analysis.graphs.graph_parameter_passes import graph_parameter_pass
from qlint.analysis.graphs.graph_readers import dotted_name, mentions
from qlint.analysis.names.functions import Body
from qlint.analysis.names.op_refs import OpRef
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.tree_walk import name_loads

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPILE = "torch.compile"
_EXITS = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def compiled_after(ctx: FileContext, body: Body | None, ref: OpRef, expr: ast.expr) -> bool:
    """Whether the insertion of `ref` (at `expr`) is made into the graph parameter of the
    module-level function `body`, and every call of that function is followed by handing
    the graph to `torch.compile` (above)."""
    func = graph_parameter_pass(ctx, body, expr)
    if func is None:
        return False
    sites = _call_sites(ctx.tree, func.name)
    if not sites:
        return False
    for owner, stmt, graph in sites:
        if not _held_site(ctx, owner, stmt, graph, ref):
            return False
    return func.name.startswith("_") or not init_fields.modules_naming(ctx, func.name)


def _call_sites(tree: ast.Module, name: str) -> list[tuple[ast.AST, ast.stmt, str]] | None:
    """(function, statement, graph) for each `name(graph)` statement of the module, the graph
    a local or `self.<field>`; None when the name is used otherwise."""
    uses = len(name_loads(tree, name))
    if not uses:
        return None
    found = []
    for owner, stmts, index in call_sites(tree, name):
        graph = _pass_statement(stmts[index], name)
        if graph is not None:
            found.append((owner, stmts[index], graph))
    return found if found and uses == len(found) else None


def _pass_statement(stmt: ast.stmt, name: str | None) -> str | None:
    """The graph `g` (a name or `self.<field>`) of `name(g)` written as a statement, the
    function named directly."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return None
    call = stmt.value
    if not isinstance(call.func, ast.Name) or (name is not None and call.func.id != name):
        return None
    if len(call.args) != 1 or call.keywords:
        return None
    parts = dotted_parts(call.args[0])
    if parts is None or not (len(parts) == 1 or (len(parts) == 2 and parts[0] == "self")):
        return None
    return ".".join(parts)


def _held_site(ctx: FileContext, owner: ast.AST, stmt: ast.stmt, graph: str, ref: OpRef) -> bool:
    if not graph.startswith("self."):
        return _compiled_next(ctx, owner, stmt, graph, ref, None)
    cls = _method_class(ctx.tree, owner)
    if cls is None or owner.name == "__init__" or owner.decorator_list:
        return False
    param = init_fields.init_parameter(ctx.tree, cls, graph.partition(".")[2])
    if param is None or not _runs_to_end(ctx, owner, stmt, graph, ref):
        return False
    found = init_fields.constructions(ctx, cls)
    if not found:
        return False
    try:
        for other, call in found:
            given = init_fields.argument(call, param)
            parts = dotted_parts(given) if given is not None else None
            run = _method_call_after(other, call, owner.name)
            if parts is None or run is None:
                return False
            func, after = run
            if not _compiled_next(other, func, after, ".".join(parts), ref, _method_class(other.tree, func)):
                return False
        return True
    finally:
        # What the constructing modules' questions read is what this check's answer depends on.
        for other in {id(o): o for o, _ in found if o is not ctx}.values():
            ctx.project.hand_over_dependencies(other.path, ctx.path)


def _method_class(tree: ast.Module, func: ast.AST) -> ast.ClassDef | None:
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef) and func in cls.body:
            return cls
    return None


def _method_call_after(ctx: FileContext, call: ast.Call, method: str) -> tuple[ast.AST, ast.stmt] | None:
    """(function, statement) of `v.method()` right after `v = Class(...)` (`v` used nowhere
    else), or of `Class(...).method()` as a statement."""
    for func in ast.walk(ctx.tree):
        if not isinstance(func, _FUNCS):
            continue
        for stmts in statement_lists(func):
            for index, stmt in enumerate(stmts):
                if _is_method_call(stmt, method, call):
                    return func, stmt
                if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1):
                    continue
                target = stmt.targets[0]
                if not isinstance(target, ast.Name) or index + 1 >= len(stmts):
                    return None
                name = target.id
                uses = [n for n in ast.walk(func) if isinstance(n, ast.Name) and n.id == name]
                after = stmts[index + 1]
                if len(uses) == 2 and _is_method_call(after, method, name):
                    return func, after
                return None
    return None


def _is_method_call(stmt: ast.stmt, method: str, receiver: ast.expr | str) -> bool:
    """`<receiver>.method()` as a statement: that expression, or a local of that name."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    func = call.func
    if call.args or call.keywords or not isinstance(func, ast.Attribute) or func.attr != method:
        return False
    return func.value is receiver if isinstance(receiver, ast.expr) else dotted_name(func.value) == receiver


def _following(func: ast.AST, stmt: ast.stmt) -> list[ast.stmt] | None:
    """The statements that run after `stmt` in its function, out of the `if`/`with` bodies
    holding it; None when a loop or `try` holds it (it may run again, or not to the end)."""
    path = _path(func.body, stmt)
    if path is None:
        return None
    out: list[ast.stmt] = []
    for stmts, index in reversed(path):
        out.extend(stmts[index + 1 :])
    return out


def _path(stmts: list[ast.stmt], target: ast.stmt) -> list[tuple[list[ast.stmt], int]] | None:
    for index, stmt in enumerate(stmts):
        if stmt is target:
            return [(stmts, index)]
        if isinstance(stmt, ast.If):
            branches = [stmt.body, stmt.orelse]
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            branches = [stmt.body]
        else:
            continue
        for branch in branches:
            inner = _path(branch, target)
            if inner is not None:
                return [(stmts, index), *inner]
    return None


def _runs_to_end(ctx: FileContext, func: ast.AST, stmt: ast.stmt, graph: str, ref: OpRef) -> bool:
    """After the pass, the method only reads the graph harmlessly, and gives it to nothing."""
    rest = _following(func, stmt)
    return rest is not None and all(_harmless(ctx, s, graph, ref, None) for s in rest)


def _compiled_next(
    ctx: FileContext, func: ast.AST, stmt: ast.stmt, graph: str, ref: OpRef, cls: ast.ClassDef | None
) -> bool:
    rest = _following(func, stmt)
    if rest is None:
        return False
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable)

    def compiles(call: ast.Call) -> bool:
        return resolver.qualname(call.func) == _COMPILE or _compiled_by_field(ctx, cls, call)

    for after in rest:
        if _compiles(after, graph, compiles):
            return True
        if not _harmless(ctx, after, graph, ref, cls):
            return False
    return False


def _compiled_by_field(ctx: FileContext, cls: ast.ClassDef | None, call: ast.Call) -> bool:
    """`self.<field>.<method>(graph)`, the field holding a construction of a project class
    whose method hands its graph parameter to `torch.compile` before anything else reads it."""
    func = call.func
    parts = dotted_parts(func.value) if isinstance(func, ast.Attribute) else None
    if cls is None or parts is None or len(parts) != 2 or parts[0] != "self" or len(call.args) != 1:
        return False
    found = init_fields.constructed_method(ctx, cls, parts[1], func.attr)
    if found is None:
        return False
    other, method = found
    params = [a.arg for a in (*method.args.posonlyargs, *method.args.args)][1:]
    if not params:
        return False
    resolver = Resolver(other.scope, other.project, other.optable)
    return _first_compiles(method.body, params[0], lambda c: resolver.qualname(c.func) == _COMPILE)


def _compiles(stmt: ast.stmt, graph: str, compiles) -> bool:
    """`x = torch.compile(graph, ...)` (or returned), also in a `with` body, or in every
    branch of an `if` whose test does not read the graph, each the first statement there to
    read it; `compiles` tells whether a call of the graph compiles it."""
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return not any(mentions(i, graph) for i in stmt.items) and _first_compiles(stmt.body, graph, compiles)
    if isinstance(stmt, ast.If):
        return (
            bool(stmt.orelse)
            and not mentions(stmt.test, graph)
            and _first_compiles(stmt.body, graph, compiles)
            and _first_compiles(stmt.orelse, graph, compiles)
        )
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr, ast.Return)) else None
    return isinstance(value, ast.Call) and bool(value.args) and dotted_name(value.args[0]) == graph and compiles(value)


def _first_compiles(stmts: list[ast.stmt], graph: str, compiles) -> bool:
    for stmt in stmts:
        if _compiles(stmt, graph, compiles):
            return True
        if mentions(stmt, graph) or any(isinstance(n, _EXITS) for n in ast.walk(stmt)):
            return False
    return False


def _harmless(ctx: FileContext, stmt: ast.stmt, graph: str, ref: OpRef, cls: ast.ClassDef | None) -> bool:
    """A statement that cannot leave early and reads the graph, if at all, harmlessly."""
    if isinstance(stmt, ast.If):
        return not mentions(stmt.test, graph) and all(
            _harmless(ctx, s, graph, ref, cls) for s in (*stmt.body, *stmt.orelse)
        )
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return not any(mentions(i, graph) for i in stmt.items) and all(
            _harmless(ctx, s, graph, ref, cls) for s in stmt.body
        )
    if not isinstance(stmt, SIMPLE) or any(isinstance(n, _EXITS) for n in ast.walk(stmt)):
        return False
    if graph.startswith("self.") and _hands_self(stmt):
        return False  # a method of the instance may read the field
    if not mentions(stmt, graph):
        return True
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False  # stored, bound anew
    call = stmt.value
    callee = _pass_statement(stmt, None) == graph and call.func.id
    if callee and blind_pass(ctx, callee, ref):
        return True
    if graph_readers.logs(call) and not mentions(call.func, graph):
        return True
    return graph_readers.harmless_method(ctx, cls, call, graph)


def _hands_self(stmt: ast.stmt) -> bool:
    """`self.method(...)`, or `self` itself handed to a call."""
    for node in ast.walk(stmt):
        if not isinstance(node, ast.Call):
            continue
        if (
            dotted_parts(node.func) is not None
            and dotted_parts(node.func)[0] == "self"
            and len(dotted_parts(node.func)) == 2
        ):
            return True
        if any(isinstance(a, ast.Name) and a.id == "self" for a in (*node.args, *(k.value for k in node.keywords))):
            return True
    return False

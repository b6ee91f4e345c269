"""A script that runs a renaming front end on a graph and then its own pass on it (QL101).

EVT's benchmarks write `frontend = GTLFrontend(); gm, _ = frontend(gm)` and then call a pass
of the script's own on `gm`: that pass sees the packets the front end renamed every node to
(`packet_renames`), whatever package-wide excuse applies or not (a script outside any package
has no project scan). The excuse is read off the calls: every call of the pass in its module
follows, in the same function, an unconditional run of the front end on the same name, with
nothing binding the name again in between. A pass run before the front end, referenced other
than by a call, or handed another graph is not excused.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import file_keys
from qlint.analysis.graphs.packet_renames import LOOKUP, renaming_functions
from qlint.analysis.graphs.project_texts import module_context
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.tree_walk import names_by_id, spans_rows
from qlint.source import DecodeError, decode_source

_MAX_BYTES = 2_000_000
_MAX_HOPS = 3  # re-exports followed (`gtl.compiler.passes` re-exports `pass_frontend.GTLFrontend`)


def runs_after_front_end(ctx: FileContext, func: ast.FunctionDef | ast.AsyncFunctionDef, namespace: str) -> bool:
    """Whether every call of the module-level function `func` in its module comes after a run
    of a front end renaming node targets to packets of `namespace` on the graph it is handed
    (and there is at least one such call)."""
    if ctx.scope.functions.get(func.name) is not func:
        return False
    # Asked for every finding in a function of the module (each keystroke in an editor): the
    # walks below are for a pass the text names beyond its def. The tree's names are the
    # text's spellings where the text is ASCII (NFKC may change others).
    if ctx.text.isascii() and ctx.text.count(func.name) < 2:
        return False
    rows = sorted(n.lineno for n in names_by_id(ctx.tree).get(func.name, ()))
    if not rows:
        return False
    calls = 0
    for body in bodies(ctx.tree, ctx.scope, ctx.cache):
        node = body.node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not spans_rows(node, rows):
            continue
        for index, stmt in enumerate(node.body):
            if not spans_rows(stmt, rows):
                continue  # no reference in it: nothing to judge
            for sub in _own_nodes(stmt):
                if not (isinstance(sub, ast.Name) and sub.id == func.name and isinstance(sub.ctx, ast.Load)):
                    continue
                if not _preceded(ctx, body, index, sub, stmt, namespace):
                    return False
                calls += 1
    # Every reference must be one of those calls: one outside the functions' own statements (at
    # module level, in a class body, a default, a decorator) is not excused.
    return calls > 0 and calls == len(rows)


def _own_nodes(stmt: ast.stmt):
    """The nodes of `stmt`, not those of functions or classes nested in it (their own bodies);
    a lambda's are its statement's (a call in it is handed the lambda's parameter)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append(child)


def _preceded(ctx: FileContext, body: Body, index: int, name: ast.Name, stmt: ast.stmt, namespace: str) -> bool:
    call = next(
        (n for n in _own_nodes(stmt) if isinstance(n, ast.Call) and n.func is name),
        None,
    )
    if call is None or not call.args or not isinstance(call.args[0], ast.Name):
        return False  # referenced other than by a call, or handed no named graph
    graph = call.args[0].id
    stmts = body.node.body
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
    for earlier in range(index - 1, -1, -1):
        candidate = stmts[earlier]
        if _runs_front_end(ctx, body, resolver, candidate, graph, namespace):
            return True
        if any(_stores(n, graph) for n in _own_nodes(candidate)):
            return False  # the name is bound again after whatever ran before
    return False


def _stores(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)


def _runs_front_end(
    ctx: FileContext, body: Body, resolver: Resolver, stmt: ast.stmt, graph: str, namespace: str
) -> bool:
    """`stmt` is `front_end(graph)` (a renaming function, an instance of a renaming class, or
    `Cls()(graph)`), alone or assigned; an `if`, loop or `try` may not run it."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    if not isinstance(value, ast.Call) or not value.args:
        return False
    if not (isinstance(value.args[0], ast.Name) and value.args[0].id == graph):
        return False
    func = value.func
    if isinstance(func, ast.Call):  # `FrontEnd()(gm)`
        return _renames(ctx, resolver.qualname(func.func), namespace, want_class=True)
    if isinstance(func, ast.Name) and func.id in body.local:
        # An instance: every binding of the local constructs a renaming class.
        bound = body.local[func.id]
        return bool(bound) and all(
            isinstance(b, ast.Call) and _renames(ctx, resolver.qualname(b.func), namespace, want_class=True)
            for b in bound
        )
    return _renames(ctx, resolver.qualname(func), namespace, want_class=False)


def _renames(ctx: FileContext, name: str | None, namespace: str, want_class: bool, hops: int = 0) -> bool:
    """Whether `name` is a class (`want_class`) with a method, or a function, that renames
    node targets to packets of `namespace` (`packet_renames`), found where it is defined."""
    module, _, attr = (name or "").rpartition(".")
    if not module or not attr or hops > _MAX_HOPS:
        return False
    path = ctx.project.find_module(module, ctx.path)
    if path is None or os.path.abspath(path) == os.path.abspath(ctx.path):
        other = ctx if path is not None else None
    else:
        key = file_keys.content_key(ctx.project, path)
        file_keys.record(ctx.project, ctx.path, ((path, key),))  # an edit of it changes the answer
        data = file_keys.content_bytes(ctx.project, path, key, _MAX_BYTES)
        try:
            other = module_context(path, decode_source(data), ctx) if data is not None else None
        except DecodeError:
            other = None
    if other is None:
        return False
    scope = other.scope
    if attr in scope.imports:
        return _renames(ctx, scope.imports[attr], namespace, want_class, hops + 1)
    if want_class and attr in scope.classes:
        node = scope.classes[attr].node
    elif not want_class and attr in scope.functions:
        node = scope.functions[attr]
    else:
        return False
    if not LOOKUP.search(other.text):
        return False
    first, last = node.lineno, node.end_lineno or node.lineno
    return any(ns == namespace and first <= row <= last for ns, row, _ in renaming_functions(other))

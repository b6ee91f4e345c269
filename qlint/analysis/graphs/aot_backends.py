"""A `torch.compile` backend's own body, read for what it does to Dynamo's graph: the passes
it calls on the graph before handing it and the example inputs to AOT autograd or Inductor's
`compile_fx` (`aot_call`), and the function it assigns to Inductor's `pre_grad_custom_pass`
(`backend_callees`). Which modules hold backends, and whether a pass is among what they run,
is `dynamo_graph_passes`'s question.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.context import FileContext
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.resolver import Resolver

# AOT autograd's entry points for a Dynamo graph (`aot_autograd(**kw)` returns a backend
# that is then called with the graph and the inputs).
_AOT_CALLS = frozenset(
    {
        "torch._functorch.aot_autograd.aot_module_simplified",
        "torch._functorch.aot_autograd.aot_module",
        "functorch.compile.aot_module_simplified",
        "functorch.compile.aot_module",
        "torch._inductor.compile_fx.compile_fx",
    }
)
_AOT_FACTORIES = frozenset({"torch._dynamo.backends.common.aot_autograd", "functorch.compile.aot_autograd"})
PRE_GRAD = "pre_grad_custom_pass"
_INDUCTOR_CONFIG = "torch._inductor.config"


def backend_callees(ctx: FileContext | None) -> set[str]:
    """Qualified names of what the backends of the module `ctx` run on Dynamo's graph before
    their AOT call, and of the pre-grad passes it assigns (none without a module)."""
    if ctx is None:
        return set()
    found: set[str] = set()
    for body in bodies(ctx.tree, ctx.scope, ctx.cache):
        resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
        found |= _pre_grad_passes(ctx, body, resolver)
        if isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found |= _passes_before_aot(body, resolver)
    return found


def _pre_grad_passes(ctx: FileContext, body: Body, resolver: Resolver) -> set[str]:
    """`torch._inductor.config.pre_grad_custom_pass = f` (the config module imported under
    any name, in the module or in the function): f runs on Dynamo's graph."""
    found = set()
    local = function_imports(ctx, body)

    def qualname(expr: ast.expr) -> str | None:
        head = expr
        while isinstance(head, ast.Attribute):
            head = head.value
        if isinstance(head, ast.Name) and head.id in local:
            rest = ast.unparse(expr)[len(head.id) :]
            return local[head.id] + rest
        return resolver.qualname(expr)

    for stmt in body.stmts:
        if not isinstance(stmt, ast.Assign):
            continue
        for target in stmt.targets:
            if (
                isinstance(target, ast.Attribute)
                and target.attr == PRE_GRAD
                and qualname(target.value) == _INDUCTOR_CONFIG
            ):
                name = qualname(stmt.value)
                if name:
                    found.add(name)
    return found


def function_imports(ctx: FileContext, body: Body) -> dict[str, str]:
    """Names a function imports itself (`from torch._inductor import config as c`, relative
    imports resolved against the module's package), which the module scope does not hold."""
    if not isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    module = ctx.module or ""
    package = module if os.path.basename(ctx.path) == "__init__.py" else module.rpartition(".")[0]
    found = {}
    for stmt in body.stmts:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    found[alias.asname] = alias.name
        elif isinstance(stmt, ast.ImportFrom):
            base = stmt.module or ""
            if stmt.level:
                parts = package.split(".") if package else []
                parts = parts[: len(parts) - (stmt.level - 1)] if stmt.level > 1 else parts
                base = ".".join(p for p in (*parts, base) if p)
            for alias in stmt.names:
                found[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
    return found


def graph_and_inputs(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, set[str]] | None:
    """A backend's graph parameter (its first, after `self`/`cls`) and the others, one of
    which holds the example inputs; None for a function of fewer than two."""
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    if len(params) < 2:
        return None
    return params[0], set(params[1:])


def _passes_before_aot(body: Body, resolver: Resolver) -> set[str]:
    """What a backend `def backend(gm, example_inputs)` calls on `gm` before handing `gm` and
    `example_inputs` (any other parameter) to AOT autograd, in its own statements (not those
    of nested functions)."""
    parts = graph_and_inputs(body.node)
    if parts is None:
        return set()
    graph, inputs = parts
    calls = [n for stmt in body.stmts for n in own_calls(stmt)]
    aot_rows = [c.lineno for c in calls if aot_call(c, resolver, graph, inputs)]
    if not aot_rows:
        return set()
    last = max(aot_rows)
    found = set()
    for stmt in body.stmts:
        if stmt.lineno >= last:
            continue
        if _rebinds(stmt, graph) and not _pass_on(stmt.value, graph):
            return set()  # `gm` is another graph from here on (a re-trace, a copy)
        for call in own_calls(stmt):
            if call.lineno < last and _pass_on(call, graph):
                name = resolver.qualname(call.func)
                if name and name not in _AOT_CALLS:
                    found.add(name)
    return found


def own_calls(stmt: ast.stmt) -> list[ast.Call]:
    """The calls a statement makes itself: a nested statement list is its own entry of
    `Body.stmts`, and nested functions or lambdas do not run here."""
    out: list[ast.Call] = []
    todo: list[ast.AST] = [stmt]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.stmt, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.Call):
                out.append(child)
            todo.append(child)
    return out


def _pass_on(node: ast.AST | None, graph: str) -> bool:
    """`f(gm, ...)` with a function named directly (a call of a call is a re-trace's shape:
    `make_fx(gm)(*args)`)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, (ast.Name, ast.Attribute))
        and bool(node.args)
        and isinstance(node.args[0], ast.Name)
        and node.args[0].id == graph
    )


def _rebinds(stmt: ast.stmt, name: str) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    return isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
        isinstance(t, ast.Name) and t.id == name for t in targets
    )


def aot_call(call: ast.Call, resolver: Resolver, graph: str, inputs: set[str]) -> bool:
    """`aot_module_simplified(gm, example_inputs, ...)` or `aot_autograd(...)(gm, example_inputs)`."""
    func = call.func
    if isinstance(func, ast.Call):
        if resolver.qualname(func.func) not in _AOT_FACTORIES:
            return False
    elif resolver.qualname(func) not in _AOT_CALLS:
        return False
    args = call.args
    return (
        len(args) >= 2
        and isinstance(args[0], ast.Name)
        and args[0].id == graph
        and isinstance(args[1], ast.Name)
        and args[1].id in inputs
    )

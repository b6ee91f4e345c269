"""Functions the repository hands to `torch.compile` as its backend, keeping their graph to
themselves (QL101, QL102, through `self_traced_graphs`).

`torch.compile(model, backend=f)` (or `torch._dynamo.optimize(f)`) has Dynamo trace the code
it runs and calls `f(gm, example_inputs)` with that fresh graph: nothing else holds it, and
what `f` returns is what Dynamo runs. A backend that hands the graph to no AOT autograd,
Inductor or re-trace entry point starts the project's own pipeline there, as the project's
own `make_fx` trace would: pytorch-shir's FPGA backend rewrites quantized patterns to its
intrinsics, selects instructions, pads operands with `aten.pad` packets its simplifier folds,
and runs the result itself.

A function is such a backend when it is a module-level function of at least two positional
parameters, calls nothing of that kind, and the repository names it (in its own module, as
`<anything>.name` or an imported `name` elsewhere) only as the `backend=` argument of
`torch.compile` or the first argument of `torch._dynamo.optimize`: called, handed on
otherwise or imported under another name anywhere, where its graph comes from is unknown.
The registration usually sits in the repository's tests or scripts, outside the package:
the whole repository is searched.
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.namesakes import own_namesake
from qlint.analysis.graphs.project_texts import parsed_module, project_modules, text_holding, texts_naming
from qlint.analysis.module_keys import project_keys
from qlint.analysis.names.package_map import project_root
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.word_search import AnchoredPattern

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPILE = frozenset({"torch.compile"})
_OPTIMIZE = frozenset({"torch._dynamo.optimize", "torch._dynamo.eval_frame.optimize"})
# Calls (by their last name) after which the graph is no longer the backend's own: AOT
# autograd and Inductor re-trace it to overloads and run their own passes on it.
_HANDOFFS = frozenset(
    {
        "aot_module_simplified",
        "aot_module",
        "aot_export_module",
        "aot_export_joint_simple",
        "aot_function",
        "aot_autograd",
        "compile_fx",
        "compile_fx_inner",
        "make_fx",
    }
)
_CACHE_KEY = "compile-backend"
# How a registration is spelled, read off a module's text before it is parsed.
# Tried only where one of its words starts (`word_search`): every module holding either word
# is searched until one registers (ExecuTorch: 229 modules).
_REGISTERS = AnchoredPattern(r"\bbackend\s*=|\boptimize\s*\(", ("backend", "optimize"))
# repository -> (the project's content keys, whether any module registers a backend): while the
# keys are the same object (one run; an editor's project between keystrokes), so is the answer.
_REGISTERING: dict[str, tuple[object, bool]] = {}


def registers_backends(ctx: FileContext) -> bool:
    """Whether a module of the repository may register a `torch.compile` backend (spells
    `backend=` or `optimize(`): the gate of the caller searches that could end in one."""
    repo = _search_root(ctx)
    if repo is None:
        return False
    modules = project_modules(ctx, _NEEDLES, repo)
    keys = project_keys(ctx, repo)  # the same object as long as the project's contents are
    known = _REGISTERING.get(repo)
    if known is not None and known[0] is keys:
        return known[1]
    found = False
    for path, key in modules:
        if key is None:
            continue
        read = text_holding(ctx.project, path, key, _NEEDLE_BYTES)
        if read is not None and _REGISTERS.search(read[0]):
            found = True
            break
    _REGISTERING[repo] = (keys, found)
    return found


_NEEDLES = ("backend", "optimize")
_NEEDLE_BYTES = tuple(n.encode() for n in _NEEDLES)


def compile_backend(ctx: FileContext, func: ast.AST) -> bool:
    """Whether the module-level `func` of `ctx` is a `torch.compile` backend of the repository
    that keeps Dynamo's graph to itself (above)."""
    if not isinstance(func, _FUNCS) or ctx.scope.functions.get(func.name) is not func:
        return False
    if len([*func.args.posonlyargs, *func.args.args]) < 2 or hands_off(func):
        return False
    return _registered(ctx, func)


def _registered(ctx: FileContext, func: ast.AST) -> bool:
    key = (_CACHE_KEY, id(func))
    if key not in ctx.cache:
        ctx.cache[key] = _only_registered(ctx, func.name)
    return ctx.cache[key]


def before_retrace(ctx: FileContext, func: ast.AST, call: ast.Call) -> bool:
    """Whether `call`, made by the module-level `func` of `ctx` with func's graph parameter as
    its first argument, runs on Dynamo's graph before func hands that graph to AOT autograd
    (or Inductor, or a re-trace): func is a backend the repository only registers (as
    `compile_backend` reads it, hand-offs aside), its graph parameter is bound nowhere in it,
    and each hand-off is a later statement of its body than the call's, handed that graph.

    pytorch-shir's first backend rewrites quantized patterns to its intrinsics on Dynamo's
    graph (inserting `aten.view`/`aten.pad` packets), then `aot_export_module(gm, ...)`
    re-traces it: every packet the pass put there is called, and recorded as its overload,
    before the overload-keyed lowering sees the graph; the pass itself sees only what Dynamo
    recorded and what it inserts (as `dynamo_graph_passes` reads `aot_module_simplified`)."""
    if not isinstance(func, _FUNCS) or ctx.scope.functions.get(func.name) is not func:
        return False
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if len(params) < 2 or not call.args or not isinstance(call.args[0], ast.Name) or call.args[0].id != params[0]:
        return False
    graph = params[0]
    if any(_binds(node, graph) for stmt in func.body for node in ast.walk(stmt)):
        return False
    at = _statement_index(func, call)
    handoffs = [n for n in ast.walk(func) if isinstance(n, ast.Call) and _hand_off(n)]
    if at is None or not handoffs:
        return False
    for handoff in handoffs:
        later = _statement_index(func, handoff)
        if later is None or later <= at or not _handed(handoff, graph):
            return False
    return _registered(ctx, func)


def _statement_index(func: ast.AST, node: ast.AST) -> int | None:
    """The position of the statement of func's own body (top level) that holds `node`."""
    for index, stmt in enumerate(func.body):
        if stmt.lineno <= node.lineno <= (stmt.end_lineno or stmt.lineno) and any(n is node for n in ast.walk(stmt)):
            return index
    return None


def _handed(call: ast.Call, graph: str) -> bool:
    """The hand-off gets the graph itself: `aot_export_module(gm, ...)`, `make_fx(gm)`."""
    return bool(call.args) and isinstance(call.args[0], ast.Name) and call.args[0].id == graph


def _binds(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.arg):
        return node.arg == name
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return name in node.names
    return isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)


def hands_off(node: ast.AST) -> bool:
    """Something under `node` hands a graph to AOT autograd, Inductor or a re-trace."""
    return any(isinstance(n, ast.Call) and _hand_off(n) for n in ast.walk(node))


def _hand_off(call: ast.Call) -> bool:
    parts = dotted_parts(call.func, tail=True)
    return bool(parts) and parts[-1] in _HANDOFFS


def _search_root(ctx: FileContext) -> str | None:
    """Where registrations are looked for: the repository holding the module, or for an
    installed package (under `site-packages`), whose users register its backends, its own
    package (a repository above an installation, pyenv's checkout, is not the package's).
    Outside any repository, none: the search is not made."""
    from qlint.analysis.flow.project_search import search_root  # where the caller searches look

    return search_root(ctx.path) if project_root(ctx.path) is not None else None


def _only_registered(ctx: FileContext, name: str) -> bool:
    """Every use of `name` in the repository registers it as a backend, and one does."""
    registered = _registrations(ctx, name, True)
    if registered is None:
        return False
    called = re.compile(rf"\b{re.escape(name)}\s*\(")
    defined = re.compile(rf"\bdef\s+{re.escape(name)}\s*\(")
    for path, text in texts_naming(ctx, name, _search_root(ctx)):
        if called.search(text) and not defined.search(text):
            return False  # it is called there: its graph comes from that caller (no parse needed)
        module = parsed_module(ctx, path, text)
        if module is None:
            return False
        if own_namesake(module, name):
            continue  # another module's own function of that name
        uses = _registrations(module, name, False)
        if uses is None:
            return False
        registered = registered or uses
    return registered


def _registrations(module: FileContext, name: str, own: bool) -> bool | None:
    """Whether the module registers `name` as a backend; None when it uses the name in any
    other way (as `_sites_in` of `pass_call_sites` reads a module's uses)."""
    resolver = Resolver(module.scope, module.project, module.optable)
    backends: set[int] = set()
    uses: list[ast.expr] = []
    for node in ast.walk(module.tree):
        if isinstance(node, ast.alias) and node.asname and node.name.rpartition(".")[2] == name:
            return None  # imported under another name: its uses are not spelled `name`
        if isinstance(node, ast.Call):
            backends |= _backend_arguments(node, resolver)
        elif (
            isinstance(node, (ast.Name, ast.Attribute))
            and isinstance(node.ctx, ast.Load)
            and (node.id if isinstance(node, ast.Name) else None if own else node.attr) == name
        ):
            uses.append(node)
    if any(id(use) not in backends for use in uses):
        return None
    return bool(uses)


def _backend_arguments(call: ast.Call, resolver: Resolver) -> set[int]:
    """The ids of the expressions a call hands `torch.compile` or `torch._dynamo.optimize` as
    the backend."""
    values = [k.value for k in call.keywords if k.arg == "backend"]
    if not values and not call.args:
        return set()
    callee = resolver.qualname(call.func)
    if callee in _COMPILE:
        return {id(v) for v in values}
    if callee in _OPTIMIZE:
        return {id(v) for v in (*values, *call.args[:1])}
    return set()


__all__ = ["before_retrace", "compile_backend", "hands_off", "registers_backends"]

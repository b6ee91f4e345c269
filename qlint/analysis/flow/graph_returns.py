"""Graphs a body gets only from a helper of another module of the project (QL203).

`gm = capture(model, x); gm.eval()` with `capture` in another module returning
`torch.export.export(...).module()`, `prepare_pt2e(...)` or `convert_pt2e(...)` raises on
torch 2.13 as an in-place capture does. The body names no graph source itself, so neither
the rule's text trigger nor the bodies the model flow reads (`relevant_bodies`) see it.

Which functions of a module may return such a graph is a summary fact (`GraphReturns`,
computed once per module content from its text: a function whose text names a graph
source and returns a value); the model flow then decides on the helper's real returns.
A file is read for QL203 through its imports (`switches_returned_graph`, the rule's import
trigger) when it switches a mode and calls an imported function of that list, and the bodies
that do both are read (`returned_graph_bodies`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.relevant_bodies import functions_of, segment
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.text_imports import text_imports

# Where an exported GraphModule comes from (as `model_flow.GRAPH_SOURCES`, which imports this).
_SOURCES = (".module(", "prepare_pt2e", "prepare_qat_pt2e", "convert_pt2e", "capture_pre_autograd_graph")
_SWITCHES = (".eval()", ".train(")
# Names imported from these are never helpers of the project.
_LIBRARY_ROOTS = frozenset({"torch", "torchao", "numpy", "copy", "typing", "collections", "unittest", "pytest"})
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


class GraphReturns:
    """The module-level functions whose text names a graph source and returns a value."""

    key = "ql203.graph_returns.v1"
    lazy = True

    def compute(self, tree: ast.Module, scope, text: str):
        if not any(s in text for s in _SOURCES):
            return []
        lines = text.splitlines(keepends=True)
        out = []
        for node in tree.body:
            if not isinstance(node, _FUNCS):
                continue
            body = "".join(lines[node.lineno - 1 : node.end_lineno])
            if any(s in body for s in _SOURCES) and any(
                isinstance(n, ast.Return) and n.value is not None for n in ast.walk(node)
            ):
                out.append(node.name)
        return out

    def load(self, path: str, summary, value):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TypeError("graph returns")
        return frozenset(value)


_FACT = GraphReturns()


def returning_calls(text: str, path: str, project) -> tuple[str, ...]:
    """The call spellings (`capture(`, `helpers.prepare(`) of imported functions of the project
    that may return an exported graph, written in `text`."""
    if project is None:
        return ()
    out: list[str] = []
    for local, full in text_imports(text, module_name_for(path), path):
        if full.partition(".")[0] in _LIBRARY_ROOTS or local not in text:
            continue
        module, _, attr = full.rpartition(".")
        # `from pkg.helpers import capture`
        names = project.module_fact(module, path, _FACT) if module and f"{local}(" in text else None
        if names and attr in names:
            out.append(f"{local}(")
        # `from pkg import helpers` / `import pkg.helpers as helpers`
        if f"{local}." in text:
            names = project.module_fact(full, path, _FACT)
            out.extend(f"{local}.{name}(" for name in sorted(names or ()) if f"{local}.{name}(" in text)
    return tuple(dict.fromkeys(out))


def switches_returned_graph(text: str, path: str, project) -> bool:
    """QL203's import trigger: the file switches a mode and calls an imported helper that may
    return an exported graph."""
    return any(s in text for s in _SWITCHES) and bool(returning_calls(text, path, project))


def returned_graph_bodies(ctx, chosen: set[int]) -> list:
    """(body, class scope) of the functions, beyond `chosen` (ids), that switch a mode and call
    an imported helper that may return an exported graph."""
    if not any(s in ctx.text for s in _SWITCHES):
        return []
    calls = ctx.cache.get("ql203.returning_calls")
    if calls is None:
        calls = ctx.cache["ql203.returning_calls"] = returning_calls(ctx.text, ctx.path, ctx.project)
    if not calls:
        return []
    out = []
    for f, cls in functions_of(ctx.tree, ctx.scope):
        if isinstance(f, ast.Module) or id(f) in chosen:
            continue
        text = segment(ctx, f)
        if any(s in text for s in _SWITCHES) and any(c in text for c in calls):
            out.append((f, cls))
    return out


__all__ = ["GraphReturns", "returned_graph_bodies", "returning_calls", "switches_returned_graph"]

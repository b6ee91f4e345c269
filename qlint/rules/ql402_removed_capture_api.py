"""QL402 removed-capture-api: `capture_pre_autograd_graph` / `export_for_training`, gone in torch 2.13.

Alias-aware like QL401: `from torch._export import capture_pre_autograd_graph as cap` (the
import is what raises, so the finding sits on it and its fix rewrites every call of the
bound name), and attribute chains `torch.export.export_for_training(...)`,
`te.capture_pre_autograd_graph(...)` after `import torch._export as te` (the finding sits on
each use). Compatibility shims stay quiet as QL401's do, unless every branch of the shim
reaches for a removed API: then no branch works on torch 2.13.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint.analysis.edits import import_edits as ie
from qlint.analysis.edits.capture_shims import compatibility_path
from qlint.analysis.edits.pt2e_moves import worst
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.removed_capture_apis import (
    ABSENT,
    APIS,
    NAMES,
    REPLACEMENT,
    RemovedApi,
    rewrite_call,
)
from qlint.analysis.statement_walk import statement_lists
from qlint.analysis.tree_walk import parents as tree_parents
from qlint.diagnostic import Applicability, Diagnostic, Edit, Fix, Position, Range
from qlint.evidence.removed_capture import RemovedCaptureEvidence
from qlint.rules.base import FileContext, Rule

_LEVEL = {"safe": Applicability.SAFE, "unsafe": Applicability.UNSAFE}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_NEW_NAME = "export"


class RemovedCaptureApi(Rule):
    code = "QL402"
    name = "removed-capture-api"
    runtime_check = "qlint.runtime.checks.capture_apis"
    evidence_type = RemovedCaptureEvidence
    summary = "`capture_pre_autograd_graph` / `export_for_training`, which torch 2.13 no longer has"
    triggers = tuple(sorted(NAMES))
    fix_availability = "sometimes"

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        parents = tree_parents(ctx.tree)
        for stmt in ast.walk(ctx.tree):
            if isinstance(stmt, ast.ImportFrom) and any(a.name in NAMES for a in stmt.names):
                base = ie.import_base(ctx, stmt)
                for alias in stmt.names:
                    api = APIS.get(f"{base}.{alias.name}")
                    if api is not None and not compatibility_path(ctx, stmt, parents, {alias.asname or alias.name}):
                        yield self._from_import(ctx, stmt, alias, api, parents)
        yield from self._attribute_uses(ctx, parents)

    # -- from torch._export import capture_pre_autograd_graph [as cap] --------------------
    def _from_import(self, ctx, stmt: ast.ImportFrom, alias: ast.alias, api: RemovedApi, parents) -> Diagnostic:
        local = alias.asname or alias.name
        uses = list(_name_uses(ctx, stmt, local, parents))
        plan = _import_plan(ctx, stmt, alias, api, local, parents)
        edits, level, reasons = list(plan.edits), plan.level, list(plan.reasons)
        if _bound_by_two_apis(ctx, local):
            level, reasons = worst(level, "unsafe"), [*reasons, f"`{local}` is bound to both removed APIs"]
        for name in uses:
            new_text = plan.local if plan.local != local else None
            edit_level, edit_list, reason = _use_edits(ctx, name, api, new_text, parents)
            edits += edit_list
            level = worst(level, edit_level)
            if reason:
                reasons.append(reason)
        message = f"{_subject(api)}: {_advice(api)}"
        fix = _fix(api, level, edits, reasons)
        return ctx.diagnostic(self, alias, message, fix, evidence=_evidence(api, uses, parents))

    # -- torch.export.export_for_training(...), te.capture_pre_autograd_graph(...) ---------
    def _attribute_uses(self, ctx: FileContext, parents) -> Iterator[Diagnostic]:
        rows = ctx.lines_containing(*NAMES)
        for body in bodies(ctx.tree, ctx.scope, ctx.cache):
            resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
            for node in body.nodes(rows):
                if not isinstance(node, ast.Attribute) or node.attr not in NAMES:
                    continue
                if not isinstance(node.ctx, ast.Load):
                    # Assigning `torch._export.capture_pre_autograd_graph = wrapper` (a
                    # monkey-patch) creates the attribute on a torch that lacks it: only reads break.
                    continue
                api = APIS.get(resolver.qualname(node) or "")
                if api is None or compatibility_path(ctx, node, parents, set()):
                    continue
                func_text, extra = _attribute_replacement(ctx, resolver, node, api)
                level, edits, reason = _use_edits(ctx, node, api, func_text, parents, whole=True)
                edits = [*edits, *extra] if edits else []
                message = f"{_subject(api)}: {_advice(api)}"
                fix = _fix(api, level, edits, [reason] if reason else [])
                yield ctx.diagnostic(self, node, message, fix, evidence=_evidence(api, [node], parents))


class _Plan:
    def __init__(self, edits: list[Edit], local: str, level: str = "safe", reasons: list[str] | None = None):
        self.edits, self.local, self.level, self.reasons = edits, local, level, reasons or []


def _import_plan(
    ctx: FileContext, stmt: ast.ImportFrom, alias: ast.alias, api: RemovedApi, local: str, parents
) -> _Plan:
    """Edits that make the statement import `torch.export.export`, and the local name calls use."""
    sole = len(stmt.names) == 1
    if alias.asname is None and ctx.scope.imports.get(_NEW_NAME) == REPLACEMENT:
        # `export` is imported already: drop the old name, or the whole statement.
        drop = _delete_statement(ctx, stmt, parents) if sole else _drop_alias(ctx, stmt, alias)
        if drop is not None:
            return _Plan([drop], _NEW_NAME)
    new_local = local if alias.asname or _bound_elsewhere(ctx, _NEW_NAME) else _NEW_NAME
    if api.module == "torch.export" or sole:
        edits = []
        if api.module != "torch.export":
            module = _module_edit(ctx, stmt, "torch.export")
            if module is None:
                return _Plan([], local, "display", ["the import's layout is unusual"])
            edits.append(module)
        text = _NEW_NAME if new_local == _NEW_NAME or alias.asname else f"{_NEW_NAME} as {local}"
        name = ie.alias_name_edit(ctx, alias, text)
        if name is None:
            return _Plan([], local, "display", ["the import's layout is unusual"])
        return _Plan([*edits, name], new_local)
    edits = ie.regroup_from_import(ctx, stmt, [(alias, "torch.export", _NEW_NAME)])
    if edits is None:
        return _Plan([], local, "display", ["the import's layout is unusual"])
    return _Plan(edits, local)


def _module_edit(ctx: FileContext, stmt: ast.ImportFrom, module: str) -> Edit | None:
    text = ctx.source_of(stmt)
    at = text.find(stmt.module or "\0")
    if stmt.level or at < 0 or text[:at].split() != ["from"]:
        return None
    start = ctx.range_of(stmt).start
    if "\n" in text[:at]:
        return None
    begin = Position(start.row, start.col + at)
    return Edit(Range(begin, Position(start.row, begin.col + len(stmt.module))), module)


def _delete_statement(ctx: FileContext, stmt: ast.stmt, parents) -> Edit | None:
    """Delete a statement's whole lines, where it owns them and its block keeps another statement."""
    parent = parents.get(id(stmt))
    block = next((b for b in statement_lists(parent) if stmt in b), None) if parent is not None else None
    if block is None or len(block) < 2 or not ie.owns_lines(ctx, stmt) or ctx.text.count("\n") < stmt.end_lineno:
        return None
    return Edit(Range(Position(stmt.lineno, 0), Position(stmt.end_lineno + 1, 0)), "")


def _drop_alias(ctx: FileContext, stmt: ast.ImportFrom, alias: ast.alias) -> Edit | None:
    """Remove one name from a from-import that keeps others: up to the next name, or from the previous."""
    i = stmt.names.index(alias)
    here = ctx.range_of(alias)
    if i + 1 < len(stmt.names):
        return Edit(Range(here.start, ctx.range_of(stmt.names[i + 1]).start), "")
    if i > 0:
        return Edit(Range(ctx.range_of(stmt.names[i - 1]).end, here.end), "")
    return None


def _bound_elsewhere(ctx: FileContext, name: str) -> bool:
    """Does the file bind `name` to anything but `torch.export.export`?"""
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.arg) and node.arg == name:
            return True
        if isinstance(node, ast.Import) and any((a.asname or a.name.split(".")[0]) == name for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                if (a.asname or a.name) == name and not (node.module == "torch.export" and a.name == _NEW_NAME):
                    return True
        if isinstance(node, ast.Name) and node.id == name and ctx.scope.imports.get(name) != REPLACEMENT:
            return True  # a load of a global we cannot see bound: a builtin or a star import
    return False


def _name_uses(ctx: FileContext, stmt: ast.stmt, local: str, parents) -> Iterator[ast.Name]:
    """Loads of the name a from-import binds, in the scope the import binds it in."""
    scope = parents.get(id(stmt))
    while scope is not None and not isinstance(scope, (*_SCOPES, ast.Module)):
        scope = parents.get(id(scope))
    stack = list(ast.iter_child_nodes(scope)) if scope is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES) and local in _binds(node):
            continue  # a nested scope with its own `local`
        if isinstance(node, ast.Name) and node.id == local and isinstance(node.ctx, ast.Load):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _binds(scope: ast.AST) -> set[str]:
    names: set[str] = set()
    args = getattr(scope, "args", None)
    if isinstance(args, ast.arguments):
        names |= {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
    for node in ast.walk(scope):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {a.asname or a.name.split(".")[0] for a in node.names}
    return names


def _bound_by_two_apis(ctx: FileContext, local: str) -> bool:
    """A shim binding one name to whichever removed API imports: its callers' result type is ambiguous."""
    apis = set()
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.ImportFrom):
            base = ie.import_base(ctx, node)
            for a in node.names:
                if (a.asname or a.name) == local and f"{base}.{a.name}" in APIS:
                    apis.add(f"{base}.{a.name}")
    return len(apis) > 1


def _use_edits(
    ctx: FileContext, node: ast.expr, api: RemovedApi, new_text: str | None, parents, whole: bool = False
) -> tuple[str, list[Edit], str]:
    """(level, edits, reason) for one reference: a call is rewritten, a value is renamed."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Call) and parent.func is node:
        rewrite = rewrite_call(ctx, parent, api, new_text)
        return rewrite.level, rewrite.edits, rewrite.reason
    if api.needs_module:
        return "display", [], f"`{ctx.source_of(node)}` is passed as a value: its callers expect a GraphModule"
    edits = [Edit(ctx.range_of(node), new_text)] if new_text is not None else []
    if whole and not edits:
        return "display", [], "the reference cannot be rewritten"
    return "unsafe", edits, f"`{ctx.source_of(node)}` is passed as a value: qlint cannot see how it is called"


def _attribute_replacement(ctx: FileContext, resolver: Resolver, node: ast.Attribute, api) -> tuple[str, list[Edit]]:
    """The callee text for `torch.export.export` written from the chain's own head where possible."""
    base = node.value
    if api.module == "torch.export":
        return f"{ctx.source_of(base)}.{_NEW_NAME}", []
    if isinstance(base, ast.Attribute) and resolver.qualname(base.value) == "torch":
        return f"{ctx.source_of(base.value)}.export.{_NEW_NAME}", []
    torch_names = [n for n, full in ctx.scope.imports.items() if full == "torch"]
    if torch_names:
        head = "torch" if "torch" in torch_names else torch_names[0]
        return f"{head}.export.{_NEW_NAME}", []
    insert = ie.ensure_import(ctx, "torch")
    return f"torch.export.{_NEW_NAME}", [insert] if insert is not None else []


def _subject(api: RemovedApi) -> str:
    if api.qualname in ABSENT:
        return f"`{api.module}` has no `{api.short}` on torch 2.13 (nor does `torch._export` any more)"
    return f"`{api.qualname}` is gone from torch 2.13"


def _advice(api: RemovedApi) -> str:
    if api.needs_module:
        return (
            f"use `{REPLACEMENT}(model, args).module()` "
            f"(it returned a GraphModule; `{REPLACEMENT}` returns an ExportedProgram)"
        )
    return f"use `{REPLACEMENT}(model, args)`, which returns the same ExportedProgram"


def _fix(api: RemovedApi, level: str, edits: list[Edit], reasons: list[str]) -> Fix:
    suffix = ".module()" if api.needs_module else ""
    message = f"Use `{REPLACEMENT}(...){suffix}`"
    if level == "display" or not edits:
        return Fix(Applicability.DISPLAY_ONLY, message + (f" ({'; '.join(reasons)})" if reasons else ""))
    if level == "unsafe" and reasons:
        message += f" ({'; '.join(dict.fromkeys(reasons))})"
    return Fix(_LEVEL[level], message, tuple(edits))


def _evidence(api: RemovedApi, uses: list[ast.expr], parents) -> dict:
    keywords = sorted(
        {
            kw.arg
            for node in uses
            if isinstance(parents.get(id(node)), ast.Call)
            for kw in parents[id(node)].keywords
            if kw.arg
        }
    )
    return {
        "kind": "removed-capture-api",
        "api": api.qualname,
        "returns": api.returns,
        "replacement": REPLACEMENT + (".module()" if api.needs_module else ""),
        "keywords": keywords,
    }

"""EXQ101 print-in-graph-pass: `print()` inside a graph pass (the page is EXQ101.md)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint.rules.base import FileContext, FixAvailability, Rule, Severity

# Base classes whose `call` method is a graph pass (torch.fx and ExecuTorch).
PASS_BASES = frozenset({"PassBase", "ExportPass"})


class PrintInGraphPass(Rule):
    code = "EXQ101"
    name = "print-in-graph-pass"
    summary = "`print()` inside a graph pass"
    severity = Severity.INFO
    fix_availability = FixAvailability.NONE
    page = "EXQ101.md"  # relative to this module's directory
    url = "https://github.com/qlint/qlint/blob/main/examples/plugin/qlint_example_plugin/EXQ101.md"
    triggers = ("print(",)

    def check(self, ctx: FileContext) -> Iterator:
        reported: set[int] = set()
        for func in _passes(ctx.tree):
            for node in ast.walk(func):
                if _is_print(node) and id(node) not in reported:
                    reported.add(id(node))
                    yield ctx.diagnostic(self, node, f"`print()` in graph pass `{func.name}`: use `logging`")


def _passes(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Functions named `*_pass`, and `call` of classes derived from a pass base."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.endswith("_pass"):
            yield node
        elif isinstance(node, ast.ClassDef) and any(_base_name(b) in PASS_BASES for b in node.bases):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "call":
                    yield item


def _base_name(base: ast.expr) -> str:
    if isinstance(base, ast.Attribute):
        return base.attr
    return base.id if isinstance(base, ast.Name) else ""


def _is_print(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"

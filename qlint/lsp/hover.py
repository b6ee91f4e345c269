"""Hover: what an op reference denotes, and what a finding means.

On a `torch.ops.<ns>.<op>` expression (or any spelling the name resolution follows:
`import torch as t`, `aten = torch.ops.aten`, a name imported from another module of the
project, a local alias in the function) the hover lists the op's overloads and which of them
exported / PT2E graphs carry, from the bundled op table: exactly what decides whether a
matcher keyed on the packet can ever match. On a finding it shows the rule's summary, the
runtime verdict when there is one, and a link to the rule's page.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ModuleScope, function_assigns
from qlint.diagnostic import Diagnostic, Position, Range
from qlint.optable import OpInfo, load_op_table
from qlint.rules import RULES
from qlint.source import LineIndex

_EVIDENCE = {
    "probe": "observed in graphs exported and quantized on the real pipeline",
    "schema": "the only overload its schemas allow there",
}


def hover_at(
    text: str, path: str, where: Position, project: ProjectIndex, findings: list[Diagnostic]
) -> tuple[str, Range] | None:
    """Markdown and the range it is about, or None. Runs on the checker thread (it reads
    the project index)."""
    parts: list[str] = []
    rng: Range | None = None
    for diag in findings:
        if diag.range.start <= where <= diag.range.end:
            parts.append(finding_markdown(diag))
            rng = rng or diag.range
    op = op_at(text, path, where, project)
    if op is not None:
        markdown, op_range = op
        parts.append(markdown)
        rng = rng or op_range
    if not parts or rng is None:
        return None
    return "\n\n---\n\n".join(parts), rng


def finding_markdown(diag: Diagnostic) -> str:
    rule = RULES.get(diag.code)
    summary = rule.summary if rule is not None else diag.message
    lines = [f"**{diag.code}** `{diag.name}`: {summary}"]
    if diag.runtime is not None and diag.runtime.verdict != "skipped":
        lines.append(f"Runtime check: **{diag.runtime.verdict}**. {diag.runtime.evidence}")
    lines.append(f"[{diag.code} rule page]({diag.url})")
    return "\n\n".join(lines)


def op_markdown(info: OpInfo, overload: str | None) -> str:
    spelled = info.qualified() + (f".{overload}" if overload else "")
    kind = "OpOverload" if overload else "OpOverloadPacket"
    lines = [f"`{spelled}` ({kind})"]
    exported = [o for o in info.overloads if o not in info.jit_only]
    lines.append("Overloads: " + (", ".join(f"`.{o}`" for o in exported) or "none known"))
    if info.jit_only:
        lines.append("TorchScript only (never in exported graphs): " + ", ".join(f"`.{o}`" for o in info.jit_only))
    if info.carried:
        how = _EVIDENCE.get(info.evidence, info.evidence or "from the op table")
        lines.append(f"Exported / PT2E graphs carry: {', '.join(f'`.{o}`' for o in info.carried)} ({how})")
    else:
        lines.append("Which overloads exported / PT2E graphs carry is not known.")
    if overload is None:
        lines.append(
            "A packet never equals an overload: `node.target == packet` is False for every node "
            "of an exported graph that carries one of them."
        )
    return "\n\n".join(lines)


def op_at(text: str, path: str, where: Position, project: ProjectIndex) -> tuple[str, Range] | None:
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # mid-typing: no hover rather than a wrong one
    lines = LineIndex(text)
    optable = load_op_table()
    scope = ModuleScope.build(tree, module_name_for(path), os.path.abspath(path))
    best: tuple[int, str, Range] | None = None
    for func, node in _dotted_nodes(tree):
        if not node.lineno <= where.row <= (node.end_lineno or node.lineno):
            continue
        rng = lines.range_of(node)
        if not (rng.start <= where <= rng.end):
            continue
        local = function_assigns(func) if func is not None else None
        ref = Resolver(scope, project, optable, local).op_ref(node)
        if ref is None or ref.dialect != "aten":
            continue
        info = optable.lookup(ref.namespace, ref.op)
        if info is None:
            continue
        size = lines.offset(rng.end) - lines.offset(rng.start)
        if best is None or size > best[0]:
            best = (size, op_markdown(info, ref.overload), rng)
    return None if best is None else (best[1], best[2])


def _dotted_nodes(tree: ast.AST):
    """Every Name and Attribute with the function it is in (None at module level)."""
    stack: list[tuple[ast.AST, ast.AST | None]] = [(tree, None)]
    while stack:
        node, func = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            func = node
        if isinstance(node, (ast.Name, ast.Attribute)):
            yield func, node
        stack.extend((child, func) for child in ast.iter_child_nodes(node))

"""QL203 mode-switch-on-exported-graph: `.eval()` / `.train()` on an exported GraphModule.

`ExportedProgram.module()`, `prepare_pt2e`, `prepare_qat_pt2e` and `convert_pt2e` return
GraphModules whose batch norm and dropout were fixed at capture time. torch 2.13 makes
`.eval()`/`.train()` on them raise `NotImplementedError` (older releases silently changed
nothing); torchao's `move_exported_model_to_eval`/`_train` rewrite those ops instead.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint.analysis.flow.model_flow import GRAPH_KINDS, ModeSwitch, module_flows
from qlint.diagnostic import Applicability, Diagnostic, Edit, Fix, Range
from qlint.rules.base import FileContext, Rule

PT2E = "torchao.quantization.pt2e"
# Where an exported GraphModule comes from; `.eval()` alone is in every training script.
_GRAPH_SOURCES = (".module()", "prepare_pt2e", "prepare_qat_pt2e", "convert_pt2e", "capture_pre_autograd_graph")
_ALSO_PROVIDED_BY = ("torch.ao.quantization.",)  # torch < 2.13 exported the same helpers


class ModeSwitchOnExportedGraph(Rule):
    code = "QL203"
    name = "mode-switch-on-exported-graph"
    summary = "`.eval()`/`.train()` called on an exported, prepared or converted GraphModule"
    triggers = (".eval()", ".train(")
    fix_availability = "sometimes"

    def triggered_by(self, text: str) -> bool:
        """A mode switch *and* a source of exported graphs, or the file is never parsed."""
        return super().triggered_by(text) and any(s in text for s in _GRAPH_SOURCES)

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        for function in module_flows(ctx):
            for switch in function.switches:
                kinds = {o.kind for o in switch.origins}
                if not kinds or not kinds <= GRAPH_KINDS or switch.patched:
                    continue
                yield self._diagnostic(ctx, switch)

    def _diagnostic(self, ctx: FileContext, switch: ModeSwitch) -> Diagnostic:
        receiver = ctx.source_of(switch.receiver)
        origin = min(switch.origins, key=lambda o: (o.node.lineno, o.node.col_offset))
        called = f".{switch.call.func.attr}({', '.join(ctx.source_of(a) for a in switch.call.args)})"
        helper = {"eval": "move_exported_model_to_eval", "train": "move_exported_model_to_train"}.get(switch.mode)
        use = f"`{helper}({receiver})`" if helper else "`move_exported_model_to_eval` / `move_exported_model_to_train`"
        message = (
            f"`{receiver}` comes from `{origin.kind}` (line {origin.node.lineno}): `{called}` on an exported"
            " GraphModule raises NotImplementedError on torch 2.13 (older releases silently kept batch norm and"
            f" dropout as captured); use {use} from `{PT2E}`"
        )
        evidence = {"mode": switch.mode, "origin": origin.kind, "origin_row": origin.node.lineno}
        return ctx.diagnostic(self, switch.call, message, _fix(ctx, switch, receiver, helper), evidence=evidence)


def _fix(ctx: FileContext, switch: ModeSwitch, receiver: str, helper: str | None) -> Fix:
    if helper is None:
        return Fix(Applicability.DISPLAY_ONLY, "Call `move_exported_model_to_eval` or `_train` depending on the flag")
    name, import_edits = _imported(ctx, helper)
    if name is None:
        return Fix(Applicability.DISPLAY_ONLY, f"Use `{PT2E}.{helper}({receiver})`")
    replace = Edit(ctx.range_of(switch.call), f"{name}({receiver})")
    return Fix(Applicability.SAFE, f"Use `{helper}({receiver})`", (replace, *import_edits))


def _imported(ctx: FileContext, helper: str) -> tuple[str | None, tuple[Edit, ...]]:
    """The name to call `helper` by, and the edits that import it if the module does not yet."""
    imports = ctx.scope.imports
    for local, full in imports.items():
        if full in (f"{PT2E}.{helper}", *(f"{p}{helper}" for p in _ALSO_PROVIDED_BY)):
            return local, ()
    for local, full in imports.items():
        if full == PT2E:
            return f"{local}.{helper}", ()
    scope = ctx.scope
    if helper in imports or helper in scope.assigns or helper in scope.functions or helper in scope.classes:
        return None, ()  # the name means something else here
    existing = [
        s for s in ctx.tree.body if isinstance(s, ast.ImportFrom) and s.module == PT2E and s.level == 0 and s.names
    ]
    if existing and existing[0].names[0].name != "*":
        return helper, _merge(ctx, existing[0], helper)
    return helper, (_new_import(ctx, helper),)


def _merge(ctx: FileContext, node: ast.ImportFrom, helper: str) -> tuple[Edit, ...]:
    """Add `helper` to `from torchao.quantization.pt2e import ...` in the style it is written."""
    last = node.names[-1]
    end_col = ctx.lines.char_col(last.end_lineno, last.end_col_offset)
    at_end = Range.of(last.end_lineno, end_col, last.end_lineno, end_col)
    if last.end_lineno == node.end_lineno or last.lineno == node.lineno:
        return (Edit(at_end, f", {helper}"),)  # one line, or the closing paren after the last name
    line = ctx.lines.line(last.end_lineno)
    indent = line[: len(line) - len(line.lstrip())]
    tail = line[end_col:].split("#", 1)[0]
    line_end = Range.of(last.end_lineno, _eol(line), last.end_lineno, _eol(line))
    if "," in tail:
        return (Edit(line_end, f"\n{indent}{helper},"),)
    return (Edit(at_end, ","), Edit(line_end, f"\n{indent}{helper}"))


def _new_import(ctx: FileContext, helper: str) -> Edit:
    """A new import line after the module's leading imports (or its docstring)."""
    statement = f"from {PT2E} import {helper}"
    body = ctx.tree.body
    anchor = body[0] if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else None
    for stmt in body[1 if anchor is not None else 0 :]:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            break
        anchor = stmt
    if anchor is None:
        first = body[0]
        row = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
        return Edit(Range.of(row, 0, row, 0), f"{statement}\n")
    eol = _eol(ctx.lines.line(anchor.end_lineno))
    return Edit(Range.of(anchor.end_lineno, eol, anchor.end_lineno, eol), f"\n{statement}")


def _eol(line: str) -> int:
    """Where a line's text ends (before a CR of a CRLF file)."""
    return len(line) - 1 if line.endswith("\r") else len(line)

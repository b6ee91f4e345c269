"""QL301 decomposition-in-pre-prepare-pass: a recipe pass decomposes the graph before prepare_pt2e.

ExecuTorch's `QuantizationRecipe(pre_prepare_passes=[...])` hands each pass the unlifted
GraphModule from `ep.module()`. Decomposition runs on an ExportedProgram, so such a pass
must re-export the graph (example inputs held in a closure) and it changes what gets
quantized. The work belongs in `QuantizationRecipe.preserve_ops` where the targeted
executorch has it, otherwise in the quantizer's `transform_for_annotation` or on the
ExportedProgram before `.module()`. Passes are followed to their definitions (other
modules, partials, lambdas, pass classes) and into the project helpers they call.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator

from qlint.analysis.flow.callgraph import Callee, CallGraph, Visit, node_range
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.resolver import Located, Resolver
from qlint.analysis.tree_walk import first_row
from qlint.diagnostic import Applicability, Diagnostic, Edit, Fix, Position, Range, RelatedInfo
from qlint.evidence.decomposition import DecompositionEvidence
from qlint.rules.base import FileContext, FixAvailability, Rule

RECIPES = frozenset({"executorch.export.QuantizationRecipe", "executorch.export.recipe.QuantizationRecipe"})
REPLACE = "dataclasses.replace"
FIELD = "pre_prepare_passes"
PRESERVE_FEATURE = "executorch.export.QuantizationRecipe.preserve_ops"
# Calls that build a decomposition table from the default (core ATen) one.
DEFAULT_TABLES = frozenset(
    {
        "torch._decomp.core_aten_decompositions",
        "torch.export.default_decompositions",
        "torch.export.exported_program.default_decompositions",
        "torch.export.decomp_utils.CustomDecompTable",
    }
)
TABLE_LOOKUPS = frozenset({"torch._decomp.get_decompositions"})
TABLE_CONSTANTS = frozenset({"torch._decomp.decomposition_table"})
MAKE_FX = frozenset({"torch.fx.experimental.proxy_tensor.make_fx"})
EXPORTS = frozenset({"torch.export.export", "torch.export.export_for_training", "torch.export._trace._export"})


class DecompositionInPrePreparePass(Rule):
    code = "QL301"
    name = "decomposition-in-pre-prepare-pass"
    summary = "`QuantizationRecipe.pre_prepare_passes` entry that decomposes the graph"
    runtime_check = "qlint.runtime.checks.recipes"
    evidence_type = DecompositionEvidence
    triggers = (FIELD,)
    fix_availability = FixAvailability.SOMETIMES
    # None: read "does the targeted executorch have QuantizationRecipe.preserve_ops?" from
    # the op table, which the generator learned by importing executorch.
    options = {"executorch-has-preserve-ops": None}
    option_choices = {"executorch-has-preserve-ops": (True, False, "auto")}

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        graph = CallGraph(ctx.project, ctx.optable)
        for body in bodies(ctx.tree, ctx.scope):
            resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
            for node in body.nodes():
                keyword = _passes_keyword(node, resolver)
                if keyword is None:
                    continue
                for element in resolver.members(keyword.value) or ():
                    diag = self._element(ctx, graph, resolver, node, keyword, element)
                    if diag is not None:
                        yield diag

    def _element(self, ctx, graph: CallGraph, resolver: Resolver, call: ast.Call, keyword, element: Located):
        roots = graph.callables(element.node, resolver.for_scope(element.scope))
        hits = [h for h in (_decomposition(v) for v in graph.walk(roots)) if h is not None]
        if not hits:
            return None
        visit, what = min(hits, key=lambda h: _PRIORITY.get(h[1], 9))
        here = element.scope is ctx.scope
        where = element.node if here else keyword.value
        spelled = ctx.source_of(element.node) if here else f"{FIELD} entry"
        has_field = self._has_preserve_ops(ctx)
        message = f"pre-prepare pass `{_short(spelled)}` decomposes the graph ({_how(what, visit.chain)})"
        help_ = (
            f"{FIELD} get the unlifted GraphModule from `ep.module()`, so the pass has to re-export "
            f"it and it changes which ops get quantized; {_advice(ctx, has_field)}"
        )
        in_file = os.path.abspath(visit.callee.path) == os.path.abspath(ctx.path)
        spot = ctx.range_of(visit.node) if in_file else node_range(visit.node, visit.callee.path, ctx.project)
        related = (RelatedInfo(visit.callee.path, spot, f"`{what}` in `{visit.callee.name}`"),)
        keep = _keep_ops(roots, graph) if has_field else None
        fix = self._fix(ctx, call, keyword, element, roots, keep) if keep and here else None
        if fix is None:
            advice = _advice(ctx, has_field)
            fix = Fix(Applicability.DISPLAY_ONLY, advice[0].upper() + advice[1:])
        evidence = DecompositionEvidence(
            pass_name=spelled,
            decomposition=what,
            path=visit.callee.path,
            line=visit.node.lineno,
            preserve_ops=tuple(ast.unparse(op.node) for op in keep) if keep else None,
        )
        return ctx.diagnostic(self, where, message, fix, evidence=evidence, related=related, help=help_)

    def _has_preserve_ops(self, ctx: FileContext) -> bool | None:
        option = self.opts.get("executorch-has-preserve-ops")
        if isinstance(option, bool):
            return option
        return ctx.optable.feature(PRESERVE_FEATURE)

    def _fix(self, ctx, call: ast.Call, keyword, element: Located, roots, keep) -> Fix | None:
        """`pre_prepare_passes=[decompose_all_but_linear]` -> `preserve_ops=(aten.linear.default,)`."""
        value = keyword.value
        if not isinstance(value, (ast.List, ast.Tuple)) or element.node not in value.elts:
            return None
        if any(k.arg == "preserve_ops" for k in call.keywords) or len(roots) != 1:
            return None
        ops = [_spell(ctx, op) for op in keep]
        if None in ops:
            return None
        preserve = f"preserve_ops=({', '.join(ops)}{',' if len(ops) == 1 else ''})"
        if len(value.elts) == 1:
            edits = [Edit(ctx.range_of(keyword), preserve)]
        else:
            i = value.elts.index(element.node)
            if i + 1 < len(value.elts):
                gone = (ctx.range_of(element.node).start, ctx.range_of(value.elts[i + 1]).start)
            else:
                gone = (ctx.range_of(value.elts[i - 1]).end, ctx.range_of(element.node).end)
            end = ctx.range_of(keyword).end
            edits = [Edit(Range(*gone), ""), Edit(Range(end, end), f", {preserve}")]
        edits.extend(_delete_unused_def(ctx, roots[0], element.node))
        return Fix(Applicability.UNSAFE, f"Replace the pass with `{preserve}`", tuple(edits))


_PRIORITY = {"run_decompositions": 0, "make_fx(decomposition_table=...)": 1}


def _passes_keyword(node: ast.AST, resolver: Resolver) -> ast.keyword | None:
    if not isinstance(node, ast.Call):
        return None
    keyword = next((k for k in node.keywords if k.arg == FIELD), None)
    if keyword is None:
        return None
    callee = resolver.qualname(node.func)
    if callee in RECIPES:
        return keyword
    if callee == REPLACE and node.args:
        # Only when the replaced object is not known to be something else.
        located = resolver.value_of(node.args[0])
        made = located.node if located is not None else None
        if isinstance(made, ast.Call):
            return keyword if resolver.for_scope(located.scope).qualname(made.func) in RECIPES else None
        return keyword
    return None


def _decomposition(visit: Visit) -> tuple[Visit, str] | None:
    node, resolver = visit.node, visit.resolver
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "run_decompositions":
            table = (
                node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "decomp_table"), None)
            )
            if table is None or not _empty_table(table, resolver):
                return visit, "run_decompositions"
            return None
        qual = resolver.qualname(func)
        if qual in DEFAULT_TABLES:
            return visit, qual.rpartition(".")[2] + "()"
        if qual in TABLE_LOOKUPS and not (node.args and _empty_collection(node.args[0], resolver)):
            return visit, "get_decompositions(...)"
        if qual in MAKE_FX:
            table = next((k.value for k in node.keywords if k.arg == "decomposition_table"), None)
            if table is not None and not _empty_table(table, resolver):
                return visit, "make_fx(decomposition_table=...)"
    elif isinstance(node, ast.Attribute) and resolver.qualname(node) in TABLE_CONSTANTS:
        return visit, "torch._decomp.decomposition_table"
    return None


def _empty_table(expr: ast.expr, resolver: Resolver) -> bool:
    """`{}` / `dict()` (also through a name): `run_decompositions({})` only functionalizes."""
    located = resolver.value_of(expr) if isinstance(expr, ast.Name) else Located(expr, resolver.scope)
    node = located.node if located is not None else expr
    if isinstance(node, ast.Dict):
        return not node.keys
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and not node.args


def _empty_collection(expr: ast.expr, resolver: Resolver) -> bool:
    members = resolver.members(expr)
    return members is not None and not list(members)


def _advice(ctx: FileContext, has_field: bool | None) -> str:
    version = ctx.optable.meta.get("versions", {}).get("executorch")
    preserve = (
        "list the ops to keep in `QuantizationRecipe.preserve_ops`, which decomposes the capture before `.module()`"
    )
    elsewhere = (
        "put graph rewrites the quantizer needs in its `transform_for_annotation` (prepare_pt2e runs it) "
        "or decompose the ExportedProgram before `.module()`"
    )
    if has_field:
        return preserve
    if has_field is False:
        return f"{elsewhere} (executorch {version or 'as targeted'} has no `QuantizationRecipe.preserve_ops`)"
    return f"{preserve} where your executorch has it, otherwise {elsewhere}"


def _how(what: str, chain: tuple[Callee, ...]) -> str:
    if len(chain) == 1:
        return f"`{what}`"
    if len(chain) == 2:
        return f"`{what}` in `{chain[1].name}`, which it calls"
    hops = " -> ".join(f"`{c.name}`" for c in chain[1:-1])
    return f"`{what}` in `{chain[-1].name}`, reached through {hops}"


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- "decompose all but these ops": the shape the codemod replaces --------------------------
def _keep_ops(roots: list[Callee], graph: CallGraph) -> list[Located] | None:
    """The ops a pass keeps when it is exactly: export, default table minus ops, decompose, `.module()`.

    Any other statement (a graph edit, a helper call, a different table) returns None:
    the codemod only replaces a pass that `preserve_ops` reproduces.
    """
    if len(roots) != 1 or isinstance(roots[0].node, ast.Lambda):
        return None
    callee = roots[0]
    resolver = callee.resolver(graph.project, graph.optable)
    body = callee.node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    table: str | None = None
    programs: set[str] = set()
    kept: list[Located] = []
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, value = stmt.targets[0].id, stmt.value
            if _is_call(value, resolver, EXPORTS) or _decomposed(value, programs, table, resolver):
                programs.add(name)
            elif _is_call(value, resolver, DEFAULT_TABLES):
                table = name
            else:
                return None
        elif table and (op := _removes(stmt, table)) is not None:
            kept.append(Located(op, callee.scope))
        elif table and isinstance(stmt, ast.For) and len(stmt.body) == 1 and isinstance(stmt.target, ast.Name):
            if _removes(stmt.body[0], table, stmt.target.id) is None:
                return None
            members = resolver.members(stmt.iter)
            if members is None:
                return None
            kept.extend(members)
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            value = stmt.value
            ok = isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "module"
            inner = value.func.value if ok else None
            if not ok or not (
                _decomposed(inner, programs, table, resolver) or (isinstance(inner, ast.Name) and inner.id in programs)
            ):
                return None
            return kept or None
        else:
            return None
    return None


def _is_call(node: ast.AST, resolver: Resolver, names: frozenset) -> bool:
    return isinstance(node, ast.Call) and resolver.qualname(node.func) in names


def _decomposed(node, programs: set[str], table: str | None, resolver: Resolver) -> bool:
    """`<program>.run_decompositions(<table>)` where the program is an export of the graph."""
    if not (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "run_decompositions"
    ):
        return False
    args = node.args or [k.value for k in node.keywords if k.arg == "decomp_table"]
    source = node.func.value
    exported = (isinstance(source, ast.Name) and source.id in programs) or _is_call(source, resolver, EXPORTS)
    return exported and len(args) == 1 and isinstance(args[0], ast.Name) and args[0].id == table


def _removes(stmt: ast.stmt, table: str, loop_var: str | None = None) -> ast.expr | None:
    """The op removed by `table.pop(op[, default])` or `del table[op]`."""
    op = None
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "pop" and 1 <= len(call.args) <= 2:
            op = call.args[0] if isinstance(func.value, ast.Name) and func.value.id == table else None
    elif isinstance(stmt, ast.Delete) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
        target = stmt.targets[0]
        if isinstance(target.value, ast.Name) and target.value.id == table:
            op = target.slice
    if op is None:
        return None
    if loop_var is not None:
        return op if isinstance(op, ast.Name) and op.id == loop_var else None
    return op


def _spell(ctx: FileContext, op: Located) -> str | None:
    """How to write an op of the pass's module in the recipe's module, if it is an overload.

    A packet (`aten.linear`) pops nothing from a table keyed by overloads, so a pass that
    "keeps" one keeps nothing: no codemod for it."""
    there = Resolver(op.scope, ctx.project, ctx.optable)
    ref, qual = there.op_ref(op.node), there.qualname(op.node)
    if ref is None or ref.is_packet or ref.dialect != "aten" or qual is None:
        return None
    here = Resolver(ctx.scope, ctx.project, ctx.optable)
    text = ast.unparse(op.node)
    try:
        if here.qualname(ast.parse(text, mode="eval").body) == qual:
            return text
    except SyntaxError:
        return None
    return qual if ctx.scope.imports.get("torch") == "torch" else None


def _delete_unused_def(ctx: FileContext, callee: Callee, element: ast.expr) -> list[Edit]:
    """Drop a private module-level pass that nothing else in the file refers to."""
    func = callee.node
    if callee.scope is not ctx.scope or func not in ctx.tree.body or not func.name.startswith("_"):
        return []
    uses = [n for n in ast.walk(ctx.tree) if isinstance(n, ast.Name) and n.id == func.name and n is not element]
    if uses:
        return []
    index = ctx.tree.body.index(func)
    first = first_row(func)
    while first > 1 and ctx.lines.line(first - 1).lstrip().startswith("#"):
        first -= 1
    start = Position(first, 0)
    if index + 1 < len(ctx.tree.body):
        nxt = ctx.tree.body[index + 1]
        row = first_row(nxt)
        while row - 1 > func.end_lineno and ctx.lines.line(row - 1).lstrip().startswith("#"):
            row -= 1
        return [Edit(Range(start, Position(row, 0)), "")]
    prev_end = ctx.range_of(ctx.tree.body[index - 1]).end if index else start
    return [Edit(Range(prev_end, ctx.range_of(func).end), "")]

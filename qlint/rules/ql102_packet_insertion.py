"""QL102 packet-insertion: a pass inserts an `OpOverloadPacket` as a node target.

This is the producer side of QL101: torchao 0.18's affine observers inserted
`torch.ops.torchao.*_affine` packets, and every exact matcher downstream (which keys on
`.default`, as re-exported graphs carry) missed those nodes.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from qlint.analysis.graphs.called_names import called_in
from qlint.analysis.graphs.forwarding import Forwarding, callee_name, spans_any
from qlint.analysis.graphs.fx_targets import target_store_rows
from qlint.analysis.graphs.graph_context import compiler_internal, packet_graph_context
from qlint.analysis.graphs.instance_attrs import with_instance_attrs
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.resolver import OpRef, Resolver
from qlint.diagnostic import Diagnostic
from qlint.evidence import OpEvidence
from qlint.rules.base import FileContext, FixAvailability, Rule
from qlint.rules.overload_fixes import (
    FixSite,
    op_evidence,
    op_info,
    overload_facts,
    overload_fix,
    packet_producers,
    shown,
)
from qlint.rules.packet_consumers import consumed_by_own_code

_CACHE_KEY = "ql102.insertions"


class PacketInsertion(Rule):
    code = "QL102"
    name = "packet-insertion"
    summary = "`OpOverloadPacket` inserted into an FX graph as a node target"
    runtime_check = "qlint.runtime.checks.ql101"
    evidence_type = OpEvidence
    # Necessary substrings only; `triggered_by` decides (the attribute may be split across rows).
    triggers = ("call_function", "create_node", "target")
    fix_availability = FixAvailability.SOMETIMES

    def triggered_by(self, text: str) -> bool:
        if any(spelling in text for spelling in _PLAIN):
            return True
        # `graph.\ncall_function(`, `(g\n.call_function)(`, `node.target=`: the attribute
        # written other than in one piece, as the rows the check reads (`_INSERTING`,
        # `target_store_rows`) allow.
        return any(
            _AFTER_DOT.search(text, max(0, m.start() - 200), m.start())
            for name, pattern in _ATTRIBUTES
            if name in text
            for m in pattern.finditer(text)
        )

    def skips_module(self, module: str | None) -> bool:
        # Inductor's own passes insert packets into graphs that accept them.
        return compiler_internal(module)

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        found = insertions(ctx)
        if not found or packet_graph_context(ctx):
            return
        for ref, node in found:
            info = op_info(ctx.optable, ref)
            if info is None and _own_op_checked_here(ctx, ref, found):
                continue
            if consumed_by_own_code(ctx, ref, [r for r, _ in found]):
                continue  # the project's own packet-keyed code is the node's consumer
            spelled = ctx.source_of(node)
            message = f"{shown(spelled, ref)} is an OpOverloadPacket inserted as a graph node target"
            help_ = f"Matchers keyed on overloads will miss this node: {overload_facts(info)}"
            fix = overload_fix(
                info, spelled, ctx.range_of(node), FixSite("other"), producers=packet_producers(ctx.optable, info)
            )
            evidence = op_evidence("insertion", [ref], info)
            yield ctx.diagnostic(self, node, message, fix, evidence=evidence, help=help_)


def _own_op_checked_here(ctx: FileContext, ref: OpRef, found: list[tuple[OpRef, ast.expr]]) -> bool:
    """An op the module defines itself (`custom_op("ns::name")`), inserted as a packet and
    consumed by the module's own packet-keyed checks (a test's op): nothing else inserts or
    matches it, so the graph carries what its only consumers expect."""
    name = f"{ref.namespace}::{ref.op}"
    if f'"{name}"' not in ctx.text and f"'{name}'" not in ctx.text:
        return False
    spelled = re.compile(rf"\b{re.escape(ref.namespace)}\s*\.\s*{re.escape(ref.op)}\b(?!\s*\.\s*\w)")
    inserted = sum(1 for r, _ in found if r.key == ref.key)
    return len(spelled.findall(ctx.text)) > inserted


def insertions(ctx: FileContext) -> list[tuple[OpRef, ast.expr]]:
    """Every packet the module inserts into a graph (shared with QL101 through ctx.cache)."""
    return [(ref, expr) for ref, expr in inserted_ops(ctx) if ref.is_packet]


def inserted_overloads(ctx: FileContext) -> set[tuple[str, str, str]]:
    """Ops the module inserts as overloads (`graph.call_function(aten.relu.default, ...)`)."""
    return {ref.key for ref, _ in inserted_ops(ctx) if not ref.is_packet}


def inserted_ops(ctx: FileContext) -> list[tuple[OpRef, ast.expr]]:
    """Every op (packet or overload) the module inserts into a graph."""
    if _CACHE_KEY in ctx.cache:
        return ctx.cache[_CACHE_KEY]
    found: list[tuple[OpRef, ast.expr]] = []
    # A project's own `insert(graph, op, args)` that hands `op` to `graph.call_function`
    # inserts what its callers pass.
    wrappers = Forwarding(
        _direct_insertions,
        lambda scope, cls: Resolver(scope, ctx.project, ctx.optable, class_scope=cls),
        _NEEDLES,
        ctx.scope.path,
        "ql102-insertions",
    )
    names = wrappers.find_helpers(
        ctx.scope, _rows_for(ctx), Resolver(ctx.scope, ctx.project, ctx.optable), called_in(ctx)
    )
    lines = _inserting_rows(ctx) | target_store_rows(ctx)
    if names:
        lines |= ctx.lines_containing(*sorted(names))
    # The callee can sit on one line and the packet on the next: widen each row by one.
    lines = lines | {row + 1 for row in lines}
    if lines:
        rows = sorted(lines)
        for body in bodies(ctx.tree, ctx.scope, ctx.cache):
            if body.node is not ctx.tree and not spans_any(body.node, rows):
                continue  # its statements lie within its rows: none of them is walked
            class_scope = with_instance_attrs(body.class_scope, ctx.cache, ctx.lines)
            resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, class_scope)
            for node in body.nodes(lines):
                if _is_nodespec(node, resolver):
                    continue
                exprs = list(_inserted_exprs(node))
                if not exprs and isinstance(node, ast.Call) and callee_name(node) in names:
                    exprs = wrappers.forwarded_args(node, resolver)
                for expr in exprs:
                    ref = resolver.op_ref(expr)
                    if ref is None and isinstance(expr, ast.Name):
                        located = resolver.value_of(expr)
                        if located is not None and located.scope is ctx.scope and located.node is not expr:
                            ref = resolver.op_ref(located.node)
                            expr = located.node if ref is not None else expr
                    if ref is not None:
                        found.append((ref, expr))
    unique = {(ref, expr.lineno, expr.col_offset): (ref, expr) for ref, expr in found}
    ctx.cache[_CACHE_KEY] = list(unique.values())
    return ctx.cache[_CACHE_KEY]


_NEEDLES = ("call_function", "create_node")
# How nearly every inserting file spells it: one substring test decides.
_PLAIN = (".call_function", "create_node(", ".target =")
# One pattern per name, each led by its literal (an alternation would be searched slowly).
_ATTRIBUTES = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("call_function", r"call_function\b"),
        ("create_node", r"create_node\b"),
        ("target", r"target\s*=(?!=)"),
    )
)
# Only a dot, blanks, line continuations and (within brackets) comments between the dot
# and the attribute's name (a comment is split at each `#`: one way to match, no backtracking); not an
# ellipsis (`...     target=f` in a doctest).
_AFTER_DOT = re.compile(r"(?<!\.)\.(?:\s|\\|#[^\n#]*)*\Z")
# Where `<graph>.call_function` / `.create_node` can be written: the attribute's row (the dot
# may end the row before). Rows that only hold the strings (`n.op == "call_function"`, on
# every row of a matcher) insert nothing.
_INSERTING = re.compile(r"(?:\.|^)\s*(?:call_function|create_node)\b")


def _inserting_rows(ctx: FileContext) -> frozenset[int]:
    line = ctx.lines.line
    return frozenset(r for r in ctx.lines_containing(*_NEEDLES) if _INSERTING.search(line(r)))


def _rows_for(ctx: FileContext):
    """`lines_containing` for the wrapper search: a wrapper's own insertion is a call of the
    attribute too, so the rows of the needles are those where the attribute is written."""

    def rows(*needles: str) -> frozenset[int]:
        others = tuple(n for n in needles if n not in _NEEDLES)
        found = _inserting_rows(ctx)
        return found | ctx.lines_containing(*others) if others else found

    return rows


def _direct_insertions(call: ast.Call, resolver: Resolver) -> Iterator[ast.expr]:
    """What a wrapper's body inserts. `x.call_function(op)` with nothing else is how the PT2E
    test helpers' NodeSpec is spelled (also where `NodeSpec` cannot be resolved, as when
    imported inside the function): a node of an op without inputs is no wrapper's job."""
    if _is_nodespec(call, resolver):
        return
    if (
        isinstance(call.func, ast.Attribute)
        and call.func.attr == "call_function"
        and len(call.args) + len(call.keywords) < 2
    ):
        return
    yield from _inserted_exprs(call)


def inserted_packets(ctx: FileContext) -> set[tuple[str, str]]:
    return {ref.key for ref, _ in insertions(ctx)}


def _is_nodespec(node: ast.AST, resolver: Resolver) -> bool:
    """`NodeSpec.call_function(op)` in the PT2E test helpers describes a node; it inserts nothing."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "call_function":
        owner = resolver.qualname(node.func.value)
        return bool(owner and owner.endswith("NodeSpec"))
    return False


def _inserted_exprs(node: ast.AST) -> Iterator[ast.expr]:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        attr = node.func.attr
        kwargs = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        if attr == "call_function":
            target = node.args[0] if node.args else kwargs.get("the_function")
            if target is not None:
                yield target
        elif attr == "create_node":
            op = node.args[0] if node.args else kwargs.get("op")
            target = node.args[1] if len(node.args) > 1 else kwargs.get("target")
            if isinstance(op, ast.Constant) and op.value == "call_function" and target is not None:
                yield target
    elif isinstance(node, ast.Assign):
        for tgt in node.targets:
            # `self.target = op` stores an op on a pattern object; only a node's target matters.
            if (
                isinstance(tgt, ast.Attribute)
                and tgt.attr == "target"
                and not (isinstance(tgt.value, ast.Name) and tgt.value.id in ("self", "cls"))
            ):
                yield node.value

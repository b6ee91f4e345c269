"""QL101 packet-matcher: an FX matcher keyed on an `OpOverloadPacket`.

Graph nodes carry `OpOverload`s; `packet == packet.default` is False and their hashes
differ, so a packet in a matcher silently never fires. Only places where a packet meets
a node target are flagged: eager calls of packets are far more common and fine.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from functools import cached_property

from qlint.analysis.graphs.call_parts import spans_any
from qlint.analysis.graphs.called_names import called_in
from qlint.analysis.graphs.fx_targets import target_names, target_rows
from qlint.analysis.graphs.graph_context import COMPILER_INTERNAL, LEGACY_FX, packet_graph_context
from qlint.analysis.graphs.instance_attrs import with_instance_attrs
from qlint.analysis.graphs.packet_text import spells_packet
from qlint.analysis.graphs.sinks import (
    DEFAULT_SINKS,
    TRIGGERS,
    matches_through_imports,
    may_match_here,
    mentions,
    parse_sinks,
    sink_index_for,
    sink_needles,
    sink_search,
    sinks_key,
)
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.op_refs import OpRef
from qlint.analysis.names.resolver import Resolver
from qlint.diagnostic import Diagnostic, RelatedInfo
from qlint.evidence.ops import OpEvidence
from qlint.rules.base import FileContext, FixAvailability, Rule
from qlint.rules.module_insertions import inserted_overloads, inserted_packets, insertions
from qlint.rules.overload_fixes import op_evidence, op_info, overload_facts, overload_fix, packet_producers, shown
from qlint.rules.packet_hits import Hit, overloads_compared, packets_left
from qlint.rules.packet_lookups import without_packet_lookups
from qlint.rules.sibling_overloads import missed_text, sibling_fix
from qlint.rules.target_matchers import matchers
from qlint.value_classes import replace

# APIs that compare the ops they are given with node targets exactly: `DEFAULT_SINKS`
# (`qlint.analysis.graphs.sinks`), and the rule's `extra-sinks`.
__all__ = ["DEFAULT_SINKS", "PacketMatcher", "sink_needles"]

# `ctx.cache` key: the ranges of this rule's findings (with its default options) in the
# module checked, once a run of its check there has ended.
REPORTED_WITH_DEFAULTS = "ql101.reported_with_defaults"


class PacketMatcher(Rule):
    code = "QL101"
    name = "packet-matcher"
    summary = "FX node target compared with an `OpOverloadPacket`"
    runtime_check = "qlint.runtime.checks.ql101"
    evidence_type = OpEvidence
    triggers = TRIGGERS
    identifier_triggers = True  # `n.target` in fullwidth letters is `n.target`
    # A file that matches only through a helper imported from another module of the project
    # (`check_nodes(gm, expected_node_occurrence=...)`) holds no target row and no sink.
    import_trigger = "qlint.analysis.graphs.sinks:matches_through_imports"
    text_trigger = "qlint.analysis.graphs.sinks:may_hold_matcher"
    fix_availability = FixAvailability.SOMETIMES
    options = {"fix-style": "auto", "extra-sinks": []}
    option_choices = {"fix-style": ("auto", "overload", "both")}
    option_patterns = {
        "extra-sinks": (r"(?:\*|[A-Za-z_][\w.]*):(?:[0-9]+|[A-Za-z_]\w*)", '"callee:N" or "callee:keyword"')
    }

    def triggered_by(self, text: str) -> bool:
        # Every matcher sits on a row of a node target or a sink call (the check's base lines),
        # or of a call of a helper imported from another module: the import trigger's question.
        # And only a packet the text can make is reported (`packet_text`); one imported is the
        # import trigger's question too.
        return mentions(text) and may_match_here(text, self.needles) and spells_packet(text)

    def triggered_through_imports(self, text: str, path: str, project) -> bool:
        return matches_through_imports(text, path, project, self.sinks)

    @cached_property
    def sinks(self) -> dict[str, set]:
        """Sinks by callee, parsed once per rule instance (that is, per settings)."""
        return parse_sinks(DEFAULT_SINKS + tuple(self.opts["extra-sinks"]))

    @cached_property
    def needles(self) -> tuple[str, ...]:
        return sink_needles(self.sinks)

    @cached_property
    def sinks_key(self) -> str:
        return sinks_key(self.sinks)

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        reported = []
        for diag in self._check(ctx):
            reported.append(diag.range)
            yield diag
        if self.opts == self.options:
            # QL102 asks where this rule, with its default options, reports in the module
            # (`guarded_insertions`): the check just made, not a second run of it.
            ctx.cache.setdefault(REPORTED_WITH_DEFAULTS, frozenset(reported))

    def _check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        sinks = self.sinks
        forwarding = sink_search(ctx.project, ctx.optable, ctx.scope.path, sinks, self.needles, self.sinks_key)
        helpers = forwarding.find_helpers(
            ctx.scope,
            ctx.lines_containing,
            Resolver(ctx.scope, ctx.project, ctx.optable),
            called_in(ctx),
            sink_index_for(ctx.path, ctx.project, sinks),
            ctx.words,
        )
        base_lines = target_rows(ctx) | ctx.lines_containing(*self.needles, *helpers)
        # Ops the module's classes give attributes a base class's method sinks: matched in
        # that method, reported in the body that writes them (`inherited_matchers`).
        from qlint.rules.inherited_matchers import inherited_matchers

        inherited = inherited_matchers(ctx, sinks, self.sinks_key)
        if not base_lines and not inherited:
            # Every matcher sits on one of these rows (locals bound to a node target are
            # bound on a target row): nothing to split the module into bodies for.
            return
        related: dict[int, RelatedInfo] = {}
        # Every use of each finding (a packet in a table may be compared in several bodies): a
        # finding is dropped only when none of its uses can run.
        found: dict[tuple, list[tuple[Diagnostic, Body, int, ast.expr]]] = {}
        aten_overloads = False  # whether the module compares node targets with an ATen overload
        rows = sorted(base_lines.union(use.lineno for uses in inherited.values() for use, _, _ in uses))
        packet_lookups = "overloadpacket" in ctx.words  # once: a body may look a table up by it
        for body in bodies(ctx.tree, ctx.scope, ctx.cache):
            if body.node is not ctx.tree and not spans_any(body.node, rows):
                # Every matcher of a body sits on a row of the base lines (a local bound to
                # a node target is bound on one), so a body spanning none of them holds none.
                continue
            names = target_names(body)
            lines = base_lines | ctx.lines_containing(*sorted(names)) if names else base_lines
            class_scope = with_instance_attrs(body.class_scope, ctx.cache, ctx.lines)
            resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, class_scope)
            matched = list(matchers(ctx, body, lines, resolver, names, sinks, forwarding))
            if packet_lookups:
                matched = without_packet_lookups(ctx, body, resolver, names, matched)
            for use, hits, sunk in inherited.get(id(body.node), ()):
                matched.append((use, hits))
                related[id(use)] = sunk
            aten_overloads = aten_overloads or any(
                h.ref.namespace == "aten" and not h.ref.is_packet for _, hits in matched for h in hits
            )
            # A body that also compares targets with overloads of the same op handles both
            # forms (`t == aten.sym_size or t == aten.sym_size.int`) if they are the ones
            # graphs carry (`aten.sym_size.default` is TorchScript's; graphs carry `.int`), all
            # of them (`aten.arange.start` leaves `.default`): `sibling_overloads`.
            siblings = overloads_compared(matched)
            for use, hits in matched:
                hits = packets_left(ctx.optable, hits, siblings)
                if hits:
                    for hit, diag in self._report(ctx, use, hits):
                        if id(use) in related:  # the base class's method that compares it
                            diag = replace(diag, related=(*diag.related, related[id(use)]))
                        found.setdefault((diag.range, diag.message, hit.ref.key), []).append(
                            (diag, body, use.lineno, use)
                        )
        # Cheap checks first, whole-module checks only when there is something to report.
        if not found:
            return
        # Imported here, for the same reason: most modules checked match no packet.
        from qlint.analysis.graphs.guarded_after_strip import row_runs_after_strips
        from qlint.analysis.graphs.hand_built_graphs import matched_on_kept_graph
        from qlint.analysis.graphs.reexport import never_runs, sees_overloads
        from qlint.analysis.graphs.returned_graph_uses import matched_on_stripped_return
        from qlint.analysis.graphs.stripped_here import matched_after_strip
        from qlint.rules.called_insertions import matched_on_called_insertion
        from qlint.rules.dynamo_recorded_packets import matched_on_dynamo_graph
        from qlint.rules.normalised_graphs import normalised_before, renamed_by_front_end
        from qlint.rules.own_op_matchers import keyed_on_own_op_packet
        from qlint.rules.packet_origins import (
            consumes_linked_insertion,
            inserted_elsewhere,
            keyed_on_own_traced_insertion,
        )

        found = _live_uses(ctx, found, never_runs)
        if not found:
            return
        context = packet_graph_context(ctx)
        if context == LEGACY_FX and aten_overloads:
            # A symbolic trace of a model records the torch functions its code calls, not
            # ATen overloads: a module comparing node targets with one matches dispatcher-level
            # graphs (export, make_fx, AOT), whatever it traces symbolically besides (pattern
            # graphs for a rewriter: AITemplate's fx2ait). Its ATen packets are judged as
            # anywhere else; other packets keep the legacy excuse (FX-mode lowering inserts
            # and matches `quantized.*` packets).
            found = {key: v for key, v in found.items() if key[2][1] == "aten"}
            context = None
        elif context == LEGACY_FX:
            # A subgraph rewriter traces its patterns symbolically; the graph its matcher
            # searches comes from its callers, and is one of overloads when a caller's pattern
            # calls ATen overloads (`matcher_sides`). The pattern side keeps the excuse.
            from qlint.analysis.graphs.matcher_sides import graph_side_compared, handed_overload_patterns

            searched = {
                key: v for key, v in found.items() if key[2][1] == "aten" and graph_side_compared(ctx, v[1], v[3])
            }
            if searched and handed_overload_patterns(ctx):
                found, context = searched, None
        if context == COMPILER_INTERNAL:
            # Compiler graphs accept packets, except that a node this module inserts as an
            # overload never equals the packet it then compares with.
            own = inserted_overloads(ctx)
            yield from (d for key, (d, _, _, _) in found.items() if key[2] in own)
        elif context is None:
            loud = []
            for key, (diag, body, row, use) in found.items():
                if (
                    _fresh_packets(ctx, key[2])
                    and "add_dont_constant_fold" not in ctx.word_lines.line(row)  # Inductor's graphs
                    and not sees_overloads(ctx, body, row)
                ):
                    # The installed torchao inserts this op as a packet: right on graphs
                    # fresh from convert_pt2e, which is what the module shows it matches.
                    continue
                # What the rest of the project does to graphs, asked last: it reads other modules.
                if (
                    not matched_after_strip(ctx, body, row)
                    # Not into an exported graph it is seen to match: that one holds overloads.
                    and not (inserted_elsewhere(ctx, key[2]) and not sees_overloads(ctx, body, row))
                    and not keyed_on_own_op_packet(ctx, key[2])
                    and not consumes_linked_insertion(ctx, key[2])
                    and not normalised_before(ctx, body)
                    and not (key[2][0] == "aten" and renamed_by_front_end(ctx, body, key[2][1]))
                    and not matched_on_dynamo_graph(ctx, body, key[2])
                    and not matched_on_kept_graph(ctx, body, row)
                    and not row_runs_after_strips(ctx, body, row)
                    and not matched_on_stripped_return(ctx, body, row)
                    and not keyed_on_own_traced_insertion(ctx, key[2], body)
                    and not matched_on_called_insertion(ctx, key[2], body, use)
                ):
                    loud.append((key[2], diag, body, use))
            if loud:
                # Asked once the rest is answered: it holds only where the guard it walks from
                # is keyed on a packet this check leaves alone (`own_op_arguments`).
                from qlint.rules.own_op_arguments import matched_on_own_op_argument

                reported = {op for op, _, _, _ in loud}
                for op, diag, body, use in loud:
                    if not matched_on_own_op_argument(ctx, op, body, use, reported):
                        yield diag

    def _report(self, ctx: FileContext, use: ast.expr, hits: list[Hit]) -> Iterator[tuple[Hit, Diagnostic]]:
        inserted = inserted_packets(ctx)
        style = self.opts["fix-style"]
        for hit in hits:
            if hit.ref.key in inserted and (_own_insertion_stands(ctx, hit.ref) or _consumed_here(ctx, hit.ref)):
                continue
            node, path = hit.element.node, hit.element.scope.path
            remote = hit.element.scope is not ctx.scope
            if remote:
                # Written in the module that defines the constant: reported here, where it is
                # compared, with the fix (and a related location) in that module.
                rng, spelled = ctx.project.locate(path, node)
            else:
                rng, spelled = ctx.range_of(node), ctx.source_of(node)
            info = op_info(ctx.optable, hit.ref)
            producers = packet_producers(ctx.optable, info)
            if producers:
                # The installed stack inserts this op as a packet: fresh graphs carry the
                # packet, re-exported ones the overload. Only matching both is right.
                reach = (
                    f"It matches only graphs the installed torchao builds with packets "
                    f"({', '.join(producers)} flows), not exported or re-exported ones"
                )
                short = "it misses exported graphs"
            else:
                reach = "It never matches a graph node"
                short = "it never matches a graph node"
            what = f"{shown(spelled, hit.ref)} is an OpOverloadPacket compared with FX node targets: {short}"
            both = style == "both" or (style == "auto" and producers)
            if hit.missed:
                what = f"{what}, and {missed_text(hit.missed)}"
                fix = sibling_fix(spelled, rng, hit.missed, bool(both))
            else:
                fix = overload_fix(info, spelled, rng, hit.site, "both" if both else "overload", producers)
            related: tuple[RelatedInfo, ...] = ()
            if remote:
                # Relative to the file being checked, as a person reading it would look for it.
                where = f"{os.path.relpath(path, os.path.dirname(os.path.abspath(ctx.path)))}:{rng.start.row}"
                what = (
                    f"`{ctx.source_of(use)}` holds OpOverloadPacket {shown(spelled, hit.ref)} "
                    f"(defined in {where}), compared with node targets"
                )
                fix = replace(
                    fix, message=f"{fix.message} in {where}", edits=tuple(replace(e, path=path) for e in fix.edits)
                )
                related = (RelatedInfo(path, rng, f"OpOverloadPacket `{hit.ref.spelled()}` written here"),)
            kind = "collection" if hit.site.kind == "element" else "comparison"
            yield (
                hit,
                ctx.diagnostic(
                    self,
                    use if remote else node,
                    what,
                    fix,
                    evidence=op_evidence(kind, [hit.ref], info, hit.beside if hit.missed else (), hit.missed),
                    related=related,
                    help=f"{reach}: {overload_facts(info)}",
                ),
            )


def _live_uses(ctx: FileContext, found: dict[tuple, list], nested_never_runs) -> dict[tuple, tuple]:
    """Each finding with its first use that may run. A comparison in a function nothing can call
    compares nothing: one nested in a body that never names it (`nested_never_runs`), or a
    private function or private method of a baseless class that no code of the project names
    (`never_called`, as QL102 judges insertions: functorch's `_canonicalize`). A public one
    stays live: a library's users call it."""
    from qlint.analysis.graphs.never_called import never_runs as never_called

    live = {}
    for key, uses in found.items():
        use = next((u for u in uses if not nested_never_runs(ctx, u[1]) and not never_called(ctx, u[2])), None)
        if use is not None:
            live[key] = use
    return live


def _own_insertion_stands(ctx: FileContext, ref: OpRef) -> bool:
    """Whether the module's own insertion of the packet makes its matcher right: where QL102
    leaves the insertion alone (graphs that carry packets), or for an op the op table does not
    know (the project's own op, which nothing else inserts). A known op inserted as a packet
    into graphs that carry its overloads (convert inserts `.default`) is QL102's finding, and
    the matcher misses the nodes it did not insert itself."""
    return packet_graph_context(ctx) is not None or op_info(ctx.optable, ref) is None


def _consumed_here(ctx: FileContext, ref: OpRef) -> bool:
    """Whether QL102 leaves the module's own insertion of the packet alone because the
    project's packet-keyed code consumes those nodes, every matcher of the op here being keyed
    on the packet (a pass that inserts `aten.linear` for `t`+`mm` pairs, then folds the views
    around the very nodes it inserted: Torch-TensorRT's aten lowering). This matcher is that
    code: it matches what its module put there; an overload-keyed one here would make QL102
    report the insertion instead."""
    from qlint.rules.packet_consumers import consumed_by_own_code

    found = insertions(ctx)
    return consumed_by_own_code(ctx, ref, [r for r, _ in found], [e.lineno for r, e in found if r.key == ref.key])


def _fresh_packets(ctx: FileContext, key: tuple[str, str, str]) -> bool:
    """Whether the installed stack inserts the op `key` as a packet (edge graphs never do)."""
    if key[0] != "aten":
        return False
    info = ctx.optable.lookup(key[1], key[2])
    return bool(packet_producers(ctx.optable, info))

"""Packets a project inserts and then consumes itself, keyed on the packet (QL102).

QL102 reports a packet inserted as a node target because matchers keyed on the op's
overloads (as exported graphs carry them) miss that node. Where the project's own code is
the node's only consumer, and that code is keyed on the packet, nothing misses it:

- a paired pass: one pass inserts `aten.zeros_like` nodes into a prepared QAT graph, and a
  pass written for them (its module imports the inserting one, or the inserting module
  erases them itself) finds them by the packet (`n.target == aten.zeros_like`,
  `partial(is_op_node, target_op=aten.zeros_like)`) and erases them before convert
  (ExecuTorch's NXP simulated linear-bn fusion);
- a table that registers the packet beside its overloads (`@converter(aten.reshape)` and
  `@converter(aten.reshape.default)` on one function): a compile backend's converter finds
  the node in either form (torch_migraphx).

It stays a finding when the packet may meet code keyed on the overload only: a site in the
inserting module or in a consuming module that compares with the op's overloads and not
its packet; or a re-export between the insertion and the consumer (a function of the
project that applies the inserting module's pass, then exports or lowers the graph before
calling anything of a consuming module): re-export turns the packet into `.default`, which
the packet-keyed consumer then misses. Matchers in modules that neither insert nor consume
the packet are not read: the node reaches them only through such a re-export or lowering.
A packet-keyed matcher in a module unrelated to the insertion proves nothing: torch's
constant folding lists the `pt2e_quant.dequantize_affine` packet its observers insert, and
the converted graphs still go to users whose matchers are keyed on `.default`.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis import scan_memo
from qlint.analysis.context import FileContext
from qlint.analysis.graphs.call_parts import callee_name
from qlint.analysis.graphs.insertions import writes_insertion
from qlint.analysis.graphs.own_insertions import inserting_functions
from qlint.analysis.graphs.project_texts import project_modules, text_holding
from qlint.analysis.names.op_refs import OpRef
from qlint.rules.op_spellings import DefinedOp, OverloadSpelling, PacketSpelling
from qlint.rules.op_spellings import packet_spellings as packet_spellings  # QL102 imports it from here
from qlint.rules.packet_scan import (
    NAME_KEY,
    defined_names,
    imported_names,
    inserting_names,
    matching_module,
    module_stem,
    modules_spelling,
)
from qlint.rules.packet_sites import op_sites, table_sites

# Calls after which a graph's packets are overloads: a new capture or a lowering.
_REEXPORTS = frozenset(
    {"export", "export_for_training", "to_edge", "to_edge_transform_and_lower", "run_decompositions"}
)
_DEFINES = "ql102-defines:"  # `scan_memo`'s question: a module that defines the op named after it


def consumed_by_own_code(ctx: FileContext, ref: OpRef, refs: list[OpRef], rows: list[int] | None = None) -> bool:
    """Whether the project's own code keyed on the packet `ref` consumes the nodes this module
    inserts with it, and nothing keyed on its overloads only is known to see them. `refs`: every
    packet the module inserts, so one read of the project serves them all; `rows`: the lines
    this module inserts `ref` on (None: any function of the module may)."""
    consumers, reexported = _own_consumer_verdict(ctx, ref, refs, rows)
    return bool(consumers) and not reexported


def reexported_before_own_consumer(
    ctx: FileContext, ref: OpRef, refs: list[OpRef], rows: list[int] | None = None
) -> FileContext | None:
    """The project's own packet-keyed consumer of these nodes (as `consumed_by_own_code` finds
    it) that a function of the project reaches only after exporting or lowering the graph again:
    by then the node is `.default`, which the consumer misses (QL102 names it)."""
    consumers, reexported = _own_consumer_verdict(ctx, ref, refs, rows)
    if reexported:
        return next((c for c in consumers if c is not ctx), consumers[0])
    return None


def _own_consumer_verdict(
    ctx: FileContext, ref: OpRef, refs: list[OpRef], rows: list[int] | None
) -> tuple[list[FileContext], bool]:
    """(the own packet-keyed consumers, whether the graph is exported again before them), once
    per check, op and rows: QL102 asks `consumed_by_own_code` of an insertion, and then, of one
    it did not excuse, `reexported_before_own_consumer`, the same two questions."""
    key = ("packet_consumers.verdict", ref.key, tuple(rows) if rows is not None else None)
    found = ctx.cache.get(key)
    if found is None:
        consumers = _own_consumers(ctx, ref, refs)
        reexported = bool(consumers) and _reexported_between(ctx, consumers, _users(ctx), rows)
        found = ctx.cache[key] = (consumers, reexported)
    return found


def _own_consumers(ctx: FileContext, ref: OpRef, refs: list[OpRef]) -> list[FileContext]:
    """The modules keyed on the packet that consume what this module inserts (none when this
    module or one of them also matches the op by an overload only)."""
    key = ref.key
    found = modules_spelling(ctx, refs)
    consumers: list[FileContext] = []
    for module in [ctx, *found.get(PacketSpelling(ref).pattern, ())]:
        sites = [s for s in op_sites(module, ref.op) if any(r.key == key for r in s)]
        if any(not any(r.key == key and r.is_packet for r in s) for s in sites):
            return []  # this module also matches the op by an overload only
        if not sites:
            continue
        if module is ctx:
            paired = _erases(module)
        else:
            # A pass written for these nodes (it imports the inserting module, or is imported by
            # it), or a lowering table that takes the op in either form. A packet-keyed matcher
            # anywhere else does not show where the graph goes next (a library's graphs go to
            # its users, whose matchers are keyed on overloads).
            paired = (
                linked_modules(ctx, module)
                or any(_both_forms(s, key) for s in table_sites(module, ref.op))
                or _helper_of_linked_passes(ctx, module)
            )
        if paired:
            consumers.append(module)
    return consumers


def _users(ctx: FileContext) -> list[FileContext]:
    """The modules naming what this module defines. Read only once there is a consumer:
    searching every module for each of its names costs most of the scan, and most insertions
    have no consumer."""
    naming = modules_spelling(ctx, [], names=True)
    return list({id(m): m for n in sorted(inserting_names(ctx)) for m in naming.get(NAME_KEY + n, ())}.values())


def own_op_keyed_on_packet(ctx: FileContext, ref: OpRef, refs: list[OpRef], rows: list[int] | None = None) -> bool:
    """An op the project defines itself (`custom_op("ns::op")`, `torch.library.define("ns::op(...)")`),
    inserted as its packet, where every module of the project that spells the op spells its
    packet and none an overload, and one that does not insert it keys on it (Samsung TICO's
    `circle_custom` ops: passes insert the packets, and the serializer's visitors are registered
    under the same packets). No one outside the project knows the op, so the project's own code is
    every consumer its nodes have, and all of it expects the packet. Still a finding when the
    graph is exported or lowered again between the insertion and those consumers (the packet
    would come back as `.default`). `refs`: every packet the module inserts, as
    `consumed_by_own_code` takes them, so one read of the project serves them all."""
    defined = DefinedOp(ref)
    overload = OverloadSpelling(ref)
    needles = (ref.op.encode(),)
    consumers: list[FileContext] = []
    # A consumer spells the packet and inserts nothing; the modules spelling each packet the
    # module inserts are the ones `consumed_by_own_code` reads anyway (same scan, kept per check).
    if all(writes_insertion(m.text) for m in modules_spelling(ctx, refs).get(PacketSpelling(ref).pattern, ())):
        return False
    own = defined.search(ctx.text)
    if overload.search(ctx.words):
        return False
    # Most ops are defined by no module of the project (torch's `pt2e_quant` ops in torch's
    # own tree: every module spelling `quantize_affine` was read at every check). Which modules
    # define it is kept per content, so only a project that defines it is read for the rest.
    if not own and f"{ref.namespace}::{ref.op}" not in _defined_elsewhere(ctx, refs):
        return False
    for path, key in project_modules(ctx, (ref.op,)):
        if key is None or os.path.abspath(path) == os.path.abspath(ctx.path):
            continue
        module = matching_module(
            ctx, path, key, [(defined, needles), (overload, needles), (PacketSpelling(ref), needles)]
        )
        if module is None:
            continue
        if overload.search(module.text):
            return False  # some code of the project is keyed on (or inserts) an overload of it
        own = own or defined.search(module.text)
        if PacketSpelling(ref).search(module.text) and not writes_insertion(module.text):
            consumers.append(module)  # it spells the packet and inserts nothing: it keys on it
    if not own or not consumers:
        return False
    return not _reexported_between(ctx, consumers, _users(ctx), rows)


def _defined_elsewhere(ctx: FileContext, refs: list[OpRef]) -> set[str]:
    """Which of the ops `refs` another module of the project defines (`"ns::op"` opening a
    string), each module read once for all of them."""
    names = sorted({f"{r.namespace}::{r.op}" for r in refs})
    cache_key = (_DEFINES, tuple(names))
    if cache_key in ctx.cache:
        return ctx.cache[cache_key]
    searches = {f"{r.namespace}::{r.op}": DefinedOp(r) for r in refs}
    questions = [_DEFINES + n for n in names]
    own = os.path.abspath(ctx.path)
    modules = [(p, k) for p, k in project_modules(ctx, tuple(names)) if k is not None and p != own]
    found: set[str] = set()
    for path, key, known in scan_memo.unanswered(modules, questions):
        pending = [n for n, held in zip(names, known, strict=True) if held is None]
        found.update(n for n, held in zip(names, known, strict=True) if held)
        read = text_holding(ctx.project, path, key, tuple(n.encode() for n in pending)) if pending else None
        for n in pending:
            holds = read is not None and searches[n].search(read[0])
            scan_memo.note(path, _DEFINES + n, key, bool(holds))
            if holds:
                found.add(n)
    ctx.cache[cache_key] = found
    return found


def _both_forms(site: frozenset[OpRef], key: tuple[str, str, str]) -> bool:
    return any(r.key == key and r.is_packet for r in site) and any(r.key == key and not r.is_packet for r in site)


def linked_modules(inserting: FileContext, other: FileContext) -> bool:
    """One of the two modules imports the other (by its module name's last part: relative
    imports and repositories whose package maps onto the root spell it differently). An
    import spells the name, so a module whose text lacks it is not walked (torch's observer
    module: 25 ms a check)."""
    return _imports(inserting, module_stem(other)) or _imports(other, module_stem(inserting))


def _helper_of_linked_passes(inserting: FileContext, module: FileContext) -> bool:
    """A helper module only passes linked to the inserting module import (`helper_links`):
    asked last, as it reads the modules naming the helper."""
    from qlint.rules.helper_links import linked_through_importers

    return linked_through_importers(inserting, module, inserting)


def may_link(text: str, path: str, other: FileContext) -> bool:
    """Whether the module at `path` holding `text` may be linked to `other` (`linked_modules`),
    asked before it is parsed: it spells `other`'s module name, or `other` imports it."""
    return module_stem(other) in text or _imports(other, os.path.splitext(os.path.basename(path))[0])


def _imports(module: FileContext, name: str) -> bool:
    return name in module.text and name in imported_names(module)


def _erases(module: FileContext) -> bool:
    """The inserting module consumes its own packets where it also erases or replaces nodes."""
    return "erase_node" in module.text or "replace_all_uses_with" in module.text


def _reexported_between(
    ctx: FileContext, consumers: list[FileContext], users: list[FileContext], rows: list[int] | None
) -> bool:
    """A function of the project (`users`: the modules naming what the inserting module
    defines) that calls what inserts the packet (`inserting_functions` of the rows it is
    inserted on; every name the module defines when the caller gave none), then exports or
    lowers before calling anything a consuming module defines."""
    inserting = inserting_functions(ctx, rows or []) or inserting_names(ctx)
    consuming = set().union(*(defined_names(c) for c in consumers if c is not ctx)) - inserting
    if not inserting:
        return False
    for module in [ctx, *users]:
        for func in ast.walk(module.tree):
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and _reexports_after(
                func, inserting, consuming
            ):
                return True
    return False


def _reexports_after(func: ast.AST, inserting: set[str], consuming: set[str]) -> bool:
    calls = sorted(
        ((n.lineno, n.col_offset, callee_name(n) or "") for n in ast.walk(func) if isinstance(n, ast.Call)),
    )
    inserted = False
    for _, _, name in calls:
        if name in inserting:
            inserted = True
        elif inserted and name in consuming:
            inserted = False  # consumed before anything else happened to the graph
        elif inserted and name in _REEXPORTS:
            return True
    return False

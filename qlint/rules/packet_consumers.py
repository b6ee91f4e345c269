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
import re
from collections import Counter

from qlint.analysis import scan_memo
from qlint.analysis.context import FileContext
from qlint.analysis.graphs.insertions import writes_insertion
from qlint.analysis.graphs.project_scan import project_modules, text_holding
from qlint.analysis.names.live_trees import parse as live_parse
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.resolver import OpRef, Resolver
from qlint.analysis.names.tree_handover import HANDOVER
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk_kinds
from qlint.source import LineIndex

# Calls after which a graph's packets are overloads: a new capture or a lowering.
_REEXPORTS = frozenset(
    {"export", "export_for_training", "to_edge", "to_edge_transform_and_lower", "run_decompositions"}
)
_CACHE_KEY = "ql102.consumer-sites"
_SCAN_KEY = "ql102.consumer-scan"
# path -> (content key, the module parsed)
_PARSED: dict[str, tuple[tuple, FileContext | None]] = {}
# The file whose checks `_PARSED` serves: an editor checks one buffer again and again, but
# over a tree each file is checked once, and the parses kept for the run were whole trees
# (~7 MiB over ao) asked for again a handful of times.
_PARSED_FOR: list[str | None] = [None]
# (checked path, the patterns asked) -> (the project's (path, content key) list the scan read,
# (path, key) of the modules it found per pattern): the last scan of each file an editor
# checks again (`_scan`); a few files, each holding one list of the project's modules.
_LAST_SCAN: dict[tuple[str, tuple[str, ...]], tuple[list, dict[str, list[tuple[str, tuple]]]]] = {}
_MAX_LAST_SCANS = 8
# `scan_memo`'s questions: a module that does not spell the pattern that follows.
_QUESTION = "ql102-consumer:"
_DEFINES = "ql102-defines:"  # `scan_memo`'s question: a module that defines the op named after it
_NAME = "name:"  # in `_scan`'s table, a name the inserting module defines, not a packet pattern


def checked_once(path: str) -> None:
    """The check of `path` ended and the file will not be checked again (a command-line run):
    the consumer modules parsed for it go now, not when the next file's check parses one, so
    later checks do not allocate on top of them (whole trees: ~5 MiB of a worker on ao)."""
    if _PARSED_FOR[0] == path:
        _PARSED.clear()
        _PARSED_FOR[0] = None


def consumed_by_own_code(ctx: FileContext, ref: OpRef, refs: list[OpRef]) -> bool:
    """Whether the project's own code keyed on the packet `ref` consumes the nodes this module
    inserts with it, and nothing keyed on its overloads only is known to see them. `refs`: every
    packet the module inserts, so one read of the project serves them all."""
    key = ref.key
    found = _scan(ctx, refs)
    consumers: list[FileContext] = []
    for module in [ctx, *found.get(_spelled(ref).pattern, ())]:
        sites = [s for s in _sites(module, ref.op) if any(r.key == key for r in s)]
        if any(not any(r.key == key and r.is_packet for r in s) for s in sites):
            return False  # this module also matches the op by an overload only
        if not sites:
            continue
        if module is ctx:
            paired = _erases(module)
        else:
            # A pass written for these nodes (it imports the inserting module, or is imported by
            # it), or a lowering table that takes the op in either form. A packet-keyed matcher
            # anywhere else does not show where the graph goes next (a library's graphs go to
            # its users, whose matchers are keyed on overloads).
            paired = _linked(ctx, module) or any(_both_forms(s, key) for s in _table_sites(module, ref.op))
        if paired:
            consumers.append(module)
    if not consumers:
        return False
    # The modules naming what this module defines are read only now: searching every module for
    # each of its names costs most of the scan, and most insertions have no consumer.
    naming = _scan(ctx, [], names=True)
    users = list({id(m): m for n in sorted(_inserting_names(ctx)) for m in naming.get(_NAME + n, ())}.values())
    return not _reexported_between(ctx, consumers, users)


def own_op_keyed_on_packet(ctx: FileContext, ref: OpRef, refs: list[OpRef]) -> bool:
    """An op the project defines itself (`custom_op("ns::op")`, `torch.library.define("ns::op(...)")`),
    inserted as its packet, where every module of the project that spells the op spells its
    packet and none an overload, and one that does not insert it keys on it (Samsung TICO's
    `circle_custom` ops: passes insert the packets, and the serializer's visitors are registered
    under the same packets). No one outside the project knows the op, so the project's own code is
    every consumer its nodes have, and all of it expects the packet. Still a finding when the
    graph is exported or lowered again between the insertion and those consumers (the packet
    would come back as `.default`). `refs`: every packet the module inserts, as
    `consumed_by_own_code` takes them, so one read of the project serves them all."""
    defined = _Defined(ref)
    overload = _Overload(ref)
    needles = (ref.op.encode(),)
    consumers: list[FileContext] = []
    # A consumer spells the packet and inserts nothing; the modules spelling each packet the
    # module inserts are the ones `consumed_by_own_code` reads anyway (same scan, kept per check).
    if all(writes_insertion(m.text) for m in _scan(ctx, refs).get(_spelled(ref).pattern, ())):
        return False
    own = defined.search(ctx.text)
    if overload.search(ctx.text):
        return False
    # Most ops are defined by no module of the project (torch's `pt2e_quant` ops in torch's
    # own tree: every module spelling `quantize_affine` was read at every check). Which modules
    # define it is kept per content, so only a project that defines it is read for the rest.
    if not own and f"{ref.namespace}::{ref.op}" not in _defined_elsewhere(ctx, refs):
        return False
    for path, key in project_modules(ctx, (ref.op,)):
        if key is None or os.path.abspath(path) == os.path.abspath(ctx.path):
            continue
        module = _module(ctx, path, key, [(defined, needles), (overload, needles), (_spelled(ref), needles)])
        if module is None:
            continue
        if overload.search(module.text):
            return False  # some code of the project is keyed on (or inserts) an overload of it
        own = own or defined.search(module.text)
        if _spelled(ref).search(module.text) and not writes_insertion(module.text):
            consumers.append(module)  # it spells the packet and inserts nothing: it keys on it
    if not own or not consumers:
        return False
    naming = _scan(ctx, [], names=True)
    users = list({id(m): m for n in sorted(_inserting_names(ctx)) for m in naming.get(_NAME + n, ())}.values())
    return not _reexported_between(ctx, consumers, users)


def _defined_elsewhere(ctx: FileContext, refs: list[OpRef]) -> set[str]:
    """Which of the ops `refs` another module of the project defines (`"ns::op"` opening a
    string), each module read once for all of them."""
    names = sorted({f"{r.namespace}::{r.op}" for r in refs})
    cache_key = (_DEFINES, tuple(names))
    if cache_key in ctx.cache:
        return ctx.cache[cache_key]
    searches = {f"{r.namespace}::{r.op}": _Defined(r) for r in refs}
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


class _Defined:
    """`search(text)`: the op's qualified name as a string literal opens it (`"ns::op"` or a
    schema `"ns::op(Tensor x) -> Tensor"`), as `custom_op`, `register_fake` and
    `torch.library.define` spell it."""

    def __init__(self, ref: OpRef):
        self._regex = re.compile(rf"""["']{re.escape(ref.namespace)}::{re.escape(ref.op)}(?=["'(.])""")

    def search(self, text: str) -> bool:
        return self._regex.search(text) is not None


class _Overload:
    """`search(text)`: one of the op's overloads (`ns.op.default`, `ns.op.Tensor`)."""

    def __init__(self, ref: OpRef):
        self._regex = re.compile(rf"\b{re.escape(ref.namespace)}\s*\.\s*{re.escape(ref.op)}\s*\.\s*[A-Za-z_]\w*")

    def search(self, text: str) -> bool:
        return self._regex.search(text) is not None


class _Packet:
    """`search(text)`: the packet as an op (`aten.permute`, not a tensor's `x.permute(...)`), no
    overload after it. The pattern starts with a literal (a leading `\\b` makes `re` scan 20x
    slower), and the word boundary before it is checked here."""

    def __init__(self, ref: OpRef):
        self.pattern = rf"{re.escape(ref.namespace)}\s*\.\s*{re.escape(ref.op)}\b(?!\s*\.\s*\w)"
        self._regex = re.compile(self.pattern)

    def search(self, text: str) -> bool:
        return any(True for _ in self._spellings(text))

    def count(self, text: str) -> int:
        """How many times `text` spells the packet (what `findall` of the pattern with a
        leading `\\b` counts: a match that fails the boundary holds no start of one that
        passes, since the op ends at a boundary and a namespace is one word)."""
        return sum(1 for _ in self._spellings(text))

    def _spellings(self, text: str):
        for m in self._regex.finditer(text):
            before = text[m.start() - 1] if m.start() else " "
            if not (before.isalnum() or before == "_"):
                yield m


def _spelled(ref: OpRef) -> _Packet:
    return _Packet(ref)


def packet_spellings(ref: OpRef, text: str) -> int:
    """How many times `text` names the packet `ref` (`ns.op`, no overload after it)."""
    return _Packet(ref).count(text)


def _inserting_names(ctx: FileContext) -> set[str]:
    return _defined(ctx) - {"call", "main"}


def _scan(ctx: FileContext, refs: list[OpRef], names: bool = False) -> dict[str, list[FileContext]]:
    """The project's other modules that spell each packet, or (`names`) those that name each
    function or class this module defines, in one read of the project (a consumer or a pipeline need not insert
    anything, so the project scan's own selection of modules does not hold them)."""
    cache_key = (_SCAN_KEY, names)
    if cache_key in ctx.cache:
        return ctx.cache[cache_key]
    wanted: dict[str, tuple[_Packet | _AnyName, tuple[bytes, ...]]] = {}
    for ref in refs:
        wanted[_spelled(ref).pattern] = (_spelled(ref), (ref.op.encode(),))
    # One search per name, not one for all: what is known of a module not naming `f` still
    # holds after an edit defines `g` beside it.
    for name in sorted(_inserting_names(ctx)) if names else ():
        wanted[_NAME + name] = (_AnyName({name}), (name.encode(),))
    found: dict[str, list[FileContext]] = {p: [] for p in wanted}
    own = os.path.abspath(ctx.path)
    needles = tuple(n.decode() for _, encoded in wanted.values() for n in encoded)
    modules = project_modules(ctx, needles) if wanted else []
    # Which modules spell what is a function of their contents: asked again of the same
    # modules with the same keys (an editor's next check of this buffer), the modules found
    # last time are the answer, and each of the project's modules is not asked again.
    memo_key = (own, tuple(wanted))
    last = _LAST_SCAN.get(memo_key)
    if last is not None and last[0] == modules:
        for p, paths in last[1].items():
            for path, key in paths:
                module = _module(ctx, path, key, [wanted[p]])
                if module is not None:
                    found[p].append(module)
        ctx.cache[cache_key] = found
        return found
    matched: dict[str, list[tuple[str, tuple]]] = {p: [] for p in wanted}
    questions = [_QUESTION + p for p in wanted]
    others = [(path, key) for path, key in modules if path != own and key is not None]
    for path, key, known in scan_memo.unanswered(others, questions):
        pending = [p for p, held in zip(wanted, known, strict=True) if held is not False]
        if not pending:
            continue
        module = _module(ctx, path, key, [wanted[p] for p in pending])
        for p in pending:
            if module is not None and wanted[p][0].search(module.text):
                found[p].append(module)
                matched[p].append((path, key))
            else:
                scan_memo.note_miss(path, _QUESTION + p, key)
    if ctx.project.track_dependents:  # a command-line run checks each file once: nothing to keep
        if len(_LAST_SCAN) >= _MAX_LAST_SCANS:
            _LAST_SCAN.clear()
        _LAST_SCAN[memo_key] = (modules, matched)
    ctx.cache[cache_key] = found
    return found


def _module(
    ctx: FileContext, path: str, key: tuple, wanted: list[tuple[_Packet | _AnyName, tuple[bytes, ...]]]
) -> FileContext | None:
    """The module parsed, if its text matches one of `wanted` (bytes first: most do not)."""
    if _PARSED_FOR[0] != ctx.path:
        _PARSED.clear()
        _PARSED_FOR[0] = ctx.path
    known = _PARSED.get(path)
    if known is not None and known[0] == key:
        return known[1]
    read = text_holding(ctx.project, path, key, tuple(n for _, needles in wanted for n in needles))
    if read is None:
        return None
    text, data = read
    if not any(pattern.search(text) for pattern, _ in wanted):
        return None  # parsed only when it matches: op names are common words (`x.reshape(...)`)
    # A module this run checks later: the tree a summary or a scan kept for its check, or
    # this parse, kept for it (`tree_handover`).
    tree = HANDOVER.peek(os.path.abspath(path), data) if data is not None else None
    if tree is None:
        try:
            tree = live_parse(text, path)
        except (SyntaxError, ValueError, RecursionError):
            tree = None
        if tree is not None and data is not None:
            HANDOVER.keep(os.path.abspath(path), data, tree)
    module = (
        FileContext(path, text, tree, LineIndex(text), ctx.optable, ctx.project, module_name_for(path))
        if tree
        else None
    )
    _PARSED[path] = (key, module)
    return module


def _both_forms(site: frozenset[OpRef], key: tuple[str, str, str]) -> bool:
    return any(r.key == key and r.is_packet for r in site) and any(r.key == key and not r.is_packet for r in site)


def _linked(inserting: FileContext, other: FileContext) -> bool:
    """One of the two modules imports the other (by its module name's last part: relative
    imports and repositories whose package maps onto the root spell it differently). An
    import spells the name, so a module whose text lacks it is not walked (torch's observer
    module: 25 ms a check)."""
    return _imports(inserting, _stem(other)) or _imports(other, _stem(inserting))


def _imports(module: FileContext, name: str) -> bool:
    return name in module.text and name in _imported(module)


def _stem(module: FileContext) -> str:
    return os.path.splitext(os.path.basename(module.path))[0]


def _imported(module: FileContext) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ImportFrom):
            if node.module:
                out.add(node.module.rpartition(".")[2])
            out.update(a.name for a in node.names)  # `from . import add`
        elif isinstance(node, ast.Import):
            out.update(a.name.rpartition(".")[2] for a in node.names)
    return out


def _erases(module: FileContext) -> bool:
    """The inserting module consumes its own packets where it also erases or replaces nodes."""
    return "erase_node" in module.text or "replace_all_uses_with" in module.text


class _AnyName:
    """`search(text)`: one of `names` as a whole word (a regex alternation of a module's many
    names is slow on large texts; most names are not in a given text at all)."""

    def __init__(self, names: set[str]):
        self.names = sorted(names)

    def search(self, text: str) -> bool:
        return any(n in text and re.search(rf"\b{re.escape(n)}\b", text) for n in self.names)


def _sites(module: FileContext, op: str) -> list[frozenset[OpRef]]:
    """The op sets this module keys graph nodes on, among those naming `op`: a `.target`
    comparison, a `partial` predicate, the decorators of one function (a registration table)."""
    return [site for _, site in _keyed(module, op)]


def _table_sites(module: FileContext, op: str) -> list[frozenset[OpRef]]:
    return [site for table, site in _keyed(module, op) if table]


def _keyed(module: FileContext, op: str) -> list[tuple[bool, frozenset[OpRef]]]:
    cache = module.cache.setdefault(_CACHE_KEY, {})
    if op in cache:
        return cache[op]
    # Only the top-level statements spanning a line that names the op hold its sites.
    lines = module.text.splitlines()
    rows = {i for i, line in enumerate(lines, 1) if op in line}
    # ... and those naming a module-level list of it (`VIEW_OPS = [...]` compared in a function).
    listed = [
        name
        for name, value in kept_on_node(module.tree, _MODULE_BINDINGS, _module_bindings).items()
        if value is not None and any(value.lineno <= r <= (value.end_lineno or value.lineno) for r in rows)
    ]
    if listed:
        rows |= {i for i, line in enumerate(lines, 1) if any(re.search(rf"\b{n}\b", line) for n in listed)}
    statements = [s for s in module.tree.body if any(s.lineno <= r <= (s.end_lineno or s.lineno) for r in rows)]
    resolver = Resolver(module.scope, module.project, module.optable)
    sites: list[tuple[bool, frozenset[OpRef]]] = []
    for statement, node, kind in ((s, *c) for s in statements for c in _site_nodes(s)):
        exprs: list[ast.expr] = []
        table = False
        if kind is _COMPARE:
            compared = (node.left, *node.comparators)
            exprs = [
                _named_collection(module, _function_of(statement, node), e, op) for e in compared if not _is_target(e)
            ]
        elif kind is _PARTIAL:
            if not _is_partial(node.func, resolver):
                continue
            # `partial(torch.ops.aten.add, x)` calls the op; a packet handed on is a key.
            exprs = [*node.args[1:], *(k.value for k in node.keywords)]
        else:
            exprs = [a for d in node.decorator_list if isinstance(d, ast.Call) for a in d.args]
            table = True
        refs = frozenset(r for e in exprs for r in _refs(e, resolver))
        if refs:
            sites.append((table, refs))
    cache[op] = sites
    return sites


_COMPARE, _PARTIAL, _DECORATED = "compare", "partial", "decorated"
_SITES = "_qlint_packet_consumer_sites"


def _site_nodes(statement: ast.stmt) -> list[tuple[ast.AST, str]]:
    """The nodes of a top-level statement that may key graph nodes on ops, in `ast.walk`
    order: `.target` comparisons, calls of a `partial`, decorated definitions. One walk
    per statement, kept on it: a module inserting several packets is asked once per op,
    and the same class or function spans the rows of each."""
    return kept_on_node(statement, _SITES, _find_site_nodes)


# The node types `_find_site_nodes` decides on: a walk that skips the rest (attribute chains
# hanging from a name hold none of them) in `ast.walk` order, a third of the time.
_SITE_KINDS = frozenset({ast.Compare, ast.Call, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def _find_site_nodes(statement: ast.stmt) -> list[tuple[ast.AST, str]]:
    out: list[tuple[ast.AST, str]] = []
    for node in walk_kinds(statement, _SITE_KINDS):
        if isinstance(node, ast.Compare) and any(_is_target(e) for e in (node.left, *node.comparators)):
            out.append((node, _COMPARE))
        elif isinstance(node, ast.Call) and _last_name(node.func) == "partial":
            out.append((node, _PARTIAL))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append((node, _DECORATED))
    return out


def _is_partial(func: ast.expr, resolver: Resolver) -> bool:
    return _last_name(func) == "partial" and resolver.qualname(func) == "functools.partial"


def _is_target(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Attribute) and expr.attr == "target"


def _function_of(statement: ast.stmt, node: ast.AST) -> ast.AST:
    """The innermost function of `statement` holding `node` (the statement itself when none
    does), from the definitions `_site_nodes` already found: names are looked up there, not in
    a whole class."""
    inner: ast.AST = statement
    for candidate, kind in _site_nodes(statement):
        if (
            kind is _DECORATED
            and isinstance(candidate, (ast.FunctionDef, ast.AsyncFunctionDef))
            and candidate.lineno <= node.lineno <= (candidate.end_lineno or candidate.lineno)
            and candidate.lineno >= getattr(inner, "lineno", 0)
        ):
            inner = candidate
    return inner


def _named_collection(module: FileContext, scope: ast.AST, expr: ast.expr, op: str) -> ast.expr:
    """The literal list, tuple or set a compared name stands for (`n.target in VIEW_OPS`, with
    `VIEW_OPS = [aten.view, aten.view.default]` bound once in the same function, or at module
    level when the function does not bind it): a pipeline's matcher that lists both forms
    consumes the packet nodes an earlier pass of it inserted (PyTorch/XLA's dynamic-view pass).
    Anything else is returned as it is."""
    if not isinstance(expr, ast.Name) or not _lists_the_op(module, expr.id, op):
        return expr
    bound = kept_on_node(scope, _BINDINGS, _find_bindings)
    if expr.id not in bound:
        bound = kept_on_node(module.tree, _MODULE_BINDINGS, _module_bindings)
    return bound.get(expr.id) or expr


def _lists_the_op(module: FileContext, name: str, op: str) -> bool:
    """Whether the module's text assigns `name` a literal list, tuple or set that spells `op`:
    most compared names (`n.target == op`) are no such thing, and their statements need no
    walk (a class of torchao's observer module spans a thousand rows)."""
    memo = module.cache.setdefault(_LITERAL_KEY, {})
    key = (name, op)
    if key not in memo:
        text = module.text
        found = False
        for m in re.finditer(rf"^[ \t]*{re.escape(name)}[ \t]*(?::[^=\n]*)?=[ \t]*[\[({{]", text, re.M):
            if op in text[m.end() : _closing(text, m.end() - 1)]:
                found = True
                break
        memo[key] = found
    return memo[key]


def _closing(text: str, start: int) -> int:
    """Where the bracket opened at `start` closes (brackets in strings are not told apart:
    a rough end is enough to ask whether the literal spells an op)."""
    depth = 0
    for i in range(start, min(len(text), start + 20_000)):
        if text[i] in "[({":
            depth += 1
        elif text[i] in "])}":
            depth -= 1
            if depth == 0:
                return i
    return min(len(text), start + 20_000)


_LITERAL_KEY = "ql102.literal-collections"
_BINDINGS, _MODULE_BINDINGS = "_qlint_packet_consumer_bindings", "_qlint_packet_consumer_module_bindings"
_COLLECTIONS = (ast.List, ast.Tuple, ast.Set)


def _find_bindings(root: ast.AST) -> dict[str, ast.expr | None]:
    """Every name stored in `root`, with the literal collection it is bound to where that is
    its only binding; None otherwise (bound twice, or to anything else: it stands for nothing
    known). One walk."""
    stores: Counter[str] = Counter()
    literal: dict[str, ast.expr] = {}
    for node in ast.walk(root):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] += 1
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, _COLLECTIONS)
        ):
            literal[node.targets[0].id] = node.value
    return {name: literal.get(name) if count == 1 else None for name, count in stores.items()}


def _module_bindings(tree: ast.Module) -> dict[str, ast.expr | None]:
    """Module-level names, each with the literal collection it is bound to where that is its
    only module-level binding (the targets of top-level statements only: walking the values
    of a module's big tables costs more than all the rest)."""
    stores: Counter[str] = Counter()
    literal: dict[str, ast.expr] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
            targets = [statement.target]
        else:
            continue
        for target in targets:
            for name in (n for n in ast.walk(target) if isinstance(n, ast.Name)):
                stores[name.id] += 1
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and isinstance(statement.value, _COLLECTIONS):
            literal[targets[0].id] = statement.value
    return {name: literal.get(name) if count == 1 else None for name, count in stores.items()}


def _refs(expr: ast.expr, resolver: Resolver) -> list[OpRef]:
    elements = expr.elts if isinstance(expr, (ast.List, ast.Tuple, ast.Set)) else [expr]
    return [r for r in map(resolver.op_ref, elements) if r is not None]


def _reexported_between(ctx: FileContext, consumers: list[FileContext], users: list[FileContext]) -> bool:
    """A function of the project (`users`: the modules naming what the inserting module
    defines) that calls what the inserting module defines, then exports or lowers before
    calling anything a consuming module defines."""
    inserting = _inserting_names(ctx)
    consuming = set().union(*(_defined(c) for c in consumers if c is not ctx)) - inserting
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
        ((n.lineno, n.col_offset, _last_name(n.func)) for n in ast.walk(func) if isinstance(n, ast.Call)),
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


def _defined(module: FileContext) -> set[str]:
    return {
        node.name
        for node in module.tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }


def _last_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""

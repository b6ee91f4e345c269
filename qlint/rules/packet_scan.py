"""Which modules of the project spell a packet, or name what the inserting module defines
(QL102's consumers): one read of the project per check, whatever is learnt of a module kept
per content key (`scan_memo`), and only modules whose text matches parsed. The patterns are
searched as text first: op names are common words (`x.reshape(...)`).
"""

from __future__ import annotations

import ast
import os

from qlint.analysis import scan_memo
from qlint.analysis.context import FileContext
from qlint.analysis.graphs import kept_module_facts
from qlint.analysis.graphs.project_texts import project_modules, text_holding
from qlint.analysis.names.live_trees import parse as live_parse
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.op_refs import OpRef
from qlint.analysis.names.piecewise_parse import parse_by_definitions
from qlint.analysis.names.tree_handover import HANDOVER
from qlint.analysis.recent_entries import RecentEntries
from qlint.analysis.statement_walk import statements
from qlint.rules.op_spellings import AnyName, OverloadSpelling, PacketSpelling
from qlint.rules.packet_sites import SITES_KEY, op_sites
from qlint.source import LineIndex

_SCAN_KEY = "ql102.consumer-scan"
# path -> (content key, the module parsed)
_PARSED: dict[str, tuple[tuple, FileContext | None]] = {}
# The file whose checks `_PARSED` serves: an editor checks one buffer again and again, but
# over a tree each file is checked once, and the parses kept for the run were whole trees
# (~7 MiB over ao) asked for again a handful of times.
_PARSED_FOR: list[str | None] = [None]
# (checked path, the patterns asked) -> (the project's (path, content key) list the scan read,
# (path, key) of the modules it found per pattern): the last scan of each file an editor
# checks again (`modules_spelling`); a few files, each holding one list of the project's modules.
_Found = dict[str, list[tuple[str, tuple]]]
_LAST_SCAN: RecentEntries[tuple[str, tuple[str, ...]], tuple[list, _Found]] = RecentEntries(8)


def checked_once(path: str) -> None:
    """The check of `path` ended and the file will not be checked again (a command-line run):
    the consumer modules parsed for it go now, not when the next file's check parses one, so
    later checks do not allocate on top of them (whole trees: ~5 MiB of a worker on ao)."""
    if _PARSED_FOR[0] == path:
        _PARSED.clear()
        _PARSED_FOR[0] = None


# `scan_memo`'s questions: a module that does not spell the pattern that follows.
_QUESTION = "ql102-consumer:"


_DEFINED_KEY = "ql102.defined"  # `FileContext.cache` keys of what `_without_tree` keeps
_IMPORTED_KEY = "ql102.imported"
NAME_KEY = "name:"  # in `modules_spelling`'s table, a name the inserting module defines, not a packet pattern


def inserting_names(ctx: FileContext) -> frozenset[str]:
    return defined_names(ctx) - {"call", "main"}


def modules_spelling(ctx: FileContext, refs: list[OpRef], names: bool = False) -> dict[str, list[FileContext]]:
    """The project's other modules that spell each packet, or (`names`) those that name each
    function or class this module defines, in one read of the project (a consumer or a pipeline need not insert
    anything, so the project scan's own selection of modules does not hold them)."""
    cache_key = (_SCAN_KEY, names)
    if cache_key in ctx.cache:
        return ctx.cache[cache_key]
    wanted: dict[str, tuple[PacketSpelling | AnyName, tuple[bytes, ...]]] = {}
    for ref in refs:
        wanted[PacketSpelling(ref).pattern] = (PacketSpelling(ref), (ref.op.encode(),))
    # One search per name, not one for all: what is known of a module not naming `f` still
    # holds after an edit defines `g` beside it.
    for name in sorted(inserting_names(ctx)) if names else ():
        wanted[NAME_KEY + name] = (AnyName({name}), (name.encode(),))
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
                module = matching_module(ctx, path, key, [wanted[p]])
                if module is not None:
                    found[p].append(module)
        ctx.cache[cache_key] = found
        return found
    matched: dict[str, list[tuple[str, tuple]]] = {p: [] for p in wanted}
    questions = [_QUESTION + p for p in wanted]
    others = [(path, key) for path, key in modules if path != own and key is not None]
    # A command-line run checks each file once: a module found keeps what the consumers ask
    # of it, not its tree (`_without_tree`). An editor keeps them whole for its next check.
    ops = _ops_by_pattern(refs) if not names and not ctx.project.track_dependents else None
    # A check that keeps answers about other modules (one buffer or file, with a cache) takes
    # what `_without_tree` keeps of a module from an earlier run (`_kept_consumer`).
    kept = (ops or _ops_by_pattern(refs)) if not names and kept_module_facts.keeps(("",)) else None
    for path, key, known in scan_memo.unanswered(others, questions):
        pending = [p for p, held in zip(wanted, known, strict=True) if held is not False]
        if not pending:
            continue
        if kept is not None and kept_module_facts.keeps(key) and _PARSED.get(path, (None,))[0] != key:
            module, hits = _kept_consumer(ctx, path, key, wanted, pending, kept)
        else:
            module = matching_module(ctx, path, key, [wanted[p] for p in pending])
            hits = [p for p in pending if module is not None and wanted[p][0].search(module.text)]
            if ops is not None and module is not None and hits:
                module = _without_tree(ctx, module, path, {op for p in hits for op in ops[p]})
        for p in pending:
            if p in hits:
                found[p].append(module)
                matched[p].append((path, key))
            else:
                scan_memo.note_miss(path, _QUESTION + p, key)
    if ctx.project.track_dependents:  # a command-line run checks each file once: nothing to keep
        _LAST_SCAN[memo_key] = (modules, matched)
    ctx.cache[cache_key] = found
    return found


def _ops_by_pattern(refs: list[OpRef]) -> dict[str, set[str]]:
    ops: dict[str, set[str]] = {}
    for ref in refs:
        ops.setdefault(PacketSpelling(ref).pattern, set()).add(ref.op)
    return ops


def _kept_consumer(
    ctx: FileContext, path: str, key: tuple, wanted: dict, pending: list[str], ops: dict[str, set[str]]
) -> tuple[FileContext | None, list[str]]:
    """(`_without_tree`'s module, the patterns of `pending` it spells) as `modules_spelling`
    finds them, in a check that keeps answers about other modules (`kept_answers`): what
    `_without_tree` keeps of the module is taken from an earlier run while the module and
    everything its sites were resolved through are unchanged (`kept_module_facts`), else
    worked out from its parse and kept. The module's text is read in either case (the
    consumers search it); its parse and sites are not worked out again (torchao's
    `pt2e/observer.py`: four modules parsed again at each check of an edit)."""
    read = text_holding(ctx.project, path, key, tuple(n for p in pending for n in wanted[p][1]))
    hits = [p for p in pending if read is not None and wanted[p][0].search(read[0])]
    if not hits:
        return None, []
    asked = {op for p in hits for op in ops[p]}
    variant = ":" + ",".join(sorted(asked))
    value = kept_module_facts.taken(ctx.project, _without_tree, path, key, variant)
    if value is not kept_module_facts.MISSING and value is not None:
        text = read[0]
        return FileContext(
            path, text, None, LineIndex(text), ctx.optable, ctx.project, module_name_for(path), value[0]
        ), hits
    with kept_module_facts.computing(ctx.project, _without_tree, path, key, variant) as learned:
        module = matching_module(ctx, path, key, [wanted[p] for p in pending])
        if module is None:
            return None, []
        module = _without_tree(ctx, module, path, asked, imports=True)
        learned((module.cache,))
    return module, hits


def sites_spelling(
    ctx: FileContext, path: str, key: tuple, spelling: OverloadSpelling, op: str
) -> list[frozenset[OpRef]] | None:
    """`op_sites(module, op)` of the module at `path` if its text matches `spelling` (None:
    it does not, or does not parse). In a check that keeps answers about other modules, taken
    from an earlier run while everything the sites were resolved through holds
    (`kept_module_facts`): the module is read, not parsed (torchao's `pt2e/observer.py`, whose
    directory's `utils.py` keys on overloads of the ops it inserts)."""
    wanted = [(spelling, (op.encode(),))]
    if not kept_module_facts.keeps(key) or _PARSED.get(path, (None,))[0] == key:
        module = matching_module(ctx, path, key, wanted)
        return None if module is None else op_sites(module, op)
    read = text_holding(ctx.project, path, key, (op.encode(),))
    if read is None or not spelling.search(read[0]):
        return None
    value = kept_module_facts.taken(ctx.project, _kept_sites, path, key, ":" + op)
    if value is not kept_module_facts.MISSING:
        return None if value is None else value[0]
    with kept_module_facts.computing(ctx.project, _kept_sites, path, key, ":" + op) as learned:
        module = matching_module(ctx, path, key, wanted)
        sites = None if module is None else op_sites(module, op)
        learned(None if sites is None else (sites,))
    return sites


def _sites_data(sites: list[frozenset[OpRef]]) -> tuple:
    return tuple(tuple((r.namespace, r.op, r.overload, r.dialect) for r in site) for site in sites)


def _sites(data) -> list[frozenset[OpRef]]:
    if type(data) is not tuple:
        raise TypeError("not sites")
    return [frozenset(_op_ref(r) for r in site) for site in data]


def _kept_data(known: dict) -> tuple:
    """What `_without_tree` keeps of a module, as plain data (`kept_module_facts`)."""
    sites = tuple(
        (op, tuple((table, tuple((r.namespace, r.op, r.overload, r.dialect) for r in site)) for table, site in found))
        for op, found in sorted(known[SITES_KEY].items())
    )
    names = tuple(tuple(sorted(known[k])) if k in known else None for k in (_DEFINED_KEY, _IMPORTED_KEY))
    return (sites, *names)


def _kept_known(data) -> dict[str, object]:
    """`_kept_data` read back; TypeError on anything it would not have written."""
    sites, defined, imported = data
    known: dict[str, object] = {SITES_KEY: {}}
    for op, found in sites:
        if type(op) is not str:
            raise TypeError("not an op")
        known[SITES_KEY][op] = [(bool(table), frozenset(_op_ref(r) for r in site)) for table, site in found]
    for k, names in ((_DEFINED_KEY, defined), (_IMPORTED_KEY, imported)):
        if names is not None:
            if type(names) is not tuple or not all(type(n) is str for n in names):
                raise TypeError("not names")
            known[k] = frozenset(names)
    return known


def _op_ref(data) -> OpRef:
    namespace, op, overload, dialect = data
    if type(namespace) is not str or type(op) is not str or type(dialect) is not str:
        raise TypeError("not an op")
    if overload is not None and type(overload) is not str:
        raise TypeError("not an overload")
    return OpRef(namespace, op, overload, dialect)


def _without_tree(
    ctx: FileContext, module: FileContext, path: str, ops: set[str], imports: bool = False
) -> FileContext:
    """`module` without its tree, holding what the consumers of `ctx`'s packets `ops` ask of
    it: its sites for `ops` (`packet_sites`), and when it has any (a consumer), the names it
    defines and, if its text spells `ctx`'s module name, those its imports bind (`linked_modules`).
    The scan's modules were all held, whole, until the check ended: one check on ExecuTorch
    held 44 MiB of trees at once (nxp's `add_simulated_linear_bn_fusion_qat_pass.py`, one of
    the run's peaks). Asked anything else, the module fails loudly (no tree); another reader
    of it in this check parses it again (`matching_module` no longer has it).
    With `imports`, a consumer's imports whatever its text spells: what is kept between runs
    (`_kept_consumer`) is not the check's to decide."""
    keyed = [op_sites(module, op) for op in sorted(ops)]
    known: dict[str, object] = {SITES_KEY: module.cache[SITES_KEY]}
    if any(keyed):
        known[_DEFINED_KEY] = defined_names(module)
        if imports or module_stem(ctx) in module.text:
            known[_IMPORTED_KEY] = imported_names(module)
    _PARSED.pop(path, None)
    text_only = FileContext(
        module.path, module.text, None, module.lines, module.optable, module.project, module.module, known
    )
    module.release()  # the analyses kept on it hold it back in cycles (`FileContext.release`)
    return text_only


def matching_module(
    ctx: FileContext, path: str, key: tuple, wanted: list[tuple[PacketSpelling | AnyName, tuple[bytes, ...]]]
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
            # One definition at a time: a large module's whole parse was a check's peak
            # (`piecewise_parse`); the tree is the same.
            tree = live_parse(text, path, parse_by_definitions)
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


def defined_names(module: FileContext) -> frozenset[str]:
    if _DEFINED_KEY not in module.cache:  # kept: a module found by the scan has no tree after it
        module.cache[_DEFINED_KEY] = frozenset(
            node.name
            for node in module.tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        )
    return module.cache[_DEFINED_KEY]


def module_stem(module: FileContext) -> str:
    return os.path.splitext(os.path.basename(module.path))[0]


def imported_names(module: FileContext) -> frozenset[str]:
    """The names `module`'s imports bind, by their last part (`linked_modules`)."""
    if _IMPORTED_KEY not in module.cache:  # kept, as `defined_names`
        out: set[str] = set()
        for node in statements(module.tree):  # imports are statements: no expression is visited
            if isinstance(node, ast.ImportFrom):
                if node.module:
                    out.add(node.module.rpartition(".")[2])
                out.update(a.name for a in node.names)  # `from . import add`
            elif isinstance(node, ast.Import):
                out.update(a.name.rpartition(".")[2] for a in node.names)
        module.cache[_IMPORTED_KEY] = frozenset(out)
    return module.cache[_IMPORTED_KEY]


# What `_without_tree` keeps of a consumer module, kept between runs with what its sites were
# resolved through (`kept_module_facts`), per set of ops asked.
kept_module_facts.keep_on_disk(_without_tree, "consumer-sites-1", _kept_data, _kept_known)


# A module's sites for one op, as `sites_spelling` asks them (the fact is `op_sites`, named
# by a function of its own).
def _kept_sites(module: FileContext) -> None:
    raise NotImplementedError  # a name for the fact kept between runs, never called


kept_module_facts.keep_on_disk(_kept_sites, "op-sites-1", _sites_data, _sites)

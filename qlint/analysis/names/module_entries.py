"""A module's entry in the project index (`project.ProjectIndex`): its summary, read from the
store or computed from one parse of the module (whose tree is then dropped or handed over), the
scope built from it, and its facts as loaded.
"""

from __future__ import annotations

import ast
from typing import Any, Protocol

from qlint.analysis.names import content_keys
from qlint.analysis.names.body_reads import watch_module_bodies
from qlint.analysis.names.live_trees import parse as live_parse
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.piecewise_parse import parse_by_definitions
from qlint.analysis.names.recent_trees import RECENT
from qlint.analysis.names.scope import ModuleScope
from qlint.analysis.names.summary import ModuleSummary
from qlint.analysis.names.summary_facts import SummaryFact
from qlint.analysis.names.tree_handover import HANDOVER, KeptTree
from qlint.short_digests import content_sha256_hex
from qlint.source import DecodeError, decode_source


class SummaryStore(Protocol):
    def get(self, path: str, digest: str, module: str | None) -> ModuleSummary | None: ...

    def put(self, path: str, summary: ModuleSummary) -> None: ...


def module_entry(
    index, path: str, keep_tree: bool = False, wanted: SummaryFact | None = None
) -> tuple[tuple, ModuleScope | None, LoadedSummary] | None:
    key = index.content_key(path)
    if key is None:
        return None
    text = index.overlay.get(path)
    cached = index.entries.get(path)
    if index.last_use is not None:  # a command-line index sets unused entries aside (`set_asides`)
        index.last_use[path] = index.checks
    if cached is not None and cached[0][0] == key:
        return cached
    try:
        if text is None:
            with open(path, "rb") as fh:
                data = fh.read()
        else:
            data = text.encode("utf-8", "surrogatepass")
    except OSError:
        return None
    # A file's digest known for its stat (hashed already, or kept by an earlier run for a stat
    # it trusted, as the results cache trusts one) is not worked out again from its bytes.
    digest = content_keys.known_or_saved(path, key) if text is None else None
    if digest is None:
        digest = content_sha256_hex(data)
    content_keys.remember_digest(path, key, digest)
    module = module_name_for(path)
    store = index.store if text is None else None  # an unsaved buffer is never written down
    aside = index.set_aside
    summary = aside.summaries.pop(path, None) if text is None and aside is not None else None
    if summary is not None and (summary.digest != digest or summary.module != module):
        summary = None  # another content since (a `qlint fix` run), or another package layout
    if summary is None and store is not None:
        summary = store.get(path, digest, module)
    parsed = None
    if summary is None:
        parsed = _checked_parse(index, path, text, data, module)
        # A file this process checks later gets the tree (`tree_handover`), unless a reader
        # takes it first (`keep_tree`): one reader per tree.
        hand_over = parsed is None and text is None and not keep_tree and HANDOVER.expects(path)
        trees: list[ast.Module] | None = [] if (keep_tree or hand_over) and parsed is None else None
        summary = summarise(path, module, text, data, digest, store, parsed, trees, wanted, index.facts)
        if trees and hand_over:
            if not HANDOVER.keep(path, data, trees[0]):
                # Over the handover's budget: kept a moment, as the tree of a summary no check
                # takes is (`recent_trees`), so that a reader right after (a caller search
                # reading the module's calls) finds it alive (`live_trees`) instead of parsing
                # the module again (torchao's test_arm_inductor_quantizer.py, on ao).
                RECENT.keep(path, digest, len(data), trees[0])
        elif trees:
            index.kept_tree.keep(path, digest, trees[0], data)
    # The tree the summary came from is dropped (after a while, `recent_trees`): the scope
    # parses the statements a rule asks for, and other facts are read from the summary.
    # Only the checked file's own parse is kept with it when no store wants its facts now:
    # they are computed from it if a rule asks (the engine holds that tree anyway).
    kept = parsed if parsed is not None and store is None else None
    loaded = LoadedSummary(path, summary, _Source(text, data), store, kept, index.kept_tree)
    entry = ((key, digest), summary.scope(path, loaded.text), loaded)
    if cached is not None and cached[1] is not None:
        cached[1].let_go()  # the module's old content
    index.entries[path] = entry
    if index.checked_file is not None and index.checked_file[0] == path:
        watch_module_bodies(index, entry[1])
    return entry


def drop_entry(entries: dict[str, tuple], path: str) -> tuple[tuple, ModuleScope | None, LoadedSummary] | None:
    """Drop the entry of `path` from the index's `entries`, and what its scope holds."""
    entry = entries.pop(path, None)
    if entry is not None and entry[1] is not None:
        entry[1].let_go()
    return entry


def summarise(
    path: str,
    module: str | None,
    text: str | None,
    data: bytes,
    digest: str,
    store: SummaryStore | None,
    parsed: tuple[ast.Module, ModuleScope, str] | None = None,
    trees: list[ast.Module] | None = None,
    wanted: SummaryFact | None = None,
    facts: dict[str, SummaryFact] | None = None,
) -> ModuleSummary:
    """Parse a module whose summary is not known yet (`parsed`: the engine's parse of it,
    when it is the file being checked), and remember the summary. The tree parsed here is
    appended to `trees` when given (the summary does not keep it). The registered facts
    are computed from it (`facts`: the index's registered ones, `ProjectIndex.register_fact`),
    except the lazy ones (`SummaryFact.lazy`) other than `wanted`."""
    if parsed is not None:
        tree, scope, source = parsed
    else:
        try:
            source = text if text is not None else decode_source(data)
            # A file the run checked a moment ago: the engine's tree of it (`tree_handover`).
            # Or another reader's tree of this text, while it holds it (`live_trees`).
            # A tree kept for a reader (a caller search analyses it, or its own check takes
            # it) is parsed in pieces: without the whole parse's peak (`piecewise_parse`).
            parser = parse_by_definitions if trees is not None else None
            tree = (HANDOVER.checked_parse(path, data) if text is None else None) or live_parse(source, path, parser)
            scope = ModuleScope.build(tree, module, path)
        except (DecodeError, SyntaxError, ValueError, RecursionError):
            tree, scope = None, None  # still a dependency: fixing the file must refresh its users
        if tree is not None and trees is not None:
            trees.append(tree)
    summary = ModuleSummary.of(tree, scope, module, digest)
    if tree is not None and (parsed is None or store is not None):
        wanted_key = wanted.key if wanted is not None else None
        for fact in list((facts or {}).values()):
            # By key: each check makes its own instance of a fact (one key, one value).
            if fact.key == wanted_key or not getattr(fact, "lazy", False):
                summary.facts[fact.key] = fact.compute(tree, scope, source)
        if wanted is not None and wanted_key not in summary.facts:
            # A fact asked of this module alone (`fact_at(..., register=False)`): from this
            # parse, not from a second one when it is read next (`LoadedSummary._compute`).
            summary.facts[wanted_key] = wanted.compute(tree, scope, source)
    if tree is not None and parsed is None and trees is None:
        # No other reader takes this tree: the statements rules ask of the module next are
        # taken from it rather than parsed again (`recent_trees`).
        RECENT.keep(path, digest, len(data), tree)
    if store is not None:
        store.put(path, summary)
    return summary


def _checked_parse(
    index, path: str, text: str | None, data: bytes, module: str | None
) -> tuple[ast.Module, ModuleScope, str] | None:
    """The engine's parse of `path` when it is the file being checked, with this content."""
    if index.checked_file is None or index.checked_file[0] != path:
        return None
    _, checked_text, tree = index.checked_file
    if text is None:
        try:
            text = decode_source(data)
        except DecodeError:
            return None
    if text != checked_text:
        return None  # the buffer checked is not the file on disk
    return tree, ModuleScope.build(tree, module, path), text


class LoadedSummary:
    """A module's summary with the text it was computed from, and its facts as loaded."""

    def __init__(
        self,
        path: str,
        summary: ModuleSummary,
        text,
        store: SummaryStore | None,
        parsed: tuple[ast.Module, ModuleScope, str] | None = None,
        kept_tree: KeptTree | None = None,
    ):
        self.path = path
        self._kept_tree = kept_tree  # where a tree parsed for a fact is kept (`fact(..., keep_tree)`)
        self.summary = summary
        self.text = text
        self._store = store
        self._facts: dict[str, Any] = {}
        self._parsed = parsed  # the checked file's tree, scope and text: facts computed from it

    def drop_parse(self) -> None:
        self._parsed = None

    def fact(self, fact: SummaryFact, keep_tree: bool = False) -> Any:
        if fact.key in self._facts:
            return self._facts[fact.key]
        if self.summary.broken:
            return None
        value = self.summary.facts.get(fact.key, _MISSING)
        loaded = _MISSING
        if value is not _MISSING:
            try:
                loaded = fact.load(self.path, self.summary, value)
            except (TypeError, ValueError, KeyError, IndexError, AttributeError):
                loaded = _MISSING  # a damaged or older value: computed again below
        if loaded is _MISSING:
            loaded = fact.load(self.path, self.summary, self._compute(fact, keep_tree))
        self._facts[fact.key] = loaded
        return loaded

    def _compute(self, fact: SummaryFact, keep_tree: bool = False) -> Any:
        """A fact the summary does not hold yet (registered after it was computed, or lazy):
        from a parse of the same text, kept with the summary from now on. With `keep_tree`,
        that parse is kept for `ProjectIndex.take_tree`, as `fact_at` keeps its own."""
        if self._parsed is not None:
            value = fact.compute(*self._parsed)
            self.summary.facts[fact.key] = value
            return value
        text = self.text()
        try:
            tree = live_parse(text or "", self.path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = ast.Module(body=[], type_ignores=[])
        value = fact.compute(tree, ModuleScope.build(tree, self.summary.module, self.path), text or "")
        self.summary.facts[fact.key] = value
        if keep_tree and self._kept_tree is not None and tree.body:
            data = (text or "").encode("utf-8", "surrogatepass")  # the file's bytes unless it has a BOM
            self._kept_tree.keep(self.path, self.summary.digest, tree, data)
        if self._store is not None:
            self._store.put(self.path, self.summary)
        return value


_MISSING = object()


class _Source:
    """The module's text when a summarised scope first needs a statement (None: undecodable).
    Its bytes are kept until then and dropped once decoded: the statements' source keeps the
    text, and bytes beside it were a second copy of every module read (5 MiB of 16 on ExecuTorch)."""

    __slots__ = ("_data", "_text")

    def __init__(self, text: str | None, data: bytes):
        self._text = text
        self._data: bytes | None = data if text is None else None

    def __call__(self) -> str | None:
        data = self._data
        if data is not None:
            self._data = None
            try:
                self._text = decode_source(data)
            except DecodeError:
                self._text = None
        return self._text

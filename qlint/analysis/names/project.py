"""A small project index: finds other modules of the same project and gives their scopes.

Rules ask it for `from .qdq_utils import DQ_OPS`-style constants. A module's scope comes
from its summary (`qlint.analysis.names.summary`), which parses only the statements a rule
asks for: the summary is read from the store when it knows the module's current content,
otherwise the module is parsed once, its summary (with the registered facts other checks
read instead of its tree, `summary_facts`) computed and stored, and the tree dropped.
Summaries, facts and scopes are kept in memory per content. It
records which files each check consulted (with their content hashes) so a cached result
is dropped when a module it depends on changes, and it serves unsaved editor buffers from
an overlay.

Kept in modules of their own: what each check read (`dependency_records`), a module's
entry, with its summary (read, or parsed and summarised: `module_entries.summarise`), scope
and facts as loaded (`module_entries`), and which bodies of the checked module an analysis
read (`body_reads`).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

from qlint.analysis.names import content_keys, layout_lookups, shadowed_names
from qlint.analysis.names.body_reads import BodyReads, watch_module_bodies
from qlint.analysis.names.dependency_records import DependencyRecords
from qlint.analysis.names.import_paths import module_bases, module_files, resolved, tried_before
from qlint.analysis.names.kept_lookups import KeptLookups
from qlint.analysis.names.module_entries import LoadedSummary, SummaryStore, module_entry
from qlint.analysis.names.scope import ModuleScope
from qlint.analysis.names.statement_reuse import PreviousTrees
from qlint.analysis.names.summary import ModuleSummary
from qlint.analysis.names.summary_facts import SummaryFact
from qlint.analysis.names.tree_handover import HANDOVER
from qlint.analysis.names.watched_files import WatchedFiles
from qlint.analysis.repo_root import same_repository
from qlint.diagnostic import Range
from qlint.source import LineIndex, read_source

__all__ = ["ProjectIndex"]


class ProjectIndex:
    def __init__(self, overlay: dict[str, str] | None = None, track_dependents: bool = True):
        self.overlay = {os.path.abspath(k): v for k, v in (overlay or {}).items()}
        # Who read which file serves an editor's rechecks; a command-line run never asks.
        self.track_dependents = track_dependents
        # path -> ((stat or overlay key, digest), scope, summary and facts): one per content.
        self._scopes: dict[str, tuple[tuple, ModuleScope | None, LoadedSummary]] = {}
        # What each check read (`dependency_records`); its `add` is bound here once: every
        # module lookup records through it.
        self._records = DependencyRecords(track_dependents)
        self._record_absolute = self._records.add
        # (module, requester) -> (scope, what `_record` was told): a check asks for the same
        # modules hundreds of times, each a few `stat`s. Valid for one check only (files may
        # change between checks), see `begin_check`.
        # (scope, the module's (path, digest), the path found, requester's absolute path)
        self._lookups: dict[tuple[str, str], tuple[ModuleScope | None, tuple[str, str] | None, str | None, str]]
        self._lookups = {}
        # (module, requester's directory) -> path: the same, for `find_module_in_check`.
        self._found: dict[tuple[str, str], str | None] = {}
        # `tried_digest` of the check (of the run: fixed layout), and the roots' entries it read.
        self._shadows: dict[str, str] = {}
        self._shadow_roots: dict[str, str] = {}
        self._dirs: dict[str, str] = {}  # requester -> its absolute directory, per check
        # The file being checked, its text and the engine's parse of it (`begin_check`).
        self._checked: tuple[str, str, ast.Module] | None = None
        # (path, digest, tree) of the module a `fact_at(..., keep_tree=True)` parsed, until
        # `take_tree` hands it over: one tree at most, asked for by name.
        self._kept_tree: tuple[str, str, ast.Module, bytes] | None = None
        # Counts checks: what is valid for one check only is keyed on it (`begin_check`).
        self.checks = 0
        # The last checked text and tree of the files an editor checks again and again: the
        # next check of one reuses its unchanged statements (`statement_reuse`). A command-line
        # run checks each file once and keeps none.
        self.previous_trees = PreviousTrees() if track_dependents else None
        # What an editor's file watcher vouches for between checks (`watch`): None, every
        # check stats what it depends on.
        self.watched: WatchedFiles | None = None
        # An editor's index keeps where modules were found across checks, while the
        # directories that decide it are unchanged (`kept_lookups`).
        self._kept_lookups = KeptLookups() if track_dependents else None
        # A command-line run keeps a module's entry while the checks use it (`_set_aside`):
        # path -> the check that last used its entry, and the summaries of the entries set aside.
        self._last_use: dict[str, int] | None = None if track_dependents else {}
        self._set_aside_summaries: dict[str, ModuleSummary] = {}
        self.set_asides = 0  # how many times entries were set aside: what was kept of them may go
        self._body_hook = BodyReads(weakref.ref(self))  # held by scopes the index holds: no cycle

    _default: ProjectIndex | None = None
    # Where module summaries are kept between runs (`qlint.summary_cache.SummaryStore`, set
    # by the CLI unless `--no-cache`): any object with `get(path, digest, module)` and
    # `put(path, summary)`. None: summaries live in memory only (the language server).
    store: SummaryStore | None = None
    # Facts computed for every module summarised (`register_fact`), by key.
    facts: dict[str, SummaryFact] = {}
    # True while a CLI run checks (or fixes) a tree (`summary_cache.summary_store`): no module
    # file appears or disappears meanwhile (fixes rewrite files in place), so where a module is
    # found is kept for the whole run instead of one check. On ExecuTorch a run asked 9,526 times
    # for 5,598 (module, directory) pairs, each a few dozen `stat`s for a module outside the
    # project. The language server leaves it False: files are created while it runs.
    fixed_layout: bool = False
    # Counts `fix_layout` calls: lookups kept elsewhere for one run are keyed on it.
    layouts: int = 0

    @classmethod
    def use_store(cls, store: SummaryStore | None) -> None:
        """Read and write module summaries there from now on, in every index of the process."""
        cls.store = store

    # True while `qlint check` checks a tree (`runner.run_check`): no file changes meanwhile, so
    # a module's content key (a `stat`) is taken once per run, not at every ask. ExecuTorch
    # asked 53,000 times for 3,833 files: every check re-validates the facts it reuses (helpers,
    # project scans) against the keys of the modules they were read from. `qlint fix` and the
    # language server leave it False: files change while they run.
    fixed_content: bool = False
    run_keys: dict[str, tuple | None] = {}
    # False while a `--no-cache` run checks: no one reads what a check depended on (the runner
    # drops it), so the scans of the whole project do not hash its modules for it: each worker
    # hashed ExecuTorch's 3,784 modules (29 MB) once more, on top of the reads that use them.
    wants_dependencies: bool = True

    @classmethod
    @contextlib.contextmanager
    def dependencies_unwanted(cls) -> Iterator[None]:
        """While inside: checks need not record the digests of every module they scan."""
        before = cls.wants_dependencies
        cls.wants_dependencies = False
        try:
            yield
        finally:
            cls.wants_dependencies = before

    @classmethod
    @contextlib.contextmanager
    def contents_fixed(cls) -> Iterator[None]:
        """While inside: content keys are taken once (see `fixed_content`)."""
        before = cls.fixed_content
        cls.fixed_content, cls.run_keys = True, {}
        try:
            yield
        finally:
            cls.fixed_content, cls.run_keys = before, {}

    @classmethod
    def fix_layout(cls, fixed: bool) -> None:
        """A run starts (True) or ends (False): where modules were found before is forgotten
        either way (a file may have been created between two runs of one process)."""
        cls.fixed_layout = fixed
        cls.layouts += 1
        if cls._default is not None:
            cls._default._found.clear()

    @classmethod
    def for_path(cls, path: str) -> ProjectIndex:
        # One shared index per process: a worker checking many files of one package
        # parses each imported module once. Its users are command-line runs (the language
        # server keeps its own index), which never ask for dependents.
        if cls._default is None:
            cls._default = cls(track_dependents=False)
        return cls._default

    @classmethod
    def shared_checked_once(cls, path: str) -> None:
        """`checked_once` on the shared index of `for_path`, if the process made one."""
        if cls._default is not None:
            cls._default.checked_once(path)

    def private_copy(self) -> ProjectIndex:
        """This index with its own overlay dict; parsed scopes are shared read-only (they are
        keyed by the text they came from, so a copy of the dict is enough)."""
        copy = ProjectIndex(self.overlay)
        copy._scopes = dict(self._scopes)
        return copy

    def set_overlay(self, path: str, text: str | None) -> None:
        self.update(path, text)

    def watch(self, roots: Iterable[str]) -> None:
        """An editor's watcher reports every file created, changed or deleted under `roots`
        from now on (`files_changed`): keys, listings and module lookups there are kept
        between checks instead of being stat'ed again by each (`watched_files`)."""
        self.watched = WatchedFiles(roots)

    def files_changed(self, changes: Iterable[tuple[str, int]]) -> None:
        """The watcher's events ((path, `FileChangeType`)): what was kept of those files goes.
        An open buffer stays the truth for its module; its file's key goes all the same."""
        changes = [(os.path.abspath(p), kind) for p, kind in changes]
        if self.watched is not None:
            self.watched.forget(changes)
        for path, _ in changes:
            content_keys.forget_digest(path)
            if path not in self.overlay:
                self._drop_entry(path)
        self._lookups.clear()
        self._found.clear()

    def update(self, path: str, text: str | None) -> set[str]:
        """An editor buffer changed (`text`) or closed (None, the file on disk counts again).

        Drops what was derived from the old content and returns the files whose last check
        read this one: the language server checks the edited buffer first, from what it
        holds for every other module, then rechecks these at lower priority."""
        path = os.path.abspath(path)
        if (path in self.overlay) != (text is not None):
            # A buffer counts as a file where none was, or no longer: module lookups kept
            # across checks may find another file now.
            if self.watched is not None:
                self.watched.found.clear()
            if self._kept_lookups is not None:
                self._kept_lookups.clear()
        if text is None:
            self.overlay.pop(path, None)
            if self.watched is not None:  # the disk counts again: its key as it is now
                self.watched.keys.pop(path, None)
        else:
            self.overlay[path] = text
        self._drop_entry(path)
        self._lookups.clear()
        self._found.clear()
        return self.dependents(path)

    def dependents(self, path: str) -> set[str]:
        """Files whose last check read `path` (directly), as recorded by `module_scope`."""
        return self._records.dependents(path)

    @property
    def reads(self) -> list[tuple[str, str]] | None:
        """While a list: every (path, digest) a lookup reads is appended to it, so that an
        analysis kept across checks (`qlint.analysis.flow.shared_flows`) knows what to
        compare before it is reused."""
        return self._records.reads

    @reads.setter
    def reads(self, reads: list[tuple[str, str]] | None) -> None:
        self._records.reads = reads

    def content_key(self, path: str, normal: bool = False) -> tuple | None:
        """What identifies the module's content now (its buffer, else its stat; None: absent),
        for everything that remembers facts about other modules (`content_keys`). `normal`:
        the path is absolute and normalised already. A lookup's standard or installed names
        under its roots (`shadowed_names`, among a kept fact's reads) are keyed by their digest."""
        if path.startswith(shadowed_names.PREFIX):
            return (shadowed_names.PREFIX, self.tried_digest(path))
        watched = self.watched
        if watched is not None:
            if not normal:
                path = os.path.abspath(path)
            text = self.overlay.get(path)
            return ("overlay", hash(text)) if text is not None else watched.key(path)
        if not self.fixed_content:
            return content_keys.content_key(self.overlay, path, normal)
        if self.overlay and (path if normal else _absolute(path)) in self.overlay:
            # A buffer is never frozen; the files beside it hold still as in a run over a tree
            # (`qlint check -`: the kept answers of torch's builder.py re-stat'ed its imports'
            # modules ~13,000 times).
            return content_keys.content_key(self.overlay, path, normal)
        keys = ProjectIndex.run_keys
        if path not in keys:
            keys[path] = content_keys.content_key(self.overlay, path, normal)
        return keys[path]

    def digest(self, path: str, key: tuple | None = None) -> str:
        """sha256 of the module as this index sees it ("" when absent), hashed once per content.
        A lookup's standard or installed names under its roots (`shadowed_names`, a kept
        fact's read) have their own digest (`tried_digest`)."""
        if path.startswith(shadowed_names.PREFIX):
            return self.tried_digest(path)
        if key is None and self.watched is not None:
            key = self.content_key(path)  # the kept key, not a fresh stat
            if key is None:
                return ""
        return content_keys.digest(self.overlay, path, key)

    def find_module(self, module: str, requester: str, probed: list[str] | None = None) -> str | None:
        """The file of `module` imported from `requester` (None: not in the project). With
        `probed`, every path looked at is added to it."""
        # `module_bases`: the file's package root first, then namespace-package roots and
        # directories `pyproject.toml` maps (ExecuTorch's `executorch` is the checkout itself).
        if self.fixed_layout and probed is None and not self.overlay:
            return layout_lookups.find(module, requester, ProjectIndex.layouts)  # the same, once per run
        for base in module_bases(module, requester):
            for candidate in module_files(base):
                if probed is not None:
                    probed.append(candidate)
                if candidate in self.overlay or os.path.isfile(candidate):
                    # Through a symbolic link (`src/executorch/backends -> ../../backends`): the
                    # module is the file the link points to, the one checked and edited.
                    real = candidate if candidate in self.overlay else resolved(candidate)
                    if probed is not None and real != candidate:
                        probed.append(real)  # behind a link: what the watcher sees of it decides
                    # A rollout checks several checkouts side by side: a package chain that
                    # climbs out of one repository must not resolve into its neighbour.
                    return real if same_repository(real, requester) else None
        return None

    def begin_check(self, path: str | None = None, text: str | None = None, tree: ast.Module | None = None) -> None:
        """A new check starts: forget the lookups of the last one (the files may have changed).

        With the file checked (`path`, its `text` and the engine's `tree` of it): a rule that
        looks up the checked file's own module (`utils` in a directory without `__init__.py`,
        resolved from inside it) reads that parse instead of parsing the file a second time."""
        self._lookups.clear()
        self._dirs.clear()
        if not self.fixed_layout:
            self._found.clear()
            self._shadows.clear()
            self._shadow_roots.clear()
            if self._kept_lookups is not None:
                self._kept_lookups.begin_check()
        self._checked = (os.path.abspath(path), text, tree) if path and text is not None and tree else None
        self.checks += 1
        if self._checked is not None:
            entry = self._scopes.get(self._checked[0])
            if entry is not None and entry[0][0] == self.content_key(self._checked[0]):
                watch_module_bodies(self, entry[1])
        if self._last_use is not None and self.checks % _SET_ASIDE_EVERY == 0:
            self._set_aside()

    def _set_aside(self) -> None:
        """Drop the entries no check used for `_UNUSED_CHECKS` checks, keeping their summaries.

        A worker checks neighbouring files (`check_chunks.chunk_parts`): the modules they import are used
        by a run of checks, then seldom again. Kept for the whole run, every module's text, the
        statements parsed from it and the flows analysed on its scope made most of what a worker
        holds (ExecuTorch: ~30 of 52 MiB traced at the end of each worker), and its heap does not
        shrink back. A module used again is rebuilt from its summary, which is all that was
        computed from its whole tree; its statements are parsed again as they are asked for."""
        last_use, oldest = self._last_use, self.checks - _UNUSED_CHECKS
        assert last_use is not None
        unused = [p for p, used in last_use.items() if used < oldest]
        for path in unused:
            del last_use[path]
            entry = self._drop_entry(path)
            if entry is not None:
                self._set_aside_summaries[path] = entry[2].summary
        if unused:
            self.set_asides += 1

    def held_scope(self, path: str) -> ModuleScope | None:
        """The scope this index holds now for the module at `path` (absolute), None when it
        holds none (never read, or set aside): nothing is read or parsed."""
        entry = self._scopes.get(path)
        return entry[1] if entry is not None else None

    def _drop_entry(self, path: str) -> tuple[tuple, ModuleScope | None, LoadedSummary] | None:
        entry = self._scopes.pop(path, None)
        if entry is not None and entry[1] is not None:
            entry[1].let_go()
        return entry

    def end_check(self) -> None:
        """The check has ended: its tree is no longer the one to read. Held until the next
        check, the tree and all kept on its nodes outlived it, and the collector, paused
        while a check runs (`gc_pause`), traversed them all when it resumed."""
        self._checked = None

    def checked_once(self, path: str) -> None:
        """The check of `path` ended and the file will not be checked again (a command-line
        run): the engine's tree of it, kept with its module's entry for facts a later check may
        ask, goes now (such a fact parses the text again, as for any other module)."""
        entry = self._scopes.get(os.path.abspath(path))
        if entry is not None:
            entry[2].drop_parse()
        if self.previous_trees is not None:
            self.previous_trees.drop(os.path.abspath(path))

    def find_module_in_check(self, module: str, requester: str) -> str | None:
        """`find_module`, asked once per check for files of one directory (the rules of a
        check look for the same modules, each a few `stat`s)."""
        directory = self._dirs.get(requester)
        if directory is None:  # a relative requester is absolute from the cwd of this check
            directory = self._dirs[requester] = os.path.dirname(os.path.abspath(requester))
        key = (module, directory)
        if key not in self._found:
            watched, kept = self.watched, self._kept_lookups
            if watched is not None and key in watched.found:
                self._found[key] = watched.found[key]
            else:
                # With a watcher: the paths a lookup looks at, to keep its answer until an
                # event (`watched_files`) where the watcher sees them all.
                probed: list[str] | None = [] if watched is not None else None

                def lookup(module: str, requester: str) -> str | None:
                    if probed is None:
                        return self.find_module(module, requester)
                    return self.find_module(module, requester, probed)

                if kept is None or self.fixed_layout:
                    found = self._found[key] = lookup(module, requester)
                else:
                    found = self._found[key] = kept.find(key, module, requester, lookup)
                if probed and watched.covers_all(probed):  # looked up now, nothing out of its sight
                    watched.found[key] = found
        return self._found[key]

    def module_scope(self, module: str, requester: str) -> ModuleScope | None:
        """The scope of another module of the project, or None if it is not part of it."""
        memo = self._lookups.get((module, requester))
        if memo is None:
            # The requester's absolute path with the answer: `_record` asks for it at every
            # lookup, and `os.path.abspath` of a relative path asks the OS for the cwd.
            found = self._module_scope(module, requester)
            memo = self._lookups[(module, requester)] = (*found, os.path.abspath(requester))
        scope, recorded, found, absolute = memo
        if recorded is not None:
            self._record_absolute(absolute, *recorded)
        if self.wants_dependencies:  # none kept (`--no-cache`), nor kept facts read again
            for path in tried_before(module, absolute, found):
                self._record_absolute(absolute, path, self.tried_digest(path))
        return scope

    def record_unloaded(self, module: str, requester: str, path: str) -> None:
        """Record what `module_scope(module, requester)` records when its lookup finds `path`,
        without loading (parsing) the module: a reader that learnt what it needed from the
        module's text alone (`graph_returns`) rests on the module and on the paths tried
        before it as a reader of its summary does."""
        absolute = os.path.abspath(requester)
        self._record_absolute(absolute, path, self.digest(path))
        if self.wants_dependencies:
            for tried in tried_before(module, absolute, path):
                self._record_absolute(absolute, tried, self.tried_digest(tried))

    def is_directory(self, path: str, requester: str) -> bool:
        """Whether a directory is at `path`, a dependency of the check of `requester` where
        dependencies are kept (as `module_scope`'s tried paths): `path/` absent (""), or there
        (`DIRECTORY`). A module the project does not hold may still be its own under a name the
        index cannot map, a directory without `__init__.py` (`function_references._elsewhere`):
        removing or creating the directory changes that answer."""
        found = os.path.isdir(path)
        if self.wants_dependencies:
            directory = os.path.abspath(path)
            if directory != os.sep:
                directory += os.sep
            self._record_absolute(os.path.abspath(requester), directory, shadowed_names.DIRECTORY if found else "")
        return found

    def tried_digest(self, path: str) -> str:
        """The digest a path of `tried_before` is recorded with: "" (absent), or for the
        standard or installed names under roots (`shadowed_names`) what those entries are,
        listed once per check (per run with a fixed layout)."""
        if not path.startswith(shadowed_names.PREFIX):
            return ""
        digest = self._shadows.get(path)
        if digest is None:
            digest = self._shadows[path] = shadowed_names.digest_now(shadowed_names.roots_of(path), self._shadow_roots)
        return digest

    def _module_scope(
        self, module: str, requester: str
    ) -> tuple[ModuleScope | None, tuple[str, str] | None, str | None]:
        """The scope, the module's (path, digest) read, and the path found (None: none). The
        paths the lookup found no file at before it are read as much as the module (creating
        one there imports another module, or one where there was none): `module_scope`
        records them, "" (absent), where dependencies are kept (`tried_before`)."""
        path = self.find_module_in_check(module, requester)
        if path is None:
            return None, None, None
        scope, digest = self._load(path)
        return scope, ((path, digest) if digest is not None else None), path

    def _record(self, requester: str, path: str, digest: str) -> None:
        self._record_absolute(os.path.abspath(requester), path, digest)

    def hand_over_dependencies(self, reader: str, requester: str) -> None:
        """What was recorded for `reader` while the check of `requester` analysed it (the
        module of a caller, searched for its own callers as if it were checked) is a
        dependency of `requester`'s check, not of a later check of `reader`."""
        self._records.hand_over(reader, requester)

    def record_read(self, requester: str, path: str, digest: str) -> None:
        """The check of `requester` read `path` (content sha256, "" = absent) by other means
        than `module_scope` (a scan of the project's files): a dependency like the others
        (`DependencyRecords.add_read` says how a directory's and a root's names are spelled)."""
        self._records.add_read(requester, path, digest)

    def record_reads(self, requester: str, reads: list[tuple[str, str]]) -> None:
        """`record_read` for many absolute, normalised paths at once (a scan of the project)."""
        self._records.add_many(requester, reads)

    def record_flow_reads(self, requester: str, reads) -> None:
        """The modules (path, digest) model flows read for the check of `requester`, through
        other modules' analyses too (`shared_flows.Tracker`): those not recorded for it yet
        (none in a run that keeps no dependencies, `--no-cache`)."""
        if self.wants_dependencies:
            self._records.add_flow_reads(requester, reads)

    def record_listing(self, requester: str, dependency: str) -> None:
        """The check of `requester` skipped the project's files that lack some needles
        (`project_files.listing_dependency`): a new file holding one must invalidate it."""
        self._record(requester, dependency, "listing")

    def record_derived(self, requester: str, dependency: str, digest: str) -> None:
        """The check of `requester` read a fact worked out from the whole project (its wrapper
        names, `wrapper_record.dependency`), valid while that fact's digest is unchanged."""
        self._record(requester, dependency, digest)

    def text(self, path: str) -> str | None:
        """Another module's text: its unsaved buffer if open, else the file (None if unreadable)."""
        path = os.path.abspath(path)
        if path in self.overlay:
            return self.overlay[path]
        return read_source(path)

    def locate(self, path: str, node: ast.AST) -> tuple[Range, str]:
        """Range (in code points; ast columns are UTF-8 bytes) and source text of a node of
        another module, from one read of that module."""
        lines = LineIndex(self.text(path) or "")
        rng = lines.range_of(node)
        return rng, lines.text[lines.offset(rng.start) : lines.offset(rng.end)]

    def dependencies_of(self, requester: str) -> dict[str, str]:
        """What the check of `requester` that just ended read (path -> sha256, "" = absent)."""
        return self._records.dependencies_of(requester)

    def scope_at(self, path: str) -> ModuleScope | None:
        """The scope of the module at `path` as its summary gives it (None: unreadable), as
        `fact_at` reads its facts: no dependency is recorded (the caller records what it uses)."""
        entry = module_entry(self, os.path.abspath(path))
        return entry[1] if entry is not None else None

    def _load(self, path: str) -> tuple[ModuleScope | None, str | None]:
        entry = module_entry(self, path)
        return (entry[1], entry[0][1]) if entry is not None else (None, None)

    def take_tree(self, path: str, data: bytes) -> ast.Module | None:
        """The tree `fact_at(path, ..., keep_tree=True)` parsed just before, if it was parsed
        from exactly `data` (None otherwise); handed over once, and dropped in any case."""
        kept, self._kept_tree = self._kept_tree, None
        # Its bytes compared, not their digests: the caller's bytes are not hashed again.
        if kept is None or kept[0] != os.path.abspath(path) or kept[3] != data:
            return None
        return kept[2]

    def drop_kept_tree(self) -> None:
        """The reader did not take the tree (the module names no caller): a file this process
        checks later gets it (`tree_handover`) rather than parsing it again."""
        kept, self._kept_tree = self._kept_tree, None
        if kept is not None and HANDOVER.expects(kept[0]):
            HANDOVER.keep(kept[0], kept[3], kept[2])

    # ----------------------------------------------------------------- summary facts

    @classmethod
    def register_fact(cls, fact: SummaryFact) -> None:
        """Compute `fact` for every module summarised from now on (see `summary_facts`)."""
        if fact.key not in cls.facts:
            cls.facts[fact.key] = fact

    def module_fact(self, module: str, requester: str, fact: SummaryFact) -> Any:
        """`fact` (loaded) about another module of the project, or None if it is not part of it
        or does not parse. Reading it makes the module a dependency, as `module_scope` does."""
        self.register_fact(fact)  # before the module is first parsed: computed with its summary
        path = self.find_module_in_check(module, requester)
        if path is not None and getattr(fact, "lazy", False):
            module_entry(self, os.path.abspath(path), wanted=fact)  # parsed now: with the fact, lazy or not
        if self.module_scope(module, requester) is None:
            return None
        return self.fact_at(path, fact) if path is not None else None

    def fact_at(self, path: str, fact: SummaryFact, keep_tree: bool = False, register: bool = True) -> Any:
        """`fact` about the module at `path` as its summary holds it (None: it does not parse).
        With `keep_tree`, a tree parsed now for the summary is kept for `take_tree`: a reader
        that builds the module's tree next (`project_callers`) does not parse it again.
        Without `register`, the fact is computed for this module only (when asked), not for
        every module summarised from now on."""
        if register:
            self.register_fact(fact)
        if keep_tree:
            self.drop_kept_tree()
        entry = module_entry(self, os.path.abspath(path), keep_tree, fact)
        return entry[2].fact(fact, keep_tree) if entry is not None else None


# A command-line index sets aside the entries no check used for this many checks, looking
# every `_SET_ASIDE_EVERY` checks (`ProjectIndex._set_aside`).
_UNUSED_CHECKS = 64
_SET_ASIDE_EVERY = 16


@functools.lru_cache(maxsize=65_536)
def _normalised(path: str) -> str:
    return os.path.normpath(path)


def _absolute(path: str) -> str:
    """`os.path.abspath(path)`; an absolute path's is lexical (`normpath`), kept per path: a
    check of one buffer (`qlint check -`) asks for the keys of the modules its kept answers
    were read from ~12,000 times (torch's eval_frame.py), each time whether the buffer is one."""
    return _normalised(path) if path[:1] == os.sep else os.path.abspath(path)

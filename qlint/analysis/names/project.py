"""A small project index: finds other modules of the same project and gives their scopes.

Rules ask it for `from .qdq_utils import DQ_OPS`-style constants. A module's scope comes
from its summary (`qlint.analysis.names.summary`), which parses only the statements a rule
asks for: the summary is read from the store when it knows the module's current content,
otherwise the module is parsed once, its summary (with the registered facts other checks
read instead of its tree, `summary_facts`) computed and stored, and the tree dropped.
Summaries, facts and scopes are kept in memory per content. It records which files each
check consulted (with their content hashes) so a cached result is dropped when a module it
depends on changes, and it serves unsaved editor buffers from an overlay.

The index is composed of objects kept in modules of their own: where a module is
(`module_finder`), what identifies its content (`module_keys`), what each check read
(`dependency_records`), the editor's buffers and watcher (`editor_overlay`), a command-line
run's entries set aside (`set_asides`) and a tree kept for its reader (`tree_handover`); the
index answers with their methods, bound once where every lookup asks them. A module's entry,
with its summary (read, or parsed and summarised: `module_entries.summarise`), scope and facts
as loaded, is built by `module_entries`; which bodies of the checked module an analysis read,
by `body_reads`. The run settings (`store`, `fixed_layout`, `fixed_content`, ...) are the
class's: every index of the process reads them.
"""

from __future__ import annotations

import ast
import contextlib
import os
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

from qlint.analysis.names import shadowed_names
from qlint.analysis.names.body_reads import BodyReads, watch_module_bodies
from qlint.analysis.names.dependency_records import DependencyRecords
from qlint.analysis.names.editor_overlay import EditorOverlay
from qlint.analysis.names.import_paths import tried_before
from qlint.analysis.names.module_entries import LoadedSummary, SummaryStore, drop_entry, module_entry
from qlint.analysis.names.module_finder import ModuleFinder
from qlint.analysis.names.module_keys import ModuleKeys
from qlint.analysis.names.scope import ModuleScope
from qlint.analysis.names.set_asides import SetAsides
from qlint.analysis.names.statement_reuse import PreviousTrees
from qlint.analysis.names.summary_facts import SummaryFact
from qlint.analysis.names.tree_handover import KeptTree
from qlint.analysis.names.watched_files import WatchedFiles

__all__ = ["ProjectIndex"]


class ProjectIndex:
    def __init__(self, overlay: dict[str, str] | None = None, track_dependents: bool = True):
        # The editor's buffers and watcher. `overlay` is its buffers, the one dict (read at
        # every content key); `watched` its watcher, set with it (`watch`).
        self.editor = EditorOverlay(overlay)
        self.overlay = self.editor.buffers
        self.watched: WatchedFiles | None = None
        self.text, self.locate = self.editor.text, self.editor.locate  # a module's buffer or file
        # Who read which file serves an editor's rechecks; a command-line run never asks.
        self.track_dependents = track_dependents
        # path -> ((stat or overlay key, digest), scope, summary and facts): one per content.
        self.entries: dict[str, tuple[tuple, ModuleScope | None, LoadedSummary]] = {}
        # What each check read (`dependency_records`), its methods bound once: every module
        # lookup records through `_record_absolute`; `record_read` is a read by other means than
        # `module_scope`, `hand_over_dependencies(reader, requester)` what was recorded for a
        # caller's module analysed as if checked, `dependencies_of` what a check just read.
        records = self._records = DependencyRecords(track_dependents)
        self._record_absolute, self.record_read, self.record_reads = records.add, records.add_read, records.add_many
        self.hand_over_dependencies = records.hand_over
        self.dependencies_of, self.dependents = records.dependencies_of, records.dependents
        # (module, requester) -> (scope, what `_record` was told): a check asks for the same
        # modules hundreds of times, each a few `stat`s. Valid for one check only (files may
        # change between checks), see `begin_check`.
        # (scope, the module's (path, digest), the path found, requester's absolute path)
        self._lookups: dict[tuple[str, str], tuple[ModuleScope | None, tuple[str, str] | None, str | None, str]]
        self._lookups = {}
        # Where modules are (`find_module`); what identifies a module's content (`content_key`)
        # and a lookup's tried path (`tried_digest`): bound here once, each lookup asks them.
        # Both read the run's settings, the class's, when asked.
        self._finder = ModuleFinder(self.editor, type(self), track_dependents)
        self.find_module = self._finder.find
        self._keys = ModuleKeys(self.editor, type(self))
        self.content_key, self.tried_digest = self._keys.content_key, self._keys.tried_digest
        # The file being checked, its text and the engine's parse of it (`begin_check`).
        self.checked_file: tuple[str, str, ast.Module] | None = None
        # The tree of the module a `fact_at(..., keep_tree=True)` parsed, until `take_tree`
        # hands it over or `drop_kept_tree` leaves it to a later check of that file.
        self.kept_tree = KeptTree()
        self.drop_kept_tree = self.kept_tree.drop
        # Counts checks: what is valid for one check only is keyed on it (`begin_check`).
        self.checks = 0
        # The last checked text and tree of the files an editor checks again and again: the
        # next check of one reuses its unchanged statements (`statement_reuse`). A command-line
        # run checks each file once and keeps none.
        self.previous_trees = PreviousTrees() if track_dependents else None
        # A command-line run keeps a module's entry while the checks use it (`set_asides`);
        # `last_use` is its record of uses, bound here once: every module entry asked notes one.
        self.set_aside = SetAsides(self.entries) if not track_dependents else None
        self.last_use = self.set_aside.last_use if self.set_aside is not None else None
        self.body_reads = BodyReads(weakref.ref(self))  # held by scopes the index holds: no cycle

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
            cls._default._finder.forget()

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
        copy.entries.update(self.entries)
        return copy

    def set_overlay(self, path: str, text: str | None) -> None:
        self.update(path, text)

    def watch(self, roots: Iterable[str]) -> None:
        """An editor's watcher reports every file created, changed or deleted under `roots`
        from now on (`files_changed`): keys, listings and module lookups there are kept
        between checks instead of being stat'ed again by each (`watched_files`)."""
        self.watched = self.editor.watch(roots)

    def files_changed(self, changes: Iterable[tuple[str, int]]) -> None:
        """The watcher's events ((path, `FileChangeType`)): what was kept of those files goes.
        An open buffer stays the truth for its module; its file's key goes all the same."""
        for path, _ in self.editor.files_changed(changes):
            if path not in self.overlay:
                drop_entry(self.entries, path)
        self._lookups.clear()
        self._finder.forget()

    def update(self, path: str, text: str | None) -> set[str]:
        """An editor buffer changed (`text`) or closed (None, the file on disk counts again).

        Drops what was derived from the old content and returns the files whose last check
        read this one: the language server checks the edited buffer first, from what it
        holds for every other module, then rechecks these at lower priority."""
        path = os.path.abspath(path)
        if self.editor.set_buffer(path, text):
            self._finder.buffers_changed()
        drop_entry(self.entries, path)
        self._lookups.clear()
        self._finder.forget()
        return self.dependents(path)

    @property
    def reads(self) -> list[tuple[str, str]] | None:
        """While a list: every (path, digest) a lookup reads is appended to it, so that an
        analysis kept across checks (`qlint.analysis.flow.shared_flows`) knows what to
        compare before it is reused."""
        return self._records.reads

    @reads.setter
    def reads(self, reads: list[tuple[str, str]] | None) -> None:
        self._records.reads = reads

    def begin_check(self, path: str | None = None, text: str | None = None, tree: ast.Module | None = None) -> None:
        """A new check starts: forget the lookups of the last one (the files may have changed).

        With the file checked (`path`, its `text` and the engine's `tree` of it): a rule that
        looks up the checked file's own module (`utils` in a directory without `__init__.py`,
        resolved from inside it) reads that parse instead of parsing the file a second time."""
        self._lookups.clear()
        self._finder.begin_check()
        self._keys.begin_check()
        self.checked_file = (os.path.abspath(path), text, tree) if path and text is not None and tree else None
        self.checks += 1
        if self.checked_file is not None:
            entry = self.entries.get(self.checked_file[0])
            if entry is not None and entry[0][0] == self.content_key(self.checked_file[0]):
                watch_module_bodies(self, entry[1])
        if self.set_aside is not None:
            self.set_aside.after(self.checks)

    def find_module_in_check(self, module: str, requester: str) -> str | None:
        """`find_module`, asked once per check for files of one directory (`ModuleFinder.in_check`)."""
        return self._finder.in_check(module, requester)

    def digest(self, path: str, key: tuple | None = None) -> str:
        """sha256 of the module as this index sees it ("" when absent; `ModuleKeys.digest`)."""
        return self._keys.digest(path, key)

    def take_tree(self, path: str, data: bytes) -> ast.Module | None:
        """The tree `fact_at(path, ..., keep_tree=True)` parsed just before, if parsed from `data`."""
        return self.kept_tree.take(path, data)

    def held_scope(self, path: str) -> ModuleScope | None:
        """The scope this index holds now for the module at `path` (absolute), None when it
        holds none (never read, or set aside): nothing is read or parsed."""
        entry = self.entries.get(path)
        return entry[1] if entry is not None else None

    def end_check(self) -> None:
        """The check has ended: its tree is no longer the one to read. Held until the next
        check, the tree and all kept on its nodes outlived it, and the collector, paused
        while a check runs (`gc_pause`), traversed them all when it resumed."""
        self.checked_file = None

    def checked_once(self, path: str) -> None:
        """The check of `path` ended and the file will not be checked again (a command-line
        run): the engine's tree of it, kept with its module's entry for facts a later check may
        ask, goes now (such a fact parses the text again, as for any other module)."""
        entry = self.entries.get(os.path.abspath(path))
        if entry is not None:
            entry[2].drop_parse()
        if self.previous_trees is not None:
            self.previous_trees.drop(os.path.abspath(path))

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

    def scope_at(self, path: str) -> ModuleScope | None:
        """The scope of the module at `path` as its summary gives it (None: unreadable), as
        `fact_at` reads its facts: no dependency is recorded (the caller records what it uses)."""
        entry = module_entry(self, os.path.abspath(path))
        return entry[1] if entry is not None else None

    def _load(self, path: str) -> tuple[ModuleScope | None, str | None]:
        entry = module_entry(self, path)
        return (entry[1], entry[0][1]) if entry is not None else (None, None)

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

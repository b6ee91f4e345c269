"""The dependencies of cached results that are not one file's content (`DerivedDependencies`,
the `derived` a `cache.Cache` holds): the listing of a directory a whole-project scan read
(its needles held by no file it did not read, `project_files.listing_dependency`, or its
fingerprint behind a marker, `listed_dependencies`), the digest of the project's wrapper
names (`wrapper_record`) and the entries of the standard or installed names under roots
(`shadowed_names`). Each is worked out once per run, with the run's stats (the cache's
`RunStats`, handed over rather than inherited: one object sees each path once, whichever
part asks), from the stores the cache opens (its shards, wrapper records and kept
listings); and what a run record needs of them and of those stats (`observations`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from qlint import listed_dependencies
from qlint.analysis import wrapper_record
from qlint.analysis.names import shadowed_names
from qlint.analysis.project_files import (
    disk_files,
    holds_any,
    kept_listing,
    listings_made,
    restore_listings,
    saved_listings,
)
from qlint.cache_stats import UNSEEN, RunStats
from qlint.listing_store import ListingStore
from qlint.wrapper_store import WrapperStore


class DerivedDependencies:
    def __init__(self, stats: RunStats, shards: Path, wrappers: WrapperStore, listings: ListingStore) -> None:
        self.stats = stats
        self.shards = shards  # where the results' side files (`listed_dependencies`) are read back
        self.wrappers = wrappers
        # Directory listings kept between runs, per root (`qlint.listing_store`): the roots
        # read back this run, and those under which a directory was listed afresh since.
        self.listings = listings
        self._listings: dict[tuple[str, bool], list[str]] = {}  # (root, recursive) -> files this run
        self._listed: dict[tuple[str, bool], str | None] = {}  # (root, recursive) -> fingerprint now
        self._holds: dict[tuple[str, tuple[bytes, ...]], bool] = {}
        self._wrapper_digests: dict[str, str | None] = {}  # root -> the index's digest this run
        self._wrapper_records: dict[str, wrapper_record.Record | None] = {}  # root -> as loaded this run
        self.wrapper_deps: dict[str, str | None] = {}  # the dependency naming it -> the same
        self._shadow_roots: dict[str, str] = {}  # root -> its entries `shadowed_names` reads
        self._kept_roots: set[str] = set()
        self._relisted: set[str] = set()
        self._rebuilt = False  # a wrapper index was worked out again from the files it read

    def observations(self) -> tuple[dict[str, tuple[int, int] | None], list[str]] | None:
        """(path -> (size, mtime_ns) or None (absent), for every path the run's lookups looked
        at; the directories below the walked ones that their listings took without the walk)
        for `qlint.run_record`: while each path and directory is the same, the walk lists the
        same directories and the symbolic links the walk met lead where they did, the lookups
        would decide the same again. None when something else was looked at: a wrapper index
        worked out again (it reads files without this run's stats), a listing of a directory
        the walk did not list, unless the listing kept of it still holds and has no link to a
        directory (the walk saw where its own links led: an unwalked one's it did not)."""
        if self._rebuilt:
            return None
        roots = [(root, recursive) for root, recursive in self._listings]
        roots += [(root, True) for root in self._wrapper_digests]
        unwalked: dict[str, None] = {}
        if not all(self._walked_below(os.path.abspath(root), recursive, unwalked) for root, recursive in roots):
            return None
        for file, _needles in self._holds:  # read for `no_new_match`: its stat vouches for it
            self.stats.stat_now(file)
        # A path the walk saw absent is vouched for by the stat of the walked directory whose
        # listing lacks it (creating it, or a directory on the way, moves that stat), which
        # the record keeps: not stat'ed again one by one (every lookup's tried paths are
        # dependencies, `import_paths.tried_before`: tens of thousands on ExecuTorch).
        walked_absent = self.stats.walked_absent
        seen = {p: s for p, s in self.stats.seen.items() if s is not None or p not in walked_absent}
        return seen, list(unwalked)

    def _walked_below(self, root: str, recursive: bool, unwalked: dict[str, None]) -> bool:
        """Whether listing `root`, a directory the run's discovery walked, took only directories
        it walked or whose kept listing still holds (those added to `unwalked`: a directory
        the walk entered by another path, through a link, or one it excluded)."""
        walked = self.stats.walked
        if root not in walked:
            return False
        pending = [root]
        while pending:
            directory = pending.pop()
            listing = walked.get(directory)
            if listing is None:
                listing = kept_listing(directory)
                if listing is None or listing[2]:
                    return False
                unwalked[directory] = None
            if recursive:
                pending.extend(listing[0])
        return True

    def listings_unchanged(self, deps: dict) -> frozenset[tuple[str, bool]] | None:
        """The (root, recursive) of every marker among `deps` if each listing's fingerprint
        is the one recorded (empty without markers); None when one differs. Markers come
        first (`listed_dependencies.set_aside`): the scan stops at the first other key, so
        the 3,800 results without markers of a warm ExecuTorch run cost one look each (a
        marker found later, which this version never writes, fails the lookup's loop)."""
        same = []
        for dep, recorded in deps.items():
            if type(dep) is not str or not dep.startswith(listed_dependencies.LISTED_PREFIX):
                break
            group = listed_dependencies.parse_listed_key(dep)
            if group is None or self._fingerprint_now(*group) != recorded:
                return None
            same.append(group)
        return frozenset(same)

    def _fingerprint_now(self, root: str, recursive: bool) -> str | None:
        """The fingerprint of what `root` lists now, with this run's stats; once per run."""
        key = (root, recursive)
        if key in self._listed:
            return self._listed[key]
        items = []
        stat_now = self.stats.stat_now
        files = self._snapshot_files(root) if recursive else None
        for file in files if files is not None else self._listing(root, recursive):
            stat = stat_now(file)
            if stat is None:  # gone between the listing and its stat
                items = None
                break
            items.append((file, stat))
        found = self._listed[key] = listed_dependencies.fingerprint(items) if items is not None else None
        return found

    def _wrapper_record(self, root: str) -> wrapper_record.Record | None:
        if root not in self._wrapper_records:
            self._wrapper_records[root] = self.wrappers.load(root)
        return self._wrapper_records[root]

    def _snapshot_files(self, root: str) -> list[str] | None:
        """The files under `root` as the wrapper names' snapshot vouches for them (every
        directory and file with the stat it kept: `tree_snapshot`), which the warm run asks
        for the wrapper dependency anyway; None where it does not vouch. A result that depends
        on the listing of a project (a search of it that no one module decided: ao's
        test_quantize_pt2e.py, whose name no other module holds) is then checked without
        reading back, restoring and walking the kept listings of its directories."""
        record = self._wrapper_record(root)
        if record is None or record.root != root or record.snapshot is None:
            return None
        return record.snapshot.files if record.unchanged(self.stats.stats_of) else None

    def restored(self, path: str, deps: dict, dep_stats: dict) -> tuple[dict, dict] | None:
        """The entry's dependencies with those set aside behind its markers read back; None
        when the side file is missing or was written for other markers."""
        markers = {d: v for d, v in deps.items() if type(d) is str and d.startswith(listed_dependencies.LISTED_PREFIX)}
        if not markers:
            return deps, dep_stats
        aside = listed_dependencies.read(self.shards, path, markers)
        if aside is None:
            return None
        full = {d: v for d, v in deps.items() if d not in markers}
        full.update(aside[0])
        return full, {**dep_stats, **aside[1]}

    def _listing(self, root: str, recursive: bool) -> list[str]:
        files = self._listings.get((root, recursive))
        if files is None:
            with self._kept_listings(root):
                files = self._listings[root, recursive] = disk_files(root, recursive, self.stats.walked)
        return files

    @contextlib.contextmanager
    def _kept_listings(self, root: str) -> Iterator[None]:
        """While inside, the directories under `root` are listed from what an earlier run
        kept of them, each still only while its stamp is the one kept (`project_files._listed`);
        the listings made afresh meanwhile are kept at `save_listings`. Not where the run's file
        discovery walked the root: it listed every directory there already."""
        root = os.path.abspath(root)
        if root not in self._kept_roots and root not in self.stats.walked:
            self._kept_roots.add(root)
            kept = self.listings.load(root)
            if kept is not None:
                with contextlib.suppress(TypeError, ValueError):  # damaged: listed afresh
                    restore_listings(root, kept)
        made = listings_made()
        try:
            yield
        finally:
            if listings_made() != made:
                self._relisted.add(root)

    def wrapper_digest(self, dep: str) -> str | None:
        """The digest of the project's wrapper names now (`wrapper_record`), once per run and
        dependency (3,600 results name the same one on ExecuTorch): kept on disk and checked
        by stats, over the directories the run listed; worked out again only after a file
        that could change it."""
        known = self.wrapper_deps.get(dep, UNSEEN)
        if known is not UNSEEN:
            return known
        root = wrapper_record.parse_dependency(dep)
        if root is None:
            digest = None
        elif root in self._wrapper_digests:
            digest = self._wrapper_digests[root]
        else:
            record = self._wrapper_record(root)
            if record is not None and record.unchanged(self.stats.stats_of):
                # No listing needed: every directory kept its stamp. The marker of a root with
                # no index stands for none, as `rebuilt_digest` would find.
                digest = record.digest if record.indexed else None
            else:
                digest = self._checked_wrapper_digest(root, record)
            self._wrapper_digests[root] = digest
        self.wrapper_deps[dep] = digest
        return digest

    def shadow_digest(self, dep: str) -> str:
        """`shadowed_names.digest_now` of a dependency's roots, once per run and dependency
        (the results of one directory name the same), kept with the wrapper digests so that
        the next result asks for it first. The roots' stats go to the run record: an entry
        created or removed in one moves it."""
        roots = shadowed_names.roots_of(dep)
        for root in roots:
            self.stats.stat_now(root)
        digest = self.wrapper_deps[dep] = shadowed_names.digest_now(roots, self._shadow_roots)
        return digest

    def _checked_wrapper_digest(self, root: str, record: wrapper_record.Record | None) -> str | None:
        """`wrapper_digest` the long way: the record checked file by file over the listing
        (and kept again with what it took in), else the index worked out again."""
        stats = self.stats
        with self._kept_listings(root):
            if record is not None and record.still_valid(stats.stat_now, stats.walked, stats.stats_of):
                if record.dirty:
                    self.wrappers.save(record)
                return record.digest if record.indexed else None
            from qlint.analysis.graphs.wrapper_index import rebuilt_digest

            self._rebuilt = True
            return rebuilt_digest(root, self.wrappers, stats.walked)

    def no_new_match(self, path: str, deps: dict, root: str, recursive: bool, needles: tuple[bytes, ...]) -> bool:
        """No file under `root` that the result did not read (one created since) holds a needle."""
        for file in self._listing(root, recursive):
            if file == path or file in deps:
                continue
            known = self._holds.get((file, needles))
            if known is None:
                known = self._holds[file, needles] = holds_any(file, needles)
            if known:
                return False
        return True

    def save_listings(self) -> None:
        """Keep the listings made afresh under the roots read back this run (`_kept_listings`),
        for the next run to restore; at the cache's `save`, with its shards."""
        for root in sorted(self._relisted):
            kept = saved_listings(root)
            if kept:
                self.listings.save(root, kept)
        self._relisted.clear()

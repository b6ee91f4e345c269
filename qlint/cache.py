"""On-disk results cache: per (qlint version, settings fingerprint), an index in shards.

The index maps an absolute path to `(size, mtime_ns, sha256, diagnostics, dependencies,
dependency stats)`: when the stat matches, the stored hash is trusted without reading the file; when it does
not, the file is read and hashed, and an unchanged hash still hits (a `touch` or a checkout
does not invalidate). A result is valid only while every project file it depends on
(`FileResult.dependencies`) still has the recorded hash; a dependency whose stat is the one
recorded with that hash is not looked at further (a module found by a whole-project scan
can depend on thousands). Files modified within the last seconds are stored with an
untrusted stat, so a second same-size edit in the same mtime tick is still noticed next time.
A whole-project scan also depends on which files exist (`project_files.listing_dependency`):
that dependency holds while no file listed now that the result did not read holds one of
the scan's needles (a new module calling the helper misses; an unrelated one still hits).

Why shards, and not one file per source file nor one for all: a warm run over the installed
torch tree (~2,300 files) must cost about one `stat` per file, so it reads a few dozen files,
not thousands; and `qlint check FILE` (pre-commit, an editor's save) must not load and
verify the whole repository's index (1.8 MB and 30 ms on ExecuTorch) to answer for one file.
A path's shard is chosen by its directory, so the modules a result depends on, usually its
neighbours, tend to come with it; a shard is loaded the first time a path of it is asked
about, and only changed shards are written.

Each shard is `marshal`ed plain data (no pickle: loading a cache must never run code),
written atomically, behind a header and a SHA-256 of the payload: a flipped bit or a cut
file is noticed before anything is decoded, and the shard is ignored as if absent. An
entry that passes the checksum but does not decode (a value this version does not know,
a wrong type) is a miss and is dropped; a cache is never a reason for a run to fail.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
import time
import zlib
from collections.abc import Iterator, MutableMapping
from itertools import chain
from operator import attrgetter
from pathlib import Path
from typing import Any

from qlint import __version__, checksummed_files, key_digests, listed_dependencies
from qlint.analysis import wrapper_record
from qlint.analysis.names import shadowed_names
from qlint.analysis.project_files import (
    disk_files,
    holds_any,
    kept_listing,
    listings_made,
    parse_listing_dependency,
    restore_listings,
    saved_listings,
)
from qlint.analysis.racy_stats import RACY_NS
from qlint.cache_keys import cache_dir_for, cache_key
from qlint.diagnostic import diagnostic_from_dict, diagnostic_to_dict
from qlint.listing_store import ListingStore
from qlint.results import FileResult, content_hash
from qlint.settings import Settings
from qlint.wrapper_store import WrapperStore

# 4: results of whole-project scans carry a listing dependency; a cache written without it
# would keep serving them after a new module changed them.
# 5: their dependencies on a whole listing may be set aside behind one marker
# (`qlint.listed_dependencies`), which a cache reader before 5 would not know to check.
_MAGIC = "qlint-cache-5"
_HEADER = b"qlint-cache-5\n"
_SHARDS = 64
_UNTRUSTED = -1
_UNSEEN = object()
_FEW = 64  # fewer recorded stats than this are compared one by one
_SIZE_MTIME = attrgetter("st_size", "st_mtime_ns")


class Cache:
    def __init__(self, directory: Path, fingerprint: str):
        self.directory = Path(directory)
        self.shards = self.directory / __version__ / f"{fingerprint}.results"
        self.fingerprint = fingerprint
        self.entries = _ShardedEntries(self)
        self._hashes: dict[str, str] = {}  # current content hashes computed this run
        self._stat_digests: dict[str, tuple[tuple[int, int], str] | None] = {}
        self._stats: dict[str, tuple[int, int] | None] = {}  # dependencies' stats this run
        self._unlooked: dict[str, tuple[int, int] | None] = {}  # of those, paths not looked up yet
        # Of those, absent ones the walk's listings vouch for (`_not_walked`): not stat'ed.
        self._walked_absent: set[str] = set()
        # (path, "") of every dependency found absent this run, as results record it: a result's
        # absent dependencies already looked at are passed over in one set difference, not one
        # by one (a module lookup's tried paths, `import_paths.tried_before`, are most of them).
        self._absent: set[tuple[str, str]] = set()
        self._unwalked_dirs: dict[str, bool] = {}  # directory not walked -> `_not_walked` of it
        self._listings: dict[tuple[str, bool], list[str]] = {}  # (root, recursive) -> files this run
        self._listed: dict[tuple[str, bool], str | None] = {}  # (root, recursive) -> fingerprint now
        # Directories the run's file discovery listed (`Discovery.listings`, `.names`): listed once.
        self.walked: dict[str, tuple] = {}
        self.walked_names: dict[str, frozenset[str]] = {}
        self._holds: dict[tuple[str, tuple[bytes, ...]], bool] = {}
        self.wrappers = WrapperStore(self.directory / __version__ / f"{fingerprint}.wrappers")
        # Paths whose side file (`listed_dependencies`) no entry names any more: removed at `save`.
        self._unnamed_sides: set[str] = set()
        self._wrapper_digests: dict[str, str | None] = {}  # root -> the index's digest this run
        self._wrapper_records: dict[str, wrapper_record.Record | None] = {}  # root -> as loaded this run
        self._wrapper_deps: dict[str, str | None] = {}  # the dependency naming it -> the same
        self._shadow_roots: dict[str, str] = {}  # root -> its entries `shadowed_names` reads
        # Directory listings kept between runs, per root (`qlint.listing_store`): the roots
        # read back this run, and those under which a directory was listed afresh since.
        self.listings = ListingStore(self.directory / __version__ / f"{fingerprint}.listings")
        self._kept_roots: set[str] = set()
        self._relisted: set[str] = set()
        self._rebuilt = False  # a wrapper index was worked out again from the files it read

    @property
    def dirty(self) -> bool:
        return bool(self.entries.changed)

    @dirty.setter
    def dirty(self, value: bool) -> None:
        """True: write every loaded shard at `save` (an entry was changed in place)."""
        if value:
            self.entries.changed.update(self.entries.loaded)
        else:
            self.entries.changed.clear()

    def shard_file(self, path: str) -> Path:
        return self.shards / f"{shard_of(path):02x}.index"

    @classmethod
    def for_settings(cls, settings: Settings) -> Cache:
        return cls(cache_dir_for(settings), cache_key(settings))

    # ----------------------------------------------------------------- lookups

    def lookup(self, path: str) -> FileResult | None:
        """The cached result for `path` if its content and dependencies are unchanged."""
        entry = self.entries.get(path)
        if entry is None:
            return None
        if not _valid_entry(entry):
            del self.entries[path]  # a shape this version never writes: check the file again
            self._unnamed_sides.add(path)
            return None
        size, mtime_ns, digest, diagnostics, deps, dep_stats = entry
        # A result looked up earlier in the run may have stat'ed it as its dependency (the
        # project scans' results depend on every module): that stat is the run's view of it,
        # taken once. A second lookup of the path stats again (the file may have changed).
        now = self._unlooked.pop(path, _UNSEEN)
        if now is _UNSEEN:
            try:
                st = os.stat(path)
            except OSError:
                return None
            now = (st.st_size, st.st_mtime_ns)
        elif now is None:
            return None
        # Remembered for the run: a module checked here is also a dependency of others.
        self._stats[path] = now
        if size == _UNTRUSTED or now != (size, mtime_ns):
            current = self._hash_file(path)
            if current != digest:
                return None
            # Same content, new stat: remember it so the next run stats only.
            self.entries[path] = (*self._stat_key_values(*now), digest, diagnostics, deps, dep_stats)
        listed = self._listings_unchanged(deps)
        refresh = listed is None
        if refresh:  # a listing changed: its set-aside dependencies are checked one by one
            restored = self._restored(path, deps, dep_stats)
            if restored is None:
                return None
            deps, dep_stats = restored
            listed = frozenset()
        stats = self._stats
        wrappers = self._wrapper_deps  # most results name the one wrapper index: asked first
        for dep, dep_digest in self._unvouched(deps, dep_stats):  # thousands per result
            now = stats.get(dep, _UNSEEN)
            if now is _UNSEEN:
                if dep in wrappers:
                    if wrappers[dep] != dep_digest:
                        return None
                    continue
                if type(dep) is not str:
                    return None
                if dep.startswith(listed_dependencies.LISTED_PREFIX):
                    if listed_dependencies.parse_listed_key(dep) in listed:
                        continue  # a marker `_listings_unchanged` found equal
                    return None
                listing = parse_listing_dependency(dep)
                if listing is not None:
                    if listing[:2] not in listed and not self._no_new_match(path, deps, *listing):
                        return None
                    continue
                if dep.startswith(wrapper_record.PREFIX):
                    if self._wrapper_digest(dep) != dep_digest:
                        return None
                    continue
                if dep.startswith(shadowed_names.PREFIX):
                    if self._shadow_digest(dep) != dep_digest:
                        return None
                    continue
                if dep_digest == "" and self._not_walked(dep.removesuffix(os.sep)):
                    stats[dep] = None  # recorded absent, still absent: the run's view of it
                    self._walked_absent.add(dep)
                    self._absent.add((dep, ""))
                    continue
                now = self._stat_now(dep)
            if type(dep_digest) is not str:
                return None
            if now is not None and now == dep_stats.get(dep):
                # The stat it had when its digest was recorded: no need to look at its own entry
                # (in another shard, perhaps) nor at its content.
                continue
            if dep_digest == "" and now is None:
                self._absent.add((dep, ""))
                continue  # still absent: no need to load the shard a file there would be in
            if dep_digest == "" and dep.endswith(os.sep):
                return None  # a directory recorded absent (`import_paths.tried_before`) is there
            if dep_digest == shadowed_names.DIRECTORY:
                if now is None:
                    return None  # a directory recorded there (`ProjectIndex.is_directory`) is gone
                continue
            if self.current_hash(dep) != dep_digest:
                return None
        try:
            decoded = [diagnostic_from_dict(d) for d in diagnostics]
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            del self.entries[path]  # undecodable: check the file again and store a good entry
            self._forget_side(path, entry)
            return None
        result = FileResult(path=path, diagnostics=decoded, dependencies=dict(deps), parsed=False)
        if refresh:
            # Valid, though a listing's fingerprint differed (a touch, an unrelated new file):
            # stored again with the stats of now, so the next run compares fingerprints again.
            self.store(result, *self._stats[path], digest)
        return result

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
        for file, _needles in self._holds:  # read for `_no_new_match`: its stat vouches for it
            self._stat_now(file)
        # A path the walk saw absent is vouched for by the stat of the walked directory whose
        # listing lacks it (creating it, or a directory on the way, moves that stat), which
        # the record keeps: not stat'ed again one by one (every lookup's tried paths are
        # dependencies, `import_paths.tried_before`: tens of thousands on ExecuTorch).
        walked_absent = self._walked_absent
        seen = {p: s for p, s in self._stats.items() if s is not None or p not in walked_absent}
        return seen, list(unwalked)

    def _walked_below(self, root: str, recursive: bool, unwalked: dict[str, None]) -> bool:
        """Whether listing `root`, a directory the run's discovery walked, took only directories
        it walked or whose kept listing still holds (those added to `unwalked`: a directory
        the walk entered by another path, through a link, or one it excluded)."""
        if root not in self.walked:
            return False
        pending = [root]
        while pending:
            directory = pending.pop()
            listing = self.walked.get(directory)
            if listing is None:
                listing = kept_listing(directory)
                if listing is None or listing[2]:
                    return False
                unwalked[directory] = None
            if recursive:
                pending.extend(listing[0])
        return True

    def _listings_unchanged(self, deps: dict) -> frozenset[tuple[str, bool]] | None:
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
        files = self._snapshot_files(root) if recursive else None
        for file in files if files is not None else self._listing(root, recursive):
            stat = self._stat_now(file)
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
        return record.snapshot.files if record.unchanged(self._stats_of) else None

    def _restored(self, path: str, deps: dict, dep_stats: dict) -> tuple[dict, dict] | None:
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
                files = self._listings[root, recursive] = disk_files(root, recursive, self.walked)
        return files

    @contextlib.contextmanager
    def _kept_listings(self, root: str) -> Iterator[None]:
        """While inside, the directories under `root` are listed from what an earlier run
        kept of them, each still only while its stamp is the one kept (`project_files._listed`);
        the listings made afresh meanwhile are kept at `save`. Not where the run's file
        discovery walked the root: it listed every directory there already."""
        root = os.path.abspath(root)
        if root not in self._kept_roots and root not in self.walked:
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

    def _unvouched(self, deps: dict, dep_stats: dict):
        """The dependencies left to look at one by one: all of them, or for a result of a
        project scan (thousands, each with the stat its digest was recorded with) only those
        whose recorded stat is not the one they have now, found by one comparison of the two
        tables (a warm run's inner loop, four times 3,800 on ExecuTorch)."""
        absent = self._absent
        if len(dep_stats) < _FEW:
            return deps.items() - absent if absent else deps.items()
        stats = self._stats
        for dep in dep_stats.keys() - stats.keys():
            if type(dep) is not str:
                return deps.items()  # not a path: the loop rejects the entry
            self._stat_now(dep)
        if not dep_stats.items() <= stats.items():
            return deps.items() - absent  # one has changed: look at each (its digest may still match)
        return [(dep, digest) for dep, digest in deps.items() - absent if dep not in dep_stats]

    def _wrapper_digest(self, dep: str) -> str | None:
        """The digest of the project's wrapper names now (`wrapper_record`), once per run and
        dependency (3,600 results name the same one on ExecuTorch): kept on disk and checked
        by stats, over the directories the run listed; worked out again only after a file
        that could change it."""
        known = self._wrapper_deps.get(dep, _UNSEEN)
        if known is not _UNSEEN:
            return known
        root = wrapper_record.parse_dependency(dep)
        if root is None:
            digest = None
        elif root in self._wrapper_digests:
            digest = self._wrapper_digests[root]
        else:
            record = self._wrapper_record(root)
            if record is not None and record.unchanged(self._stats_of):
                # No listing needed: every directory kept its stamp. The marker of a root with
                # no index stands for none, as `rebuilt_digest` would find.
                digest = record.digest if record.indexed else None
            else:
                digest = self._checked_wrapper_digest(root, record)
            self._wrapper_digests[root] = digest
        self._wrapper_deps[dep] = digest
        return digest

    def _shadow_digest(self, dep: str) -> str:
        """`shadowed_names.digest_now` of a dependency's roots, once per run and dependency
        (the results of one directory name the same), kept with the wrapper digests so that
        the next result asks for it first. The roots' stats go to the run record: an entry
        created or removed in one moves it."""
        roots = shadowed_names.roots_of(dep)
        for root in roots:
            self._stat_now(root)
        digest = self._wrapper_deps[dep] = shadowed_names.digest_now(roots, self._shadow_roots)
        return digest

    def _checked_wrapper_digest(self, root: str, record: wrapper_record.Record | None) -> str | None:
        """`_wrapper_digest` the long way: the record checked file by file over the listing
        (and kept again with what it took in), else the index worked out again."""
        with self._kept_listings(root):
            if record is not None and record.still_valid(self._stat_now, self.walked, self._stats_of):
                if record.dirty:
                    self.wrappers.save(record)
                return record.digest if record.indexed else None
            from qlint.analysis.graphs.wrapper_index import rebuilt_digest

            self._rebuilt = True
            return rebuilt_digest(root, self.wrappers, self.walked)

    def _no_new_match(self, path: str, deps: dict, root: str, recursive: bool, needles: tuple[bytes, ...]) -> bool:
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

    def _not_walked(self, path: str) -> bool:
        """True when the run's file discovery saw that `path` does not exist: a component of
        it is not among the entries of the deepest directory above it that was walked. Case
        folded (a case-insensitive file system finds `Foo.py` for `foo.py`); a component
        that is not ASCII is left to a stat. A path below a directory not walked has that
        directory's answer (the same walked directory decides both), kept for the run: the
        paths a module lookup tried share a few (`tried_before`)."""
        names = self.walked_names
        if not names:
            return False
        parent, _, component = path.rpartition(os.sep)
        if not parent:
            return False
        known = names.get(parent)
        if known is not None:
            return component.isascii() and component.lower() not in known
        verdict = self._unwalked_dirs.get(parent)
        if verdict is None:
            verdict = self._unwalked_dirs[parent] = self._not_walked(parent)
        return verdict

    def _stat_now(self, path: str) -> tuple[int, int] | None:
        """(size, mtime_ns) of `path` now, None when it cannot be stat'ed (absent: its content
        hash is "", as `current_hash` would find). Once per run: the same modules are
        dependencies of many results, and so are the same absent ones (a module looked for
        beside the file that imports it)."""
        now = self._stats.get(path, _UNSEEN)
        if now is _UNSEEN:
            try:
                st = os.stat(path)
                now = self._stats[path] = self._unlooked[path] = (st.st_size, st.st_mtime_ns)
            except OSError:
                now = self._stats[path] = self._unlooked[path] = None
        return now

    def _stats_of(self, paths: list[str]) -> list[int] | None:
        """`_stat_now` of each of `paths` (the wrapper record's 3,800 on ExecuTorch), in one
        flat list as `tree_snapshot` compares them; None at the first that cannot be stat'ed."""
        stats, unlooked = self._stats, self._unlooked
        if stats.keys().isdisjoint(paths):
            # None stat'ed yet (the snapshot's check, the first thing a cached one-file check
            # does): the paths are stat'ed and taken in by `map`, not one by one in the loop
            # below, which cost ExecuTorch's 3,800 files ~10 M instructions beside their stats.
            try:
                now = list(map(_SIZE_MTIME, map(os.stat, paths)))
            except OSError:
                pass  # one cannot be stat'ed: the loop finds which, and records those before it
            else:
                seen = dict(zip(paths, now, strict=True))
                stats.update(seen)
                unlooked.update(seen)
                return list(chain.from_iterable(now))
        out: list[int] = []
        add = out.extend
        for path in paths:
            now = stats.get(path, _UNSEEN)
            if now is _UNSEEN:
                try:
                    st = os.stat(path)
                    now = (st.st_size, st.st_mtime_ns)
                except OSError:
                    now = None
                stats[path] = unlooked[path] = now
            if now is None:
                return None
            add(now)
        return out

    def current_hash(self, path: str) -> str:
        """Content hash of a dependency now; "" when it is gone. Uses stored stats."""
        known = self._hashes.get(path)
        if known is not None:
            return known
        entry = self.entries.get(path)
        if entry is not None and _valid_entry(entry) and entry[0] != _UNTRUSTED:
            try:
                st = os.stat(path)
            except OSError:
                st = None
            if st is not None and (st.st_size, st.st_mtime_ns) == entry[:2]:
                self._hashes[path] = entry[2]
                return entry[2]
        return self._hash_file(path)

    def _hash_file(self, path: str) -> str:
        try:
            with open(path, "rb") as fh:
                digest = content_hash(fh.read())
        except OSError:
            digest = ""
        self._hashes[path] = digest
        return digest

    # ----------------------------------------------------------------- updates

    def store(self, result: FileResult, size: int, mtime_ns: int, digest: str) -> None:
        """Remember a fresh result; `size`/`mtime_ns` are from a stat taken before reading."""
        if result.errors:
            return  # an internal error or unreadable file must be retried next run
        key = self._stat_key_values(size, mtime_ns)
        diagnostics = [diagnostic_to_dict(d) for d in result.diagnostics]
        # Interned: the same modules (and the same absent ones: 11,400 mentions of 2,400 on
        # ExecuTorch) are dependencies of many results, and marshal writes a string it has
        # already written in a shard as a reference to it, once it is one object.
        deps = {sys.intern(dep): digest for dep, digest in result.dependencies.items()}
        dep_stats = {}
        groups = []
        for dep, dep_digest in deps.items():
            listing = parse_listing_dependency(dep)
            if listing is not None:
                groups.append(listing[:2])
            derived = (
                listing is not None
                or dep.startswith((wrapper_record.PREFIX, shadowed_names.PREFIX))
                or dep_digest == shadowed_names.DIRECTORY
            )
            known = self._stat_of_content(dep) if dep_digest and not derived else None
            if known is not None and known[1] == dep_digest:
                dep_stats[dep] = known[0]
        if groups and key[0] != _UNTRUSTED:
            split = listed_dependencies.set_aside(result.path, key, deps, dep_stats, groups, disk_files)
            if split is not None:
                kept, kept_stats, aside, aside_stats = split
                markers = {d: v for d, v in kept.items() if d.startswith(listed_dependencies.LISTED_PREFIX)}
                if listed_dependencies.write(self.shards, result.path, markers, aside, aside_stats):
                    deps, dep_stats = kept, kept_stats
        if _markers_first(deps):
            self._unnamed_sides.discard(result.path)  # written again just now
        else:
            self._forget_side(result.path, self.entries.get(result.path))
        self.entries[result.path] = (*key, digest, diagnostics, deps, dep_stats)
        self._hashes[result.path] = digest

    def _stat_of_content(self, path: str) -> tuple[tuple[int, int], str] | None:
        """A (size, mtime_ns) of `path` and the digest of the content that stat belongs to,
        or None when the stat cannot vouch for it (too recent to be told from a second edit
        in the same tick). The stat is taken first: content read after it is at least as
        new, and if it is newer it has another mtime, so the pair never vouches for it."""
        if path in self._stat_digests:
            return self._stat_digests[path]
        known = None
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if st is not None and time.time_ns() - st.st_mtime_ns >= RACY_NS:
            stat = (st.st_size, st.st_mtime_ns)
            entry = self.entries.get(path)  # checked this run or before: its digest, unread
            if entry is not None and _valid_entry(entry) and tuple(entry[:2]) == stat:
                known = (stat, entry[2])
            else:
                try:
                    with open(path, "rb") as fh:
                        known = (stat, content_hash(fh.read()))
                except OSError:
                    known = None
        self._stat_digests[path] = known
        return known

    def forget_missing(self, roots: list[str], seen: set[str]) -> None:
        """Drop entries below the walked `roots` that the walk no longer found. Only shards
        the run loaded are looked at: a run that walked a directory loaded the shard of every
        file it found, so what is left elsewhere is only ever found by a later walk."""
        prefixes = tuple(r.rstrip(os.sep) + os.sep for r in roots)
        for path, entry in self.entries.forget(seen, prefixes):
            self._forget_side(path, entry)

    def _forget_side(self, path: str, entry: Any) -> None:
        """`path`'s entry, which named its side file if it had markers, is gone or replaced
        by one without: the side file goes too, at `save` (after the shard that names it no
        more), or it would stay in the cache directory for good."""
        if type(path) is str and (not _valid_entry(entry) or _markers_first(entry[4])):
            self._unnamed_sides.add(path)

    def save(self) -> None:
        """Write the changed shards atomically. Failing to write a cache is never an error."""
        for shard in sorted(self.entries.changed):
            payload = {
                "magic": _MAGIC,
                "fingerprint": self.fingerprint,
                "shard": shard,
                "entries": self.entries.loaded[shard],
            }
            try:
                self.shards.mkdir(parents=True, exist_ok=True)
                _mark_cache_dir(self.directory)
                checksummed_files.write(self.shards / f"{shard:02x}.index", _HEADER, marshal.dumps(payload))
            except (OSError, ValueError):
                return
            self.entries.changed.discard(shard)
        for path in sorted(self._unnamed_sides):
            with contextlib.suppress(OSError):
                listed_dependencies.side_file(self.shards, path).unlink()
        self._unnamed_sides.clear()
        for root in sorted(self._relisted):
            kept = saved_listings(root)
            if kept:
                self.listings.save(root, kept)
        self._relisted.clear()
        key_digests.save_kept(self.directory)

    def load_shard(self, shard: int) -> dict[str, tuple]:
        # None when absent, cut short, corrupted, or written by another format
        payload = checksummed_files.read_marshalled(self.shards / f"{shard:02x}.index", _HEADER)
        if (
            not isinstance(payload, dict)
            or payload.get("magic") != _MAGIC
            or payload.get("fingerprint") != self.fingerprint
            or payload.get("shard") != shard
            or not isinstance(payload.get("entries"), dict)
        ):
            return {}
        # Entries are checked when looked up, not here: a run that checks one file must not
        # pay for validating the whole shard.
        return payload["entries"]

    @staticmethod
    def _stat_key_values(size: int, mtime_ns: int) -> tuple[int, int]:
        if time.time_ns() - mtime_ns < RACY_NS:
            return (_UNTRUSTED, mtime_ns)
        return (size, mtime_ns)


def shard_of(path: str) -> int:
    """The shard of `path`: by its directory, so neighbours (what a result usually depends
    on) share one."""
    return zlib.crc32(path[: path.rfind(os.sep)].encode("utf-8", "surrogatepass")) % _SHARDS


class _ShardedEntries(MutableMapping):
    """Path -> entry over the shards, each loaded the first time one of its paths is asked
    about; remembers which shards changed. A key that is not a path of its shard (never
    written by this version) is never found by a lookup nor listed."""

    def __init__(self, cache: Cache):
        self._cache = cache
        self.loaded: dict[int, dict[str, tuple]] = {}
        self.changed: set[int] = set()
        self._dir_shards: dict[str, int] = {}

    def _shard(self, path: str) -> tuple[int, dict[str, tuple]]:
        if type(path) is not str:
            raise KeyError(path)
        directory = path[: path.rfind(os.sep)]
        shard = self._dir_shards.get(directory)
        if shard is None:  # `shard_of`, once per directory: a warm run asks for every file
            shard = self._dir_shards[directory] = shard_of(path)
        entries = self.loaded.get(shard)
        if entries is None:
            entries = self.loaded[shard] = self._cache.load_shard(shard)
        return shard, entries

    def get(self, path: str, default: Any = None) -> Any:  # the warm run's hot path
        return self._shard(path)[1].get(path, default)

    def __getitem__(self, path: str) -> tuple:
        return self._shard(path)[1][path]

    def __setitem__(self, path: str, entry: tuple) -> None:
        shard, entries = self._shard(path)
        entries[path] = entry
        self.changed.add(shard)

    def __delitem__(self, path: str) -> None:
        shard, entries = self._shard(path)
        del entries[path]
        self.changed.add(shard)

    def forget(self, seen: set[str], prefixes: tuple[str, ...]) -> list[tuple[Any, Any]]:
        """Drop, from the loaded shards, the paths below `prefixes` that are not among `seen`
        (and keys that are no path at all); returns what was dropped, as (path, entry). The
        paths not seen are found by one set difference per shard (a warm ExecuTorch run sees
        all of its 3,800)."""
        dropped = []
        for shard, entries in self.loaded.items():
            gone = [p for p in entries.keys() - seen if type(p) is not str or p.startswith(prefixes)]
            for p in gone:
                dropped.append((p, entries.pop(p)))
            if gone:
                self.changed.add(shard)
        return dropped

    def __iter__(self) -> Iterator[str]:
        for shard in range(_SHARDS):
            self._shard_entries(shard)
        return iter(
            [p for shard in sorted(self.loaded) for p in self.loaded[shard] if type(p) is str and shard_of(p) == shard]
        )

    def _shard_entries(self, shard: int) -> None:
        if shard not in self.loaded:
            self.loaded[shard] = self._cache.load_shard(shard)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _valid_entry(entry: Any) -> bool:
    """The shape of `(size, mtime_ns, sha256, diagnostics, dependencies, dependency stats)`,
    checked on every lookup of a warm run (so: cheap). The diagnostics' own values are
    checked when they are decoded, the dependencies' when `lookup` compares them."""
    return (
        type(entry) is tuple
        and len(entry) == 6
        and type(entry[0]) is int
        and type(entry[1]) is int
        and type(entry[2]) is str
        and type(entry[3]) is list
        and type(entry[4]) is dict
        and type(entry[5]) is dict
    )


def _markers_first(deps: Any) -> bool:
    """Whether a dependency table starts with a listing's marker (markers come first), so
    its entry names a side file."""
    if type(deps) is not dict or not deps:
        return False
    first = next(iter(deps))
    return type(first) is str and first.startswith(listed_dependencies.LISTED_PREFIX)


def _mark_cache_dir(directory: Path) -> None:
    """Like ruff: the cache ignores itself in git and tells backup tools it is a cache."""
    gitignore = directory / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text("# Automatically created by qlint.\n*\n")
    tag = directory / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# Created by qlint.\n")

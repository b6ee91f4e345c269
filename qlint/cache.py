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

Each shard is `marshal`ed plain data (no pickle: loading a cache must never run code),
written atomically, behind a header and a SHA-256 of the payload: a flipped bit or a cut
file is noticed before anything is decoded, and the shard is ignored as if absent. An
entry that passes the checksum but does not decode (a value this version does not know,
a wrong type) is a miss and is dropped; a cache is never a reason for a run to fail.

Kept in modules of their own: the shards the entries live in (`cache_shards`), the run's
stats of the files (`cache_stats`), and the dependencies that are not one file's content,
with what a run record needs (`cache_derived`). The cache holds the last two as objects
(`stats`, `derived`), not as bases: each part is read in its own file, and what the derived
dependencies use of the run's stats and the cache's stores is handed to them by name.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
import time
from pathlib import Path
from typing import Any

from qlint import __version__, checksummed_files, key_digests, listed_dependencies
from qlint.analysis import wrapper_record
from qlint.analysis.names import shadowed_names
from qlint.analysis.project_files import disk_files, parse_listing_dependency
from qlint.analysis.racy_stats import RACY_NS
from qlint.cache_derived import DerivedDependencies
from qlint.cache_keys import cache_dir_for, cache_key
from qlint.cache_shards import ShardedEntries, markers_first, shard_of, valid_entry
from qlint.cache_stats import UNSEEN, RunStats
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
_UNTRUSTED = -1


class Cache:
    def __init__(self, directory: Path, fingerprint: str):
        self.directory = Path(directory)
        self.shards = self.directory / __version__ / f"{fingerprint}.results"
        self.fingerprint = fingerprint
        self.entries = ShardedEntries(self)
        self._hashes: dict[str, str] = {}  # current content hashes computed this run
        self._stat_digests: dict[str, tuple[tuple[int, int], str] | None] = {}
        self.wrappers = WrapperStore(self.directory / __version__ / f"{fingerprint}.wrappers")
        # Paths whose side file (`listed_dependencies`) no entry names any more: removed at `save`.
        self._unnamed_sides: set[str] = set()
        self.stats = RunStats()
        listings = ListingStore(self.directory / __version__ / f"{fingerprint}.listings")
        self.derived = DerivedDependencies(self.stats, self.shards, self.wrappers, listings)

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
        if not valid_entry(entry):
            del self.entries[path]  # a shape this version never writes: check the file again
            self._unnamed_sides.add(path)
            return None
        size, mtime_ns, digest, diagnostics, deps, dep_stats = entry
        stats, derived = self.stats, self.derived
        seen = stats.seen
        # A result looked up earlier in the run may have stat'ed it as its dependency (the
        # project scans' results depend on every module): that stat is the run's view of it,
        # taken once. A second lookup of the path stats again (the file may have changed).
        now = stats.unlooked.pop(path, UNSEEN)
        if now is UNSEEN:
            try:
                st = os.stat(path)
            except OSError:
                return None
            now = (st.st_size, st.st_mtime_ns)
        elif now is None:
            return None
        # Remembered for the run: a module checked here is also a dependency of others.
        seen[path] = now
        if size == _UNTRUSTED or now != (size, mtime_ns):
            current = self._hash_file(path)
            if current != digest:
                return None
            # Same content, new stat: remember it so the next run stats only.
            self.entries[path] = (*self._stat_key_values(*now), digest, diagnostics, deps, dep_stats)
        listed = derived.listings_unchanged(deps)
        refresh = listed is None
        if refresh:  # a listing changed: its set-aside dependencies are checked one by one
            restored = derived.restored(path, deps, dep_stats)
            if restored is None:
                return None
            deps, dep_stats = restored
            listed = frozenset()
        wrappers = derived.wrapper_deps  # most results name the one wrapper index: asked first
        for dep, dep_digest in stats.unvouched(deps, dep_stats):  # thousands per result
            now = seen.get(dep, UNSEEN)
            if now is UNSEEN:
                if dep in wrappers:
                    if wrappers[dep] != dep_digest:
                        return None
                    continue
                if type(dep) is not str:
                    return None
                if dep.startswith(listed_dependencies.LISTED_PREFIX):
                    if listed_dependencies.parse_listed_key(dep) in listed:
                        continue  # a marker `listings_unchanged` found equal
                    return None
                listing = parse_listing_dependency(dep)
                if listing is not None:
                    if listing[:2] not in listed and not derived.no_new_match(path, deps, *listing):
                        return None
                    continue
                if dep.startswith(wrapper_record.PREFIX):
                    if derived.wrapper_digest(dep) != dep_digest:
                        return None
                    continue
                if dep.startswith(shadowed_names.PREFIX):
                    if derived.shadow_digest(dep) != dep_digest:
                        return None
                    continue
                if dep_digest == "" and stats.not_walked(dep.removesuffix(os.sep)):
                    seen[dep] = None  # recorded absent, still absent: the run's view of it
                    stats.walked_absent.add(dep)
                    stats.absent.add((dep, ""))
                    continue
                now = stats.stat_now(dep)
            if type(dep_digest) is not str:
                return None
            if now is not None and now == dep_stats.get(dep):
                # The stat it had when its digest was recorded: no need to look at its own entry
                # (in another shard, perhaps) nor at its content.
                continue
            if dep_digest == "" and now is None:
                stats.absent.add((dep, ""))
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
            self.store(result, *seen[path], digest)
        return result

    def current_hash(self, path: str) -> str:
        """Content hash of a dependency now; "" when it is gone. Uses stored stats."""
        known = self._hashes.get(path)
        if known is not None:
            return known
        entry = self.entries.get(path)
        if entry is not None and valid_entry(entry) and entry[0] != _UNTRUSTED:
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
        if markers_first(deps):
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
            if entry is not None and valid_entry(entry) and tuple(entry[:2]) == stat:
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
        if type(path) is str and (not valid_entry(entry) or markers_first(entry[4])):
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
        self.derived.save_listings()
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


def _mark_cache_dir(directory: Path) -> None:
    """Like ruff: the cache ignores itself in git and tells backup tools it is a cache."""
    gitignore = directory / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text("# Automatically created by qlint.\n*\n")
    tag = directory / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# Created by qlint.\n")

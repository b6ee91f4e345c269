"""A cached result's dependencies on every file of a listing, set aside under one fingerprint.

A whole-project scan's result (QL101's packet scan, QL201's callers...) depends on every
module under the scan's root: on ExecuTorch seven results held 3,800 digests and stats each,
3 MB of the 4.3 MB a warm run loaded, to learn that nothing had changed. When every file
listed under the root (`project_files.disk_files`) is a dependency whose stat vouches for
its digest, those dependencies leave the entry for a side file, and the entry keeps one
marker per listing: the digest of the sorted (path, size, mtime_ns) of all of them (the
checked file's own included). A warm run lists the root, stats what it lists (the run stats
those files anyway), and compares one digest: equal, every file listed now is one the result
read, with the stat it had when its digest was recorded, so the dependencies hold and so
does the listing dependency ("no file the result did not read holds a needle"). Any
difference (a touch, an edit, a new or removed file) reads the side file back and checks
each dependency as before.

Side files are checksummed like the shards (`qlint.checksummed_files`), one per checked
path, and name the markers they were written with: one written by another run for other
markers is a miss, never a mix.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterable
from pathlib import Path

from qlint import checksummed_files
from qlint.plain_json import dumps, loads
from qlint.short_digests import sha256_hex

# A dependency whose "path" starts so is a marker: [root, recursive] -> fingerprint.
LISTED_PREFIX = "qlint-listed:"
_MAGIC = "qlint-listed-1"
_HEADER = b"qlint-listed-1\n"

Stat = tuple[int, int]


def listed_key(root: str, recursive: bool) -> str:
    return LISTED_PREFIX + dumps([root, recursive])


def parse_listed_key(dep: str) -> tuple[str, bool] | None:
    try:
        root, recursive = loads(dep[len(LISTED_PREFIX) :])
    except (ValueError, TypeError):
        return None
    if type(root) is not str or type(recursive) is not bool:
        return None
    return root, recursive


def fingerprint(items: Iterable[tuple[str, Stat]]) -> str:
    """The digest of (path, size, mtime_ns) triples in path order (a listing, or the files of
    a snapshot that vouches for one, `DerivedDependencies._snapshot_files`, which keeps
    another order), as marshal's version 0 writes them: the same values always give the same
    bytes (later versions mark interned and shared objects, which depend on where a string
    came from), several times faster than formatting text."""
    flat = sorted((path, stat[0], stat[1]) for path, stat in items)
    return sha256_hex(marshal.dumps(flat, 0))


def set_aside(
    path: str,
    own: Stat,
    deps: dict,
    dep_stats: dict,
    groups: Iterable[tuple[str, bool]],
    listing: Callable[[str, bool], list[str]],
) -> tuple[dict, dict, dict, dict] | None:
    """(kept deps with the markers, kept stats, set-aside deps, set-aside stats), or None when
    no listing of `groups` is wholly made of vouched dependencies (a file too recent for its
    stat to vouch for it, or created since the check, keeps every dependency in the entry)."""
    markers: dict[str, str] = {}
    moved: set[str] = set()
    for root, recursive in sorted(set(groups)):
        items = []
        for file in listing(root, recursive):
            if file == path:
                items.append((file, own))
                continue
            stat = dep_stats.get(file)
            if stat is None or file not in deps:
                break
            items.append((file, stat))
        else:
            markers[listed_key(root, recursive)] = fingerprint(items)
            moved.update(file for file, _ in items if file != path)
    if not markers:
        return None
    kept = dict(markers)  # first: `DerivedDependencies.listings_unchanged` reads up to the first other key
    kept.update((dep, digest) for dep, digest in deps.items() if dep not in moved)
    kept_stats = {dep: stat for dep, stat in dep_stats.items() if dep not in moved}
    return kept, kept_stats, {dep: deps[dep] for dep in moved}, {dep: dep_stats[dep] for dep in moved}


def side_file(directory: Path, path: str) -> Path:
    return directory / checksummed_files.name_for(path, ".listed")


def write(directory: Path, path: str, markers: dict, deps: dict, stats: dict) -> bool:
    """Best effort: False when it could not be written (the entry then keeps everything)."""
    payload = marshal.dumps({"magic": _MAGIC, "path": path, "markers": markers, "deps": deps, "stats": stats})
    try:
        directory.mkdir(parents=True, exist_ok=True)
        checksummed_files.write(side_file(directory, path), _HEADER, payload)
    except (OSError, ValueError):
        return False
    return True


def read(directory: Path, path: str, markers: dict) -> tuple[dict, dict] | None:
    """The set-aside (deps, stats) of `path` written with exactly `markers`, else None."""
    payload = checksummed_files.read_marshalled(side_file(directory, path), _HEADER)
    if (
        type(payload) is not dict
        or payload.get("magic") != _MAGIC
        or payload.get("path") != path
        or payload.get("markers") != markers
        or type(payload.get("deps")) is not dict
        or type(payload.get("stats")) is not dict
    ):
        return None
    return payload["deps"], payload["stats"]

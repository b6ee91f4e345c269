"""The Python files of a project directory as a check sees them: on disk and in unsaved buffers.

Scans that read the whole project (QL101's packet scan, QL102's consumers, QL103's convert
calls, QL201's callers) list the same files, so they skip the same directories, and share one
listing per process: the language server checks again and again, and walking ExecuTorch's
640 directories cost 50 ms per check. A directory is listed again only when its stamp moved
(mtime, ctime and inode: adding, removing or renaming an entry changes the mtime; editing a
file does not, and needs no new listing; a directory put back with an older mtime, as
`rsync -a` or `tar -x` do, has a new ctime, and a new directory at that path a new inode), or
when the mtime is too recent to tell a later change in the same tick from it.

A scan's answer depends on which files exist, not only on what the files it read hold: a
new module can call the helper QL201 asks about. `listing_dependency` names that as a
dependency of the check (`qlint.cache` validates it): valid while every file listed now is
either a file the result read (its own digest decides) or holds none of the scan's needles.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping

from qlint.analysis.racy_stats import RACY_NS
from qlint.analysis.skipped_dirs import walked
from qlint.plain_json import dumps, loads

# A dependency whose "path" starts so is a listing (`listing_dependency`), never a file.
LISTING_PREFIX = "qlint-listing:"


class _Dir:
    """What a directory held (a plain class: a dataclass costs every start ~1 ms)."""

    __slots__ = ("files", "links", "stamp", "subdirs")

    def __init__(self, stamp: Stamp | None, subdirs: tuple[str, ...], files: tuple[str, ...], links: tuple[str, ...]):
        self.stamp = stamp  # None: too recent to vouch for the listing below
        self.subdirs = subdirs  # absolute paths of the subdirectories to walk into
        self.files = files  # absolute paths of its `.py` files
        self.links = links  # absolute paths of its symbolic links to directories (not walked)


# A directory's (mtime, ctime, inode): what its listing is valid for.
Stamp = tuple[int, int, int]

# (subdirectories to walk into, `.py` files, symbolic links to directories, which are not)
Listing = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]

# directory -> what it held at its stamp (shared by every root that contains it)
_DIRS: dict[str, _Dir] = {}
_MAX_DIRS = 200_000
_MADE = [0]  # directories listed afresh by this process (`listings_made`)
# No listing of this process (here, or by file discovery, which imports this module) is older:
# a directory unchanged since is as any of them found it (`tree_snapshot`).
STARTED = time.time_ns()


def python_files(root: str, overlay: Iterable[str] = (), recursive: bool = True) -> list[str]:
    """Absolute paths of the `.py` files under `root` (only its own files unless `recursive`),
    with the open buffers (`overlay` paths) under it, sorted."""
    root = os.path.abspath(root)
    files: set[str] = set(disk_files(root, recursive))
    files.update(buffers_under(root, overlay, recursive))
    return sorted(files)


def buffers_under(root: str, overlay: Iterable[str], recursive: bool) -> list[str]:
    inside = root + os.sep
    return [
        p
        for p in overlay
        if p.endswith(".py") and p.startswith(inside) and (recursive or os.sep not in p[len(inside) :])
    ]


def disk_files(
    root: str,
    recursive: bool = True,
    listed: Mapping[str, Listing] | None = None,
    links: list[str] | None = None,
    dirs: list[str] | None = None,
) -> list[str]:
    """The `.py` files on disk under `root` (as `os.walk` finds them: symbolic links to
    directories are not followed), from the listings kept since the last check, or those
    in `listed` (directory -> `listing_of` its entries, made by the caller this run).
    With `links`, the symbolic links to directories met on the way are added to it (what
    the listing did not walk into: `links_out`), from the same listings, without a walk.
    With `dirs`, every directory it went into is added to it (one that could not be listed too)."""
    if len(_DIRS) > _MAX_DIRS:
        _DIRS.clear()
    out: list[str] = []
    pending = [os.path.abspath(root)]
    now = time.time_ns()
    while pending:
        directory = pending.pop()
        if dirs is not None:
            dirs.append(directory)
        known = listed.get(directory) if listed else None
        if known is not None:
            subdirs, files, linked = known
        else:
            entry = _listed(directory, now)
            if entry is None:
                continue
            subdirs, files, linked = entry.subdirs, entry.files, entry.links
        out.extend(files)
        if links is not None:
            links.extend(linked)
        if recursive:
            pending.extend(subdirs)
    return out


def _regular(entry: os.DirEntry) -> bool:
    """A regular file (or a link to one): a named pipe spelled `m.py` among the project's
    modules blocked the first project-wide search that opened it, and the whole run with it."""
    try:
        return entry.is_file()
    except OSError:
        return False


def listing_of(entries: Iterable[os.DirEntry]) -> Listing:
    """(subdirectories to walk into, `.py` files, links to directories) of one directory's `os.scandir` entries,
    as `disk_files` lists them: a walk that scans directories anyway (file discovery) hands
    these over instead of having every directory listed a second time."""
    subdirs: list[str] = []
    files: list[str] = []
    links: list[str] = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if not is_dir:
            if entry.name.endswith(".py") and _regular(entry):
                files.append(entry.path)
        elif walked(entry.name):
            try:
                linked = entry.is_symlink()
            except OSError:
                continue
            (links if linked else subdirs).append(entry.path)
    return tuple(subdirs), tuple(files), tuple(links)


def kept_listing(directory: str) -> Listing | None:
    """The listing this process keeps for `directory` while the directory still has the stamp
    it was kept for; None when none is kept, or its stamp was too recent to vouch for it
    (what a listing made outside a file discovery's walk rests on:
    `DerivedDependencies.observations`)."""
    known = _DIRS.get(directory)
    if known is None or known.stamp is None:
        return None
    try:
        st = os.stat(directory)
    except OSError:
        return None
    if (st.st_mtime_ns, st.st_ctime_ns, st.st_ino) != known.stamp:
        return None
    return known.subdirs, known.files, known.links


def _listed(directory: str, now: int) -> _Dir | None:
    try:
        st = os.stat(directory)
    except OSError:
        _DIRS.pop(directory, None)
        return None
    stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    known = _DIRS.get(directory)
    if known is not None and known.stamp == stamp:
        return known
    try:
        with os.scandir(directory) as entries:
            subdirs, files, links = listing_of(entries)
    except OSError:
        return None
    _MADE[0] += 1
    entry = _Dir(stamp if now - st.st_mtime_ns >= RACY_NS else None, subdirs, files, links)
    _DIRS[directory] = entry
    return entry


def listings_made() -> int:
    """How many directories this process has listed afresh so far: a caller that kept the
    listings between runs (`qlint.listing_store`) writes them again only after one was."""
    return _MADE[0]


def saved_listings(root: str) -> dict[str, list]:
    """The listings kept for the directories under `root` whose stamp vouches for them, as
    plain data relative to `root` (`scan_memo` keeps them between runs)."""
    root = os.path.abspath(root)
    base = root + os.sep
    out: dict[str, list] = {}
    for directory, entry in _DIRS.items():
        if entry.stamp is None or not (directory == root or directory.startswith(base)):
            continue
        rel = "" if directory == root else directory[len(base) :]
        out[rel] = [
            list(entry.stamp),
            [os.path.basename(d) for d in entry.subdirs],
            [os.path.basename(f) for f in entry.files],
            [os.path.basename(link) for link in entry.links],
        ]
    return out


def restore_listings(root: str, saved: dict) -> None:
    """The listings `saved_listings` wrote, for directories not listed in this process yet:
    each is used only while the directory keeps that stamp (`_listed` stats it)."""
    root = os.path.abspath(root)
    for rel, (stamp, subdirs, files, links) in saved.items():
        if type(rel) is not str or type(stamp) is not list or len(stamp) != 3 or any(type(n) is not int for n in stamp):
            raise TypeError("bad listing")
        if not all(type(n) is str for names in (subdirs, files, links) for n in names):
            raise TypeError("bad listing")
        directory = root + os.sep + rel if rel else root
        if directory not in _DIRS:
            inside = directory + os.sep  # joined by hand: thousands of names, each a plain one
            _DIRS[directory] = _Dir(
                tuple(stamp),
                tuple(inside + n for n in subdirs),
                tuple(inside + n for n in files),
                tuple(inside + n for n in links),
            )


def links_out(root: str, links: Iterable[str]) -> bool:
    """Whether one of `links` (symbolic links to directories that `disk_files` met under
    `root`) leads out of `root`: modules an import resolves there were never listed."""
    real_root = ""
    for link in links:
        real_root = real_root or os.path.realpath(root)
        real = os.path.realpath(link)
        if os.path.commonpath([real_root, real]) != real_root:
            return True
    return False


def listing_dependency(root: str, recursive: bool, needles: Iterable[str]) -> str:
    """The dependency standing for "no other file under `root` holds one of `needles`": a
    scan that skips the files without them depends on no new such file appearing."""
    return LISTING_PREFIX + dumps([os.path.abspath(root), bool(recursive), sorted(set(needles))])


def parse_listing_dependency(dep: str) -> tuple[str, bool, tuple[bytes, ...]] | None:
    """(root, recursive, needles as bytes) of a `listing_dependency`, None for anything else."""
    if not dep.startswith(LISTING_PREFIX):
        return None
    try:
        root, recursive, needles = loads(dep[len(LISTING_PREFIX) :])
    except ValueError:
        return None
    if type(root) is not str or type(recursive) is not bool or type(needles) is not list:
        return None
    if not all(type(n) is str for n in needles):
        return None
    return root, recursive, tuple(n.encode("utf-8", "surrogatepass") for n in needles)


def holds_any(path: str, needles: tuple[bytes, ...]) -> bool:
    """Whether the file's bytes hold one of `needles` (True when it cannot be read: it may)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return any(n in data for n in needles)

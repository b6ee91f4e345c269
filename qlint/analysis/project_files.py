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

import contextlib
import os
import time
from collections.abc import Iterable, Mapping

from qlint.analysis.racy_stats import RACY_NS
from qlint.analysis.recent_entries import RecentEntries
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
    files.update(_buffers_under(root, overlay, recursive))
    return sorted(files)


def _buffers_under(root: str, overlay: Iterable[str], recursive: bool) -> list[str]:
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


def project_keys(ctx, root: str, recursive: bool = True) -> dict[str, tuple | None]:
    """path -> content key of every module under `root` as the check of `ctx` sees them (its
    project index's buffers and stats), each recorded as a dependency of that check: once per
    check and root, shared by the scans that read the project (QL101, QL102, QL103, QL201)."""
    root = os.path.abspath(root)
    memo = ("project_files.keys", root, recursive)
    known = ctx.cache.get(memo)
    if known is not None:
        return known
    project = ctx.project
    own = os.path.abspath(ctx.path)
    run = _held_still(project)
    kept = _RUN_KEYS.get((root, recursive)) if run is not None else None
    if kept is not None and kept[0] is run and kept[2] is not None:
        project.record_reads(ctx.path, [read for read in kept[2] if read[0] != own])
        ctx.cache[memo] = kept[1]
        return kept[1]
    keys = unrecorded_keys(ctx, root, recursive)
    last = _LAST_READS.get((root, recursive, own))
    if last is not None and last[0] == keys:
        reads = last[1]  # the same contents: the same digests (an editor's next check)
    elif not project.wants_dependencies:
        reads = []  # the run keeps no dependencies (`--no-cache`): nothing to hash them for
    else:
        # Whatever a module holds may decide the answer: a dependency of this check.
        digest = project.digest
        reads = [(path, digest(path, key)) for path, key in keys.items() if path != own]
        if project.track_dependents:  # a command-line run checks each file once: nothing to keep
            _LAST_READS[root, recursive, own] = (keys, reads)
    project.record_reads(ctx.path, reads)
    if run is not None:
        if own in keys and project.wants_dependencies:  # the checked file's digest too, for the checks of the others
            reads = [*reads, (own, project.digest(own, keys[own]))]
        _keep_run_keys(run, root, recursive, keys, reads)
    ctx.cache[memo] = keys
    return keys


def _keep_run_keys(run: dict, root: str, recursive: bool, keys: dict, reads: list | None) -> None:
    """`reads` None: the keys only, taken by a search that recorded none (`unrecorded_keys`)."""
    if len(_RUN_KEYS) >= _MAX_RUN_KEYS or any(kept[0] is not run for kept in _RUN_KEYS.values()):
        _RUN_KEYS.clear()  # another run's, or too many roots
    _RUN_KEYS[root, recursive] = (run, keys, reads)


def unrecorded_keys(ctx, root: str, recursive: bool = True) -> dict[str, tuple | None]:
    """`project_keys` recorded as no dependency of the check: for a search whose answer one
    module may decide (a module subclassing a class, one naming a method), whose caller
    records that module alone when it does, and `project_keys` when it does not (every
    module may then change the answer). A warm `qlint check FILE` validates what its result
    recorded: ExecuTorch's qualcomm/tests/utils.py stat'ed its 3,784 modules for an answer
    that test_qnn_delegate.py alone decides."""
    root = os.path.abspath(root)
    known = ctx.cache.get(("project_files.keys", root, recursive))
    if known is not None:
        return known
    memo = ("project_files.unrecorded", root, recursive)
    known = ctx.cache.get(memo)
    if known is None:
        run = _held_still(ctx.project)
        kept = _RUN_KEYS.get((root, recursive)) if run is not None else None
        if kept is not None and kept[0] is run:
            known = kept[1]
        else:
            known = _listed_keys(ctx.project, root, recursive)
            if run is not None:  # listed and stat'ed once per run, as `project_keys` is
                _keep_run_keys(run, root, recursive, known, None)
        ctx.cache[memo] = known
    return known


def _listed_keys(project, root: str, recursive: bool) -> dict[str, tuple | None]:
    consult(project, root)
    keys = _watched_keys(project, root, recursive)
    if keys is None:
        content_key = project.content_key
        # Listed: absolute and normalised.
        keys = {path: content_key(path, True) for path in python_files(root, project.overlay, recursive)}
    return keys


def consult(project, root: str) -> None:
    """What earlier runs kept about the modules under `root` (absolute), and its listings, in
    use for the scans of this process (`scan_memo.use_root`), without listing the project."""
    # Imported by the first scan: a run the results cache answers reads no module.
    from qlint.analysis import scan_memo

    listed = scan_memo.use_root(root, project.store, lambda: saved_listings(root))
    if listed is not None:
        with contextlib.suppress(TypeError, ValueError, AttributeError):  # a damaged file: ignored
            restore_listings(root, listed)


def _watched_keys(project, root: str, recursive: bool) -> dict[str, tuple | None] | None:
    """`project_keys` from the listing and keys an editor's file watcher vouches for
    (`ProjectIndex.watched`; None without one, or where it does not see): stat'ing torch's
    2,300 modules and 600 directories at each keystroke is what its events make needless."""
    watched = getattr(project, "watched", None)
    if watched is None:
        return None
    disk = watched.keys_under(root, recursive)
    if disk is None:
        links: list[str] = []
        listed = sorted(disk_files(root, recursive, links=links))
        if not watched.keep_listing(root, recursive, (listed, frozenset(listed)), links):
            return None
        disk = watched.keys_under(root, recursive)
    buffers = _buffers_under(root, project.overlay, recursive)
    if not buffers:
        return disk
    keys = dict(disk)
    for path in buffers:
        keys[path] = ("overlay", hash(project.overlay[path]))
    if len(keys) != len(disk):  # a buffer with no file on disk yet: in the listing's order
        keys = {path: keys[path] for path in sorted(keys)}
    return keys


# (root, recursive) -> (the run's content keys, the keys `project_keys` took, the digests of
# all of them, None until a check records them): while a check run holds files still
# (`_held_still`), every check that scans the project sees the same listing and contents, and
# listing and stat'ing ExecuTorch's 3,800 modules again for each of the ~50 checks that search
# it cost ~1 s of a cold run.
_RUN_KEYS: dict[tuple[str, bool], tuple[dict, dict, list | None]] = {}
_MAX_RUN_KEYS = 8


def _held_still(project) -> dict | None:
    """The content keys of the run in progress when no file changes during it (`qlint check`
    over a tree: `ProjectIndex.contents_fixed` and `fixed_layout`), None otherwise (the
    language server, `qlint fix`, an unsaved buffer)."""
    cls = type(project)
    if getattr(cls, "fixed_content", False) and getattr(cls, "fixed_layout", False) and not project.overlay:
        return cls.run_keys
    return None


# (root, recursive, checked file) -> (the content keys `project_keys` took, the digests it
# recorded): the last of each for the few files an editor checks again and again.
_LAST_READS: RecentEntries[tuple[str, bool, str], tuple[dict, list]] = RecentEntries(8)


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

"""A directory tree's Python files as stats vouch for them: every directory's stamp and every
file's (size, mtime_ns), each in one flat list that is compared whole.

The wrapper names' record (`wrapper_record`) holds while no file under its root that could
change them moved and no file came or went. Checked the long way (read the kept listing of
each of ExecuTorch's 640 directories, list the tree from it, compare 3,786 recorded stats one
by one), that cost `qlint check FILE` about a third of its in-process time. When every
directory has the stamp it had when the record was last found to hold, no entry came, went
or was renamed anywhere below the root (that moves its directory's mtime and ctime; a
directory put back has a new inode), so the files are the recorded ones; when each of those
has its recorded stat too, none moved, and the record holds without listing a directory or
reading a file. Anything else takes the long way, which may still find that it holds (and
takes a new snapshot).

Only a tree the listing saw without symbolic links to directories is taken (a link's target
can change while the directory holding it keeps its stamp), with every file stat'ed and old
enough to vouch for its content (`RACY_NS`), and every directory unchanged since before this
process listed anything (`project_files.STARTED`): a listing made before a change that a later
stamp shows would otherwise be vouched for.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from itertools import chain
from operator import attrgetter

from qlint.analysis import project_files
from qlint.analysis.racy_stats import RACY_NS

# paths -> their (size, mtime_ns) flattened into one list, None when one cannot be stat'ed
StatsOf = Callable[[list[str]], "list[int] | None"]


class Snapshot:
    __slots__ = ("dir_stamps", "dirs", "file_stats", "files")

    def __init__(self, dirs: list[str], dir_stamps: list[int], files: list[str], file_stats: list[int]):
        self.dirs = dirs
        self.dir_stamps = dir_stamps  # (mtime_ns, ctime_ns, inode) per directory, flattened
        self.files = files
        self.file_stats = file_stats  # (size, mtime_ns) per file, flattened

    def holds(self, stats_of: StatsOf | None = None) -> bool:
        """Whether every directory and file has the recorded stat now (`stats_of`: how the
        files are stat'ed, as the caller keeps the run's view of them)."""
        if dir_stamps(self.dirs) != self.dir_stamps:
            return False
        return (stats_of or file_stats)(self.files) == self.file_stats

    def to_data(self) -> dict:
        return {"dirs": self.dirs, "dir_stamps": self.dir_stamps, "files": self.files, "file_stats": self.file_stats}


_STR, _INT = frozenset({str}), frozenset({int})


def from_data(payload) -> Snapshot | None:
    """What `to_data` wrote, or None (absent, or not of its shape)."""
    if not isinstance(payload, dict):
        return None
    dirs, stamps = payload.get("dirs"), payload.get("dir_stamps")
    files, stats = payload.get("files"), payload.get("file_stats")
    if not (type(dirs) is list and type(stamps) is list and type(files) is list and type(stats) is list):
        return None
    if len(stamps) != 3 * len(dirs) or len(stats) != 2 * len(files):
        return None
    # The types of its items as a set, made in C (`type(p) is str` per item, in a generator,
    # was 6 M instructions of a cached `qlint check FILE` on ExecuTorch: 4,400 paths, 10,000 stats).
    if not set(map(type, chain(dirs, files))) <= _STR or not set(map(type, chain(stamps, stats))) <= _INT:
        return None
    return Snapshot(dirs, stamps, files, stats)


def take(dirs: Iterable[str], stats: Mapping[str, tuple[int, int] | None], now: int) -> Snapshot | None:
    """The snapshot of a tree listed as `dirs` (every directory the listing read) holding the
    files of `stats` (path -> the stat its content was read or checked at), or None where it
    could not vouch: a file without a trusted stat, a directory changed since this process
    began listing (or too recently to tell)."""
    files = list(stats)
    flat = []
    for path in files:
        stat = stats[path]
        if stat is None or stat[0] < 0:  # unreadable, or untrusted (`wrapper_record.trusted_stat`)
            return None
        flat += stat
    dirs = sorted(dirs)
    stamps = dir_stamps(dirs)
    if stamps is None:
        return None
    before = min(project_files.STARTED, now) - RACY_NS
    if any(t >= before for i in range(0, len(stamps), 3) for t in stamps[i : i + 2]):
        return None
    return Snapshot(dirs, stamps, files, flat)


_DIR_STAMP = attrgetter("st_mtime_ns", "st_ctime_ns", "st_ino")
_FILE_STAT = attrgetter("st_size", "st_mtime_ns")


def dir_stamps(dirs: list[str]) -> list[int] | None:
    return _flat_stats(dirs, _DIR_STAMP)


def file_stats(files: list[str]) -> list[int] | None:
    return _flat_stats(files, _FILE_STAT)


def _flat_stats(paths: list[str], fields: attrgetter) -> list[int] | None:
    """`fields` of each path's stat, in one flat list (None: one cannot be stat'ed)."""
    out: list[int] = []
    add = out.extend
    stat = os.stat
    try:
        for path in paths:
            add(fields(stat(path)))
    except OSError:
        return None
    return out

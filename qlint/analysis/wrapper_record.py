"""The project's insertion-wrapper names as kept on disk, and whether they still hold.

`wrapper_index` works out once per run the names under which a project's insertion wrappers
can be imported; a file that imports none of them is answered "no wrapper" from that set,
and its result depends on it (`dependency(root)`, whose digest is the set's). The results
cache checks that dependency here, without the analysis: the set is kept with the stat of
every file listed under the root when it was read, and holds while no file that could change
it moved. Only a file that inserts (`call_function`/`create_node`) or names one of the
wrappers (a definition, a call, an `X as Y` re-export) can: a function becomes a wrapper only
in a module that inserts or by calling one, and a new name for one is written next to it.
Every other edit keeps the set (a run after editing a test file does not work it out again).
The names of the helpers that forward to QL101's default sinks (`sink_index`) are kept in the
same record, under the same dependency: a file holding one of those sinks or names can change
them, and nothing else can.

A root whose index would hold more than `wrapper_index._MAX_NAMES` names gets none, and the
making of it is given up once the names found pass that limit (a torch-sized checkout:
~4.8 s of CPU, then every name looked up, as without an index). Its record is then a marker
of "no index here" (`too_many`: the modules that insert, or name one of QL101's sinks, when
it was made), kept and checked as a record of names is, so that a run taking it gives the
making up before it starts. Every name starts from one of those modules (a wrapper inserts,
or calls a wrapper), so the marker is made again when one of them moved or went, or when a
file that moved or came holds a sink now (a module that came to insert); else it holds. What
it does not follow is an edit of a module on a chain between them (one calling a wrapper, or
re-exporting one), which can take away the names reached through it alone: read as the
index reads them, such modules are a large part of a large tree, and following them made
the marker again after nearly any edit (the copy of torch: an edit of 28 modules of
`nn/modules`, none holding a sink). The marker stands for a count past the limit (torch's
copy: 8,600 and 8,300 names against 3,000), and the index decides no answer, only which
lookups are spared (`wrapper_index`): a marker kept past its time costs lookups, never a
finding.

Standard library only (plus the listing): a warm run imports none of the analysis. Kept on
disk by `qlint.wrapper_store`, beside the results cache.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Mapping

from qlint.analysis import tree_snapshot
from qlint.analysis.identifier_text import normalised_bytes
from qlint.analysis.project_files import Listing, disk_files, links_out
from qlint.analysis.racy_stats import RACY_NS
from qlint.analysis.tree_snapshot import Snapshot, StatsOf
from qlint.plain_json import dumps, loads
from qlint.short_digests import sha256_hex

PREFIX = "qlint-wrappers:"
_UNTRUSTED = (-1, -1)
SINK_NEEDLES = (b"call_function", b"create_node")
# QL101's default sinks as their calls spell them (`sinks.sink_needles`, a test keeps them
# equal): the names of the helpers forwarding to them are kept beside the wrappers'
# (`sink_index`). A file holds a sink only where one of these is a whole word.
QL101_NEEDLES = (
    b"add_dont_constant_fold",
    b"checkGraphModuleNodes",
    b"expected_node",
    b"expected_node_occurrence",
    b"expected_node_list",
    b"find_nodes",
)

Stat = Callable[[str], "tuple[int, int] | None"]


def dependency(root: str) -> str:
    """The dependency standing for "the wrapper names of the project at `root`"."""
    return PREFIX + dumps(os.path.abspath(root))


def parse_dependency(dep: str) -> str | None:
    if not dep.startswith(PREFIX):
        return None
    try:
        root = loads(dep[len(PREFIX) :])
    except ValueError:
        return None
    return root if type(root) is str else None


def digest_of(
    functions: Iterable[str],
    classes: Iterable[str],
    sink_functions: Iterable[str] = (),
    sink_classes: Iterable[str] = (),
    sink_modules: Iterable[str] = (),
) -> str:
    names = [sorted(functions), sorted(classes), sorted(sink_functions), sorted(sink_classes), sorted(sink_modules)]
    data = dumps(names).encode("utf-8", "surrogatepass")
    return sha256_hex(data)


def trusted_stat(st: os.stat_result, now: int | None = None) -> tuple[int, int]:
    now = time.time_ns() if now is None else now
    return _UNTRUSTED if now - st.st_mtime_ns < RACY_NS else (st.st_size, st.st_mtime_ns)


class Record:
    def __init__(
        self,
        root: str,
        functions,
        classes,
        stats: dict[str, tuple[int, int] | None] | None,
        sink_functions=(),
        sink_classes=(),
        snapshot: Snapshot | None = None,
        digest: str | None = None,
        too_many: Iterable[str] | None = None,
        sink_modules=(),
    ):
        """`stats`: path -> the stat each file was read at; None with a `snapshot`, whose
        files and stats they are (read back from the store: the table is made only when
        the long check needs it). `digest`: `digest_of` the names, as the store kept it.
        `too_many`: the record is the marker of a root with no index (its names passed the
        limit), and these are the modules that inserted or named a sink then."""
        self.root = root
        self.too_many = frozenset(too_many) if too_many is not None else None
        self.functions = frozenset(functions)
        self.classes = frozenset(classes)
        # QL101's: the functions and classes that may forward a parameter to its default sinks.
        self.sink_functions = frozenset(sink_functions)
        self.sink_classes = frozenset(sink_classes)
        # And the stems of the modules defining them (`sink_index.helper_module_stems`): a
        # module holding no trigger text that imports one may call a helper as `mod.helper`.
        self.sink_modules = frozenset(sink_modules)
        self._stats = stats
        # The tree's stats when the names were last found to hold (`tree_snapshot`): while
        # each is the same, they hold without a listing or a look at any file.
        self.snapshot = snapshot
        self._unchanged: bool | None = None  # what `unchanged` found, once per record read
        # Kept with the names (`to_data`): worked out again at every read, it cost a warm
        # `qlint check FILE` on ExecuTorch ~2.4 M instructions (800 names sorted and hashed).
        if digest is None:
            digest = digest_of(self.functions, self.classes, self.sink_functions, self.sink_classes, self.sink_modules)
        self.digest = digest
        self.dirty = False  # stats taken in since it was read: worth writing back

    @property
    def indexed(self) -> bool:
        """Whether the record holds the root's names (not the marker of a root with none)."""
        return self.too_many is None

    @property
    def stats(self) -> dict[str, tuple[int, int] | None]:
        if self._stats is None:
            files, values = (self.snapshot.files, self.snapshot.file_stats) if self.snapshot is not None else ([], [])
            self._stats = dict(zip(files, zip(values[0::2], values[1::2], strict=True), strict=True))
        return self._stats

    def to_data(self) -> dict:
        """Plain data for the store (`qlint.wrapper_store`). A snapshot is always taken of
        the stats as they are: they are kept once, as it keeps them (a flat list loads
        several times faster than a table of 3,800 pairs)."""
        names = {
            "root": self.root,
            "functions": sorted(self.functions),
            "classes": sorted(self.classes),
            "sink_functions": sorted(self.sink_functions),
            "sink_classes": sorted(self.sink_classes),
            "sink_modules": sorted(self.sink_modules),
            "digest": self.digest,
            "too_many": sorted(self.too_many) if self.too_many is not None else None,
        }
        if self.snapshot is not None:
            return {**names, "stats": None, "snapshot": self.snapshot.to_data()}
        stats = {p: (list(s) if s is not None else None) for p, s in self.stats.items()}
        return {**names, "stats": stats, "snapshot": None}

    def still_valid(
        self, stat: Stat, listed: Mapping[str, Listing] | None = None, stats_of: StatsOf | None = None
    ) -> bool:
        """Whether the names hold for the files under the root as they are now: every stat
        the snapshot kept is the same (`stats_of` stats its files as the caller keeps them),
        or, the long way, the root listed again (or from the run's `listed` directories)
        and each file stat'ed through `stat`. What moved without touching them is taken in,
        and a new snapshot taken (`dirty`: worth writing back). A symbolic link out of the
        root, made since, ends them: the index is made only where no module lies beyond the
        listing."""
        if self.unchanged(stats_of):
            return True
        links: list[str] = []
        dirs: list[str] = []
        started = time.time_ns()
        files = disk_files(self.root, True, listed, links, dirs)
        if links_out(self.root, links):
            return False
        stats = self.stats
        moved = [p for p in files if _moved(stats.get(p), stat(p))]
        gone = stats.keys() - set(files)
        if moved or gone:
            if self.too_many is not None:
                if not self.too_many.isdisjoint([*moved, *gone]) or any(map(_holds_sink, moved)):
                    return False  # a module the names start from moved, went or came
            else:
                relevant = _relevance(self.functions | self.classes | self.sink_functions | self.sink_classes)
                for path in [*moved, *gone]:
                    if _holds(path, relevant):
                        return False
            now = time.time_ns()
            for path in gone:
                del stats[path]
            for path in moved:
                try:
                    stats[path] = trusted_stat(os.stat(path), now)
                except OSError:
                    stats[path] = None
            self.dirty = True
        # Taken again (or dropped, where the tree cannot vouch now): the one read no longer holds.
        had_snapshot = self.snapshot is not None
        self.snapshot = take_snapshot(dirs, stats, links, started)
        self.dirty = self.dirty or had_snapshot or self.snapshot is not None
        self._unchanged = None
        return True

    def unchanged(self, stats_of: StatsOf | None = None) -> bool:
        """Whether every stat the snapshot kept is the same now (the quick way of
        `still_valid`, which needs neither the listing nor the table of stats). Asked once:
        a caller that found it false goes on to `still_valid`, which need not stat again."""
        if self._unchanged is None:
            self._unchanged = self.snapshot is not None and self.snapshot.holds(stats_of)
        return self._unchanged


def take_snapshot(dirs: list[str], stats, links: list[str], now: int) -> Snapshot | None:
    """The snapshot of the tree listed as `dirs`, holding `stats` (None with `links`: their
    targets can change while the directories holding them keep their stamps)."""
    return None if links else tree_snapshot.take(dirs, stats, now)


def from_data(payload, root: str) -> Record | None:
    """The record `to_data` wrote for `root` (None: another root, or not what it writes)."""
    try:
        if payload["root"] != root:
            return None
        snapshot = tree_snapshot.from_data(payload.get("snapshot"))
        stats = payload["stats"]
        if stats is None:
            if snapshot is None:
                return None
        else:
            stats = {p: (tuple(s) if s is not None else None) for p, s in stats.items()}
            if not all(type(p) is str and (s is None or len(s) == 2) for p, s in stats.items()):
                return None
        functions, classes = payload["functions"], payload["classes"]
        sink_functions, sink_classes = payload["sink_functions"], payload["sink_classes"]
        sink_modules = payload["sink_modules"]
        if not all(type(n) is str for n in [*functions, *classes, *sink_functions, *sink_classes, *sink_modules]):
            return None
        digest = payload["digest"]
        if type(digest) is not str:
            return None
        too_many = payload["too_many"]
        if too_many is not None and not all(type(p) is str for p in too_many):
            return None
        return Record(
            root, functions, classes, stats, sink_functions, sink_classes, snapshot, digest, too_many, sink_modules
        )
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _moved(recorded: tuple[int, int] | None, now: tuple[int, int] | None) -> bool:
    return recorded is None or recorded == _UNTRUSTED or recorded != now


def _relevance(names: Iterable[str]) -> re.Pattern[bytes]:
    words = sorted({n.encode("utf-8", "surrogatepass") for n in names} | set(SINK_NEEDLES) | set(QL101_NEEDLES))
    return re.compile(rb"(?<![\w])(?:" + b"|".join(re.escape(w) for w in words) + rb")(?![\w])")


def _holds_sink(path: str) -> bool:
    """Whether the file's bytes hold a sink's name (QL102's or QL101's: as the index's reading
    tests them first, a plain substring; True when unreadable): a module that may insert or
    name a sink, which the marker of a root with no index must follow."""
    try:
        with open(path, "rb") as fh:
            data = normalised_bytes(fh.read())  # as the index reads it (`wrapper_reads`)
    except OSError:
        return True
    return any(needle in data for needle in (*SINK_NEEDLES, *QL101_NEEDLES))


def _holds(path: str, relevant: re.Pattern[bytes]) -> bool:
    """Whether the file holds a sink (QL102's or QL101's) or one of the names (True when unreadable: it may; a
    file gone held nothing that matters any more only if it never did, which is not known)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return True
    return relevant.search(data) is not None or not data.isascii()

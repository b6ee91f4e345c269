"""Where the results cache keeps its entries: in shards, each loaded the first time one of
its paths is asked about.

Why shards, and not one file per source file nor one for all: a warm run over the installed
torch tree (~2,300 files) must cost about one `stat` per file, so it reads a few dozen files,
not thousands; and `qlint check FILE` (pre-commit, an editor's save) must not load and
verify the whole repository's index (1.8 MB and 30 ms on ExecuTorch) to answer for one file.
A path's shard is chosen by its directory, so the modules a result depends on, usually its
neighbours, tend to come with it; a shard is loaded the first time a path of it is asked
about, and only changed shards are written.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator, MutableMapping
from typing import Any, Protocol

from qlint import listed_dependencies

_SHARDS = 64


class _ShardSource(Protocol):
    def load_shard(self, shard: int) -> dict[str, tuple]: ...


def shard_of(path: str) -> int:
    """The shard of `path`: by its directory, so neighbours (what a result usually depends
    on) share one."""
    return zlib.crc32(path[: path.rfind(os.sep)].encode("utf-8", "surrogatepass")) % _SHARDS


class ShardedEntries(MutableMapping):
    """Path -> entry over the shards, each loaded the first time one of its paths is asked
    about; remembers which shards changed. A key that is not a path of its shard (never
    written by this version) is never found by a lookup nor listed."""

    def __init__(self, cache: _ShardSource):
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


def valid_entry(entry: Any) -> bool:
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


def markers_first(deps: Any) -> bool:
    """Whether a dependency table starts with a listing's marker (markers come first), so
    its entry names a side file."""
    if type(deps) is not dict or not deps:
        return False
    first = next(iter(deps))
    return type(first) is str and first.startswith(listed_dependencies.LISTED_PREFIX)

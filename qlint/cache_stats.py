"""What the results cache saw of the files this run (`RunStats`, the `stats` a `cache.Cache`
holds and hands to its `DerivedDependencies`): each path stat'ed once, whatever asks (a
module checked here is also a dependency of others), and the paths the run's file discovery
saw absent, vouched for by its listings rather than stat'ed one by one."""

from __future__ import annotations

import os
from itertools import chain
from operator import attrgetter

UNSEEN = object()
_FEW = 64  # fewer recorded stats than this are compared one by one
_SIZE_MTIME = attrgetter("st_size", "st_mtime_ns")


class RunStats:
    def __init__(self) -> None:
        self.seen: dict[str, tuple[int, int] | None] = {}  # path -> its stat this run, None if absent
        self.unlooked: dict[str, tuple[int, int] | None] = {}  # of those, paths not looked up yet
        # Of those, absent ones the walk's listings vouch for (`not_walked`): not stat'ed.
        self.walked_absent: set[str] = set()
        # (path, "") of every dependency found absent this run, as results record it: a result's
        # absent dependencies already looked at are passed over in one set difference, not one
        # by one (a module lookup's tried paths, `import_paths.tried_before`, are most of them).
        self.absent: set[tuple[str, str]] = set()
        self._unwalked_dirs: dict[str, bool] = {}  # directory not walked -> `not_walked` of it
        # Directories the run's file discovery listed (`Discovery.listings`, `.names`): listed once.
        self.walked: dict[str, tuple] = {}
        self.walked_names: dict[str, frozenset[str]] = {}

    def unvouched(self, deps: dict, dep_stats: dict):
        """The dependencies left to look at one by one: all of them, or for a result of a
        project scan (thousands, each with the stat its digest was recorded with) only those
        whose recorded stat is not the one they have now, found by one comparison of the two
        tables (a warm run's inner loop, four times 3,800 on ExecuTorch)."""
        absent = self.absent
        if len(dep_stats) < _FEW:
            return deps.items() - absent if absent else deps.items()
        stats = self.seen
        for dep in dep_stats.keys() - stats.keys():
            if type(dep) is not str:
                return deps.items()  # not a path: the loop rejects the entry
            self.stat_now(dep)
        if not dep_stats.items() <= stats.items():
            return deps.items() - absent  # one has changed: look at each (its digest may still match)
        return [(dep, digest) for dep, digest in deps.items() - absent if dep not in dep_stats]

    def not_walked(self, path: str) -> bool:
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
            verdict = self._unwalked_dirs[parent] = self.not_walked(parent)
        return verdict

    def stat_now(self, path: str) -> tuple[int, int] | None:
        """(size, mtime_ns) of `path` now, None when it cannot be stat'ed (absent: its content
        hash is "", as `current_hash` would find). Once per run: the same modules are
        dependencies of many results, and so are the same absent ones (a module looked for
        beside the file that imports it)."""
        now = self.seen.get(path, UNSEEN)
        if now is UNSEEN:
            try:
                st = os.stat(path)
                now = self.seen[path] = self.unlooked[path] = (st.st_size, st.st_mtime_ns)
            except OSError:
                now = self.seen[path] = self.unlooked[path] = None
        return now

    def stats_of(self, paths: list[str]) -> list[int] | None:
        """`stat_now` of each of `paths` (the wrapper record's 3,800 on ExecuTorch), in one
        flat list as `tree_snapshot` compares them; None at the first that cannot be stat'ed."""
        stats, unlooked = self.seen, self.unlooked
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
            now = stats.get(path, UNSEEN)
            if now is UNSEEN:
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

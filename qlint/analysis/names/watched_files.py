"""What an editor's file watcher vouches for between checks: the content keys of the files
under its workspace folders, their listings, and where modules were found there.

Without it, every check of a buffer that reads the project (QL102's scan of the packets a
project consumes, QL201's caller searches, the helpers QL101/QL102 keep) stats each file it
depends on to know whether what it kept still holds: 2,300 files and 600 directories for
torch's `ao/quantization/observer.py`, at every keystroke. A client that watches the
workspace (`workspace/didChangeWatchedFiles`, registered by the language server) reports
every file created, changed or deleted there; until it reports one, a key taken once holds.

Only what lies under a watched folder is kept, spelled as the watcher spells it and with no
symbolic link on the way out of the folder (a watcher does not report changes behind a
link). Everything else is stat'ed at every ask, as without a watcher. The index calls
`forget` with the watcher's events on the thread that checks, so no check is half-way
through a key when it goes.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

CREATED, CHANGED, DELETED = 1, 2, 3  # the LSP's `FileChangeType`

# Never a module, never listed, never probed for one: events there (git's own files, the
# bytecode a test run writes) leave the listings and module lookups as they are.
_INERT = (os.sep + ".git" + os.sep, os.sep + "__pycache__" + os.sep)

_UNKNOWN = object()


class WatchedFiles:
    """Kept content keys, listings and module lookups under the watched `roots`."""

    def __init__(self, roots: Iterable[str]):
        self.roots = tuple(sorted({os.path.abspath(r) for r in roots}))
        self._real_roots = tuple(sorted({os.path.realpath(r) for r in self.roots}))
        self.keys: dict[str, tuple | None] = {}  # path -> (mtime_ns, size[, reported]), None: absent
        # (root, recursive) -> the `.py` files on disk there, sorted and as a set
        self.listings: dict[tuple[str, bool], tuple[list[str], frozenset[str]]] = {}
        # (root, recursive) -> path -> key of those files, in the listing's order
        self.listing_keys: dict[tuple[str, bool], dict[str, tuple | None]] = {}
        self.found: dict[tuple[str, str], str | None] = {}  # (module, requester's directory) -> its file
        self._inside: dict[str, bool] = {}  # directory -> whether the watcher sees its files
        # path -> how many events named it: part of its key, so that a rewrite its stat cannot
        # tell (same size, same mtime: one clock tick, or an mtime restored) is a new content
        self.reported: dict[str, int] = {}
        self.events = 0  # events taken in: what a test or a bug report asks

    def covers(self, path: str) -> bool:
        """Whether the watcher reports changes of `path` (absolute, normalised)."""
        directory = os.path.dirname(path)
        known = self._inside.get(directory)
        if known is None:
            known = self._under(directory, self.roots) and self._under(os.path.realpath(directory), self._real_roots)
            self._inside[directory] = known
        return known

    @staticmethod
    def _under(path: str, roots: tuple[str, ...]) -> bool:
        return any(path == r or path.startswith(r if r.endswith(os.sep) else r + os.sep) for r in roots)

    def key(self, path: str) -> tuple | None:
        """The file's (mtime_ns, size) (None: absent), stat'ed once while no event names it;
        with how many events reported it changed, once one has."""
        known = self.keys.get(path, _UNKNOWN)
        if known is not _UNKNOWN:
            return known
        try:
            st = os.lstat(path)
        except OSError:
            key = None
        else:
            if stat.S_ISLNK(st.st_mode):  # its target may change unreported: asked every time
                try:
                    st = os.stat(path)
                except OSError:
                    return None
                return (st.st_mtime_ns, st.st_size)
            reported = self.reported.get(path)
            key = (st.st_mtime_ns, st.st_size, reported) if reported else (st.st_mtime_ns, st.st_size)
        if self.covers(path):
            self.keys[path] = key
        return key

    def listing(self, root: str, recursive: bool) -> tuple[list[str], frozenset[str]] | None:
        """The kept `.py` files on disk under `root` (None: not kept, list them)."""
        return self.listings.get((root, recursive))

    def keep_listing(
        self, root: str, recursive: bool, files: tuple[list[str], frozenset[str]], links: list[str]
    ) -> bool:
        """Keep a listing made under a watched folder (False: not kept). The links to
        directories it met are not walked (`disk_files`): what lies behind them is no part of
        it, and a link made or removed is an event like a file's."""
        if not self.covers(os.path.join(root, "_")):
            return False
        self.listings[root, recursive] = files
        return True

    def keys_under(self, root: str, recursive: bool) -> dict[str, tuple | None] | None:
        """path -> key of every file of the kept listing of `root` (None: no listing kept),
        kept itself while no event names a file there: a project scan asks at every check."""
        known = self.listing_keys.get((root, recursive))
        if known is not None:
            return known
        kept = self.listings.get((root, recursive))
        if kept is None:
            return None
        key = self.key
        known = self.listing_keys[root, recursive] = {path: key(path) for path in kept[0]}
        return known

    def covers_all(self, paths: Iterable[str]) -> bool:
        return all(self.covers(p) for p in paths)

    def forget(self, changes: Iterable[tuple[str, int]]) -> set[str]:
        """Take in the watcher's events ((path, `FileChangeType`)): their keys go, and for a
        file created or deleted (or a directory: one event for all it held) the listings
        and module lookups that may have seen it. Returns the paths whose keys went."""
        changes = [(os.path.abspath(p), kind) for p, kind in changes]
        prefixes: list[str] = []
        layout = False
        gone: set[str] = set()
        for path, kind in changes:
            self.events += 1
            # Any kind: a file deleted and put back with its old mtime and size (`rsync -a`,
            # `git stash pop` of an older copy) is no more the content kept for that stat.
            self.reported[path] = self.reported.get(path, 0) + 1
            if path in self.keys:
                gone.add(path)
                del self.keys[path]
            if kind == CHANGED and path.endswith((".py", ".pyi")):
                continue  # a file's content: its key alone (a directory is never so named)
            prefixes.append(path + os.sep)
            if not any(part in path + os.sep for part in _INERT):
                layout = True
        if self.listing_keys and changes:
            named = tuple(p for p, _ in changes)
            for root, recursive in list(self.listing_keys):
                base = root + os.sep
                if any(p.startswith(base) or base.startswith(p + os.sep) for p in named):
                    del self.listing_keys[root, recursive]
        if prefixes:
            inside = tuple(prefixes)
            for path in [p for p in self.keys if p.startswith(inside)]:
                gone.add(path)
                del self.keys[path]
            for directory in [d for d in self._inside if (d + os.sep).startswith(inside)]:
                del self._inside[directory]
        if layout:
            changed = tuple(p for p in prefixes if not any(part in p for part in _INERT))
            for root, recursive in list(self.listings):
                base = root + os.sep
                if any(p.startswith(base) or base.startswith(p) for p in changed):
                    del self.listings[root, recursive]
                    self.listing_keys.pop((root, recursive), None)
            self.found.clear()
        return gone

"""Content digests of the files a cache key is made of (`cache_keys`), kept beside the cache
by each file's stat.

The results and the summaries are kept under a key that must move when qlint's own code or
the project's packaging files change, and only then. Their stats (size, mtime) move with no
change at all: a fresh `pip install` of the same qlint in each CI job, a fresh clone of the
project beside a restored `.qlint_cache`, a `git checkout` that rewrites a file and then puts
it back, a `touch`. Keyed on stats, each of those cost a cold run (seconds where a warm one
takes a tenth), and nothing said why; keyed on contents, none does.

Hashing qlint's ~390 files (3.6 MB) at every run would cost more than a warm `qlint check
FILE` can spare, so the digest of what was read is kept in `<cache>/<version>/key.digests`
with the stats it was read at: a run whose stats are the kept ones reads that one small
file; one whose stats moved reads the files once and keeps the new stats. A stat whose
mtime is within `RACY_NS` of now is not kept: the file may change again within the tick.
"""

from __future__ import annotations

import marshal
import os
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from qlint import __version__, checksummed_files
from qlint.analysis.racy_stats import RACY_NS
from qlint.short_digests import file_digest

_HEADER = b"qlint-key-digests-1\n"
_NAME = "key.digests"
_MAX_KEPT = 64  # digests kept: qlint's package and a few projects' packaging files
UNREADABLE = "unreadable"  # a file that went between its stat and its read: never kept

_OPEN: dict[str, KeyDigests] = {}  # memo file -> as this process holds it


class KeyDigests:
    """The kept digests of one cache directory (`file`; None: none kept, each one read)."""

    def __init__(self, file: Path | None):
        self.file = file
        kept = checksummed_files.read_marshalled(file, _HEADER) if file is not None else None
        self.kept: dict[str, tuple] = kept if isinstance(kept, dict) else {}
        self.fresh: dict[str, tuple] = {}  # worked out by this process, to keep at `save`

    def digest(self, name: str, stamp: object, newest_ns: int, read: Callable[[], str]) -> str:
        """The digest of `name` (a path, or the package), `read()` unless the one kept has the
        same `stamp`; `newest_ns`: the newest mtime among its files."""
        entry = self.kept.get(name)
        if type(entry) is tuple and len(entry) == 2 and entry[0] == stamp and type(entry[1]) is str:
            return entry[1]
        try:
            found = read()
        except OSError:
            return UNREADABLE
        if time.time_ns() - newest_ns >= RACY_NS:
            self.kept[name] = self.fresh[name] = (stamp, found)
        return found

    def file_digest(self, path: str, st: os.stat_result) -> str:
        """The digest of the content of the file at `path`, stat'ed as `st`."""
        return self.digest(path, (st.st_size, st.st_mtime_ns), st.st_mtime_ns, lambda: file_digest(path))

    def save(self) -> None:
        """Keep what this process worked out, with what other runs kept since it read the file
        (the newest last: the oldest go past `_MAX_KEPT`). Best effort, as every cache file."""
        if not self.fresh or self.file is None:
            return
        on_disk = checksummed_files.read_marshalled(self.file, _HEADER)
        kept = on_disk if isinstance(on_disk, dict) else {}
        for name, entry in self.fresh.items():
            kept.pop(name, None)
            kept[name] = entry
        for name in list(kept)[: max(0, len(kept) - _MAX_KEPT)]:
            del kept[name]
        self.fresh = {}
        try:
            checksummed_files.write(self.file, _HEADER, marshal.dumps(kept))
        except (OSError, ValueError):
            return


def kept_in(cache_dir: Path) -> KeyDigests:
    """The kept digests of the cache in `cache_dir`, read once per process."""
    file = Path(cache_dir) / __version__ / _NAME
    found = _OPEN.get(str(file))
    if found is None:
        found = _OPEN[str(file)] = KeyDigests(file)
    return found


def save_kept(cache_dir: Path) -> None:
    """Keep what this process worked out for the cache in `cache_dir`, once the cache was
    written there (`Cache.save`: its directory made and marked as a cache's, not by this)."""
    found = _OPEN.get(str(Path(cache_dir) / __version__ / _NAME))
    if found is not None and found.fresh and found.file is not None and found.file.parent.is_dir():
        found.save()


def package_digest(digests: KeyDigests) -> str:
    """A digest of the contents of qlint's own files: every `.py` and `.json` of the package
    (rules, analysis, the op table's data) but the language server's and the runtime checker's,
    which change no finding. A development checkout or a regenerated op table moves it, not
    only a version bump; a reinstall of the same files does not. The stats are kept as they
    are (~25 KB): compared whole, they cost less than hashing them would."""
    package, stamps, newest = package_stamps(os.path.dirname(os.path.abspath(__file__)))
    return digests.digest(f"package:{package}", stamps, newest, lambda: _package_content(package, stamps))


@lru_cache(maxsize=4)
def package_stamps(package: str) -> tuple[str, str, int]:
    """`package`, the lines `path:size:mtime_ns` (the path relative to it) of its files that
    count, sorted, and their newest mtime: ~390 stats, once per process, by `os.scandir` with
    paths cut from strings (an `os.walk` with `relpath` per file cost twice as much). A link
    to a directory is not entered, as by `os.walk`."""
    cut = len(package) + 1
    stamps = []
    newest = 0
    pending = [package]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                name = entry.name
                if entry.is_dir(follow_symlinks=False):
                    if name not in ("runtime", "lsp", "__pycache__"):
                        pending.append(entry.path)
                elif name.endswith((".py", ".json")):
                    st = entry.stat()
                    mtime = st.st_mtime_ns
                    newest = mtime if mtime > newest else newest
                    stamps.append(f"{entry.path[cut:].replace(os.sep, '/')}:{st.st_size}:{mtime}")
    stamps.sort()
    return package, "\n".join(stamps), newest


def _package_content(package: str, stamps: str) -> str:
    import hashlib  # megabytes: OpenSSL's pays for its import (`short_digests`)

    digest = hashlib.sha256()
    for line in stamps.split("\n") if stamps else ():
        rel = line.rsplit(":", 2)[0]
        with open(os.path.join(package, rel), "rb") as fh:
            data = fh.read()
        digest.update(f"{rel}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:16]


__all__ = ["UNREADABLE", "KeyDigests", "kept_in", "package_digest", "package_stamps", "save_kept"]

"""A whole run answered from one record: `qlint check` over a tree where nothing changed.

A warm run over ExecuTorch (3,800 files) spent most of its time in the per-file path of
the results cache (64 shards, 17 MB, unmarshalled; every entry's dependencies compared; the
wrapper index's record checked) and in walking the tree again. When nothing the last run
looked at has changed, all of that gives the same answer again, so a run that the cache
answered entirely writes down what it looked at, and what it answered:

- what discovery read: each directory it walked, by its stat (mtime, ctime, inode: on Linux
  creating, removing or renaming an entry moves the directory's mtime and ctime, and nothing
  moves a ctime back), the `.gitignore` and `info/exclude` files it read or looked for, the
  directories it asked whether they hold `.git`, where each symbolic link it met and each
  directory it started from led (`path_resolution`), and the files it found;
- the directories the project listings took that the walk did not (entered through a link
  by another path, or excluded), by the same stat;
- the stat of every path any cache lookup took (the files, their dependencies, the modules
  of the project listings, absent ones as None);
- the findings.

None of those stats may be too recent to vouch for what was read (`RACY_NS`, as the shards'
own stats): a directory or ignore file changed since the walk started, or a file changed
within the last seconds, and no record is written. A link's target can change while the
directory holding it keeps its stat: the record holds only while every link the walk met
resolves as it did when the walk met it (ExecuTorch's `src/executorch/*` links to its
top-level packages: a warm run there walked and looked up every file again).

The next run with the same paths, the same discovery settings and the same settings
fingerprint (which the qlint version, the config and the selected rules go into) stats every
recorded path instead of walking and looking up: if everything is as recorded, the walk would
list the same files and the per-file path would validate the same entries against the same
observations, so the record's results are returned. Anything else (a touched, new or removed
file, another config, other arguments) falls back to the walk and the per-file path, which
writes a new record when it answers the whole run.

One record per settings fingerprint (the last whole run's): pre-commit calls with changing
file lists replace it rather than pile up. Plain `marshal`ed data behind a checksum, as the
shards (`qlint.checksummed_files`): a damaged record is ignored.
"""

from __future__ import annotations

import marshal
import os
import time
import zlib
from collections.abc import Sequence
from itertools import chain
from operator import attrgetter
from pathlib import Path

from qlint import __version__, checksummed_files
from qlint.analysis.racy_stats import RACY_NS
from qlint.diagnostic import diagnostic_from_dict, diagnostic_to_dict
from qlint.path_resolution import kind, resolution
from qlint.results import FileResult

# 4: the header names the run's paths and settings (`_header`): a record of another run (the
# tree's, when pre-commit checks one file) is passed over unread, not unmarshalled (444 KB on
# ExecuTorch) to compare its key.
# 5: walks that met symbolic links are recorded, with where each led (`resolved`).
# 6: the files' stats and the directories' stamps are flat lists of integers (`_flat`).
_HEADER = b"qlint-run-6\n"
_SIZE_MTIME = attrgetter("st_size", "st_mtime_ns")
_DIR_STAMP = attrgetter("st_mtime_ns", "st_ctime_ns", "st_ino")


def record_file(directory: Path, fingerprint: str) -> Path:
    return Path(directory) / __version__ / f"{fingerprint}.run"


def run_key(paths: Sequence[str], settings) -> list:
    """The PATH arguments as the walk takes them (absolute; the default `.`) and the settings
    the walk applies, which the fingerprint leaves out (they change no finding)."""
    walk = [str(settings.root), list(settings.exclude), list(settings.extend_exclude)]
    walk += [settings.respect_gitignore, settings.force_exclude]
    return [[os.path.abspath(p) for p in paths or (".",)], walk]


def _header(key: list, kinds: list[str]) -> bytes:
    """The format's header and a checksum of the run's key (which the payload holds whole),
    of its `repr` (lists of strings and booleans: the same text in every process; `marshal`
    writes a string met twice as a reference, as it happens to be shared)."""
    return _HEADER + b"%08x\n" % zlib.crc32(repr([key, kinds]).encode("utf-8", "surrogatepass"))


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def _flat(paths: list[str], fields: attrgetter) -> list[int] | None:
    """`fields` of each path's stat in one flat list, None when one cannot be stat'ed: the
    files and directories of ExecuTorch's record (4,500) are stat'ed and compared in C, not
    one Python call and one tuple each, which cost a warm run ~4 M instructions beside the
    stats themselves."""
    try:
        return list(chain.from_iterable(map(fields, map(os.stat, paths))))
    except OSError:
        return None


def answer(cache, paths: Sequence[str], settings) -> tuple[list[str], list[FileResult]] | None:
    """(the files, their recorded results) when every recorded observation holds now, else None."""
    record = record_file(cache.directory, cache.fingerprint)
    key = run_key(paths, settings)
    kinds = [kind(p) for p in key[0]]
    payload = checksummed_files.read_marshalled(record, _header(key, kinds))
    if not isinstance(payload, dict) or payload.get("fingerprint") != cache.fingerprint:
        return None
    if payload.get("key") != key or payload.get("kinds") != kinds:
        return None
    try:
        dirs, files, others = payload["dirs"], payload["files"], payload["others"]
        ignores, probes, findings = payload["ignores"], payload["probes"], payload["findings"]
        if _flat(dirs, _DIR_STAMP) != payload["dir_stamps"]:
            return None
        if [_stat(p) for p in ignores] != payload["ignore_stats"]:
            return None
        if [os.path.exists(os.path.join(d, ".git")) for d in probes] != payload["probes_found"]:
            return None
        if [resolution(p) for p in payload["resolved"]] != payload["resolutions"]:
            return None
        if _flat(files, _SIZE_MTIME) != payload["file_stats"] or [_stat(p) for p in others] != payload["stats"]:
            return None
        decoded = {i: [diagnostic_from_dict(d) for d in ds] for i, ds in findings.items()}
        # Positional: by keyword, each of ExecuTorch's 3,800 results cost ~1,300 instructions more.
        return files, [FileResult(p, decoded.get(i, [])) for i, p in enumerate(files)]
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def write(cache, paths: Sequence[str], settings, found, results) -> None:
    """Record a run the cache answered entirely (`results`, in `found.files` order), when
    what discovery and the lookups looked at can vouch for them next time."""
    if found.errors:
        return
    observed = cache.derived.observations()
    if observed is None:
        return
    seen, unwalked = observed
    if not seen.keys() >= set(found.files):
        return
    now = time.time_ns()
    file_stats = [seen.pop(p) for p in found.files]
    if None in file_stats:
        return  # a file found by the walk and gone at its lookup: the next walk would not find it
    others = sorted(seen)
    stats = [seen[p] for p in others]
    if any(s is not None and now - s[1] < RACY_NS for s in chain(file_stats, stats)):
        return  # a second edit in the same tick would keep this stat: not a proof of content
    before = found.started - RACY_NS  # changed since the walk began: the walk may not have seen it
    dirs = [*found.listings, *unwalked]
    dir_stamps = _flat(dirs, _DIR_STAMP)
    if dir_stamps is None or any(t >= before for t in chain(dir_stamps[0::3], dir_stamps[1::3])):  # mtimes, ctimes
        return
    ignores = list(found.ignore_files)
    ignore_stats = [_stat(p) for p in ignores]
    if any(s is not None and s[1] >= before for s in ignore_stats):
        return
    key = run_key(paths, settings)
    kinds = [kind(p) for p in key[0]]
    payload = {
        "fingerprint": cache.fingerprint,
        "key": key,
        "kinds": kinds,
        "dirs": dirs,
        "dir_stamps": dir_stamps,
        "ignores": ignores,
        "ignore_stats": ignore_stats,
        "probes": [d for d, _ in found.repository_probes],
        "probes_found": [f for _, f in found.repository_probes],
        "resolved": list(found.resolved),
        "resolutions": list(found.resolved.values()),
        "files": found.files,
        "others": others,
        "file_stats": list(chain.from_iterable(file_stats)),
        "stats": stats,
        "findings": {i: [diagnostic_to_dict(d) for d in r.diagnostics] for i, r in enumerate(results) if r.diagnostics},
    }
    target = record_file(cache.directory, cache.fingerprint)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        checksummed_files.write(target, _header(key, kinds), marshal.dumps(payload))
    except (OSError, ValueError):
        return

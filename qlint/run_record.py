"""A whole run answered from one record: `qlint check` over a tree where nothing changed.

A warm run over ExecuTorch (3,800 files) spent most of its time in the per-file path of
the results cache: 64 shards (17 MB) unmarshalled, every entry's dependencies compared, the
wrapper index's record checked. When nothing the last run looked at has changed, all of
that gives the same answer again, so a run that the cache answered entirely writes down
what it looked at, and what it answered:

- the files discovery found, and what the walk listed (a digest of the directory listings
  that project scans and absent dependencies are decided from);
- the stat of every path any lookup took (the files, their dependencies, the modules of the
  listings, absent ones as None), none of them too recent to vouch for its content
  (`RACY_NS`, as the shards' own stats);
- the findings.

The next run with the same paths and the same settings fingerprint (which the qlint version,
the config and the selected rules go into) walks as usual and stats every recorded path: if
everything is as recorded, the per-file path would validate the same entries against the same
observations and return the same results, so the record's are returned. Anything else (a
touched, new or removed file, another listing, other arguments, another fingerprint) falls
back to the per-file path, which writes a new record when it answers the whole run.

One record per settings fingerprint (the last whole run's): pre-commit calls with changing
file lists replace it rather than pile up. Plain `marshal`ed data behind a checksum, as the
shards: a damaged record is ignored.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from qlint import __version__, checksummed_files
from qlint.analysis.project_files import Listing
from qlint.analysis.racy_stats import RACY_NS
from qlint.results import FileResult

_HEADER = b"qlint-run-1\n"


def record_file(directory: Path, fingerprint: str) -> Path:
    return Path(directory) / __version__ / f"{fingerprint}.run"


def run_key(paths: Sequence[str]) -> list[str]:
    """The PATH arguments as the walk takes them (absolute; the default `.`)."""
    return [os.path.abspath(p) for p in paths or (".",)]


def listings_digest(listings: Mapping[str, Listing]) -> bytes:
    """What the walk listed, in its order (the same tree walks in the same order)."""
    h = hashlib.sha256()
    for directory, (subdirs, files, links) in listings.items():
        h.update("\0".join((directory, *subdirs, "\1", *files, "\1", *links, "\2")).encode("utf-8", "surrogatepass"))
    return h.digest()


def _stat(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def answer(cache, paths: Sequence[str], files: list[str], listings: Mapping[str, Listing]) -> list[FileResult] | None:
    """The recorded results when every recorded observation holds now, else None."""
    payload = checksummed_files.read_marshalled(record_file(cache.directory, cache.fingerprint), _HEADER)
    if not isinstance(payload, dict) or payload.get("fingerprint") != cache.fingerprint:
        return None
    if payload.get("key") != run_key(paths) or payload.get("files") != files:
        return None
    if payload.get("listed") != listings_digest(listings):
        return None
    others, stats, findings = payload.get("others"), payload.get("stats"), payload.get("findings")
    if type(others) is not list or type(stats) is not list or type(findings) is not dict:
        return None
    if [_stat(p) for p in files] + [_stat(p) for p in others] != stats:
        return None
    from qlint.cache import diagnostic_from_dict

    try:
        decoded = {i: [diagnostic_from_dict(d) for d in ds] for i, ds in findings.items()}
        return [FileResult(path=p, diagnostics=decoded.get(i, [])) for i, p in enumerate(files)]
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def write(cache, paths: Sequence[str], files: list[str], listings: Mapping[str, Listing], results) -> None:
    """Record a run the cache answered entirely (`results`, in `files` order), when what its
    lookups looked at can vouch for them next time (`Cache.observations`)."""
    seen = cache.observations()
    if seen is None:
        return
    if not seen.keys() >= set(files):
        return
    now = time.time_ns()
    stats = [seen.pop(p) for p in files]
    others = sorted(seen)
    stats += [seen[p] for p in others]
    if any(s is not None and now - s[1] < RACY_NS for s in stats):
        return  # a second edit in the same tick would keep this stat: not a proof of content
    from qlint.cache import diagnostic_to_dict

    payload = {
        "fingerprint": cache.fingerprint,
        "key": run_key(paths),
        "files": files,
        "listed": listings_digest(listings),
        "others": others,
        "stats": stats,
        "findings": {i: [diagnostic_to_dict(d) for d in r.diagnostics] for i, r in enumerate(results) if r.diagnostics},
    }
    target = record_file(cache.directory, cache.fingerprint)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        checksummed_files.write(target, _HEADER, marshal.dumps(payload))
    except (OSError, ValueError):
        return

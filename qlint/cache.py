"""On-disk results cache: one index file per (qlint version, settings fingerprint).

Why one file and not one per source file: a warm run over the installed torch tree
(~2,300 files) must cost about one `stat` per file. The index maps an absolute path to
`(size, mtime_ns, sha256, diagnostics, dependencies)`: when the stat matches, the stored
hash is trusted without reading the file; when it does not, the file is read and hashed,
and an unchanged hash still hits (a `touch` or a checkout does not invalidate). A result
is valid only while every project file it depends on (`FileResult.dependencies`) still
has the recorded hash. Files modified within the last seconds are stored with an untrusted
stat, so a second same-size edit in the same mtime tick is still noticed next time.

The index is `marshal`ed plain data (no pickle: loading a cache must never run code),
written atomically; a corrupt or foreign index is ignored as if absent.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from qlint import __version__
from qlint.diagnostic import (
    Applicability,
    Diagnostic,
    Edit,
    Fix,
    Position,
    Range,
    RelatedInfo,
    RuntimeVerdict,
)
from qlint.engine import FileResult, content_hash
from qlint.settings import Settings

_MAGIC = "qlint-cache-1"
_RACY_NS = 2_000_000_000  # stats younger than this at store time are not trusted later
_UNTRUSTED = -1


def cache_dir_for(settings: Settings) -> Path:
    return settings.cache_dir or settings.root / ".qlint_cache"


class Cache:
    def __init__(self, directory: Path, fingerprint: str):
        self.directory = Path(directory)
        self.file = self.directory / __version__ / f"{fingerprint}.index"
        self.fingerprint = fingerprint
        self.entries: dict[str, tuple] = {}
        self.dirty = False
        self._hashes: dict[str, str] = {}  # current content hashes computed this run
        self._load()

    @classmethod
    def for_settings(cls, settings: Settings) -> Cache:
        # The project root decides per-file-ignores and module names: part of the key, so
        # two projects sharing a `--cache-dir` never see each other's results.
        key = hashlib.sha256(f"{settings.fingerprint}\0{settings.root}".encode()).hexdigest()[:16]
        return cls(cache_dir_for(settings), key)

    # ----------------------------------------------------------------- lookups

    def lookup(self, path: str) -> FileResult | None:
        """The cached result for `path` if its content and dependencies are unchanged."""
        entry = self.entries.get(path)
        if entry is None:
            return None
        size, mtime_ns, digest, diagnostics, deps = entry
        try:
            st = os.stat(path)
        except OSError:
            return None
        if size == _UNTRUSTED or st.st_size != size or st.st_mtime_ns != mtime_ns:
            current = self._hash_file(path)
            if current != digest:
                return None
            # Same content, new stat: remember it so the next run stats only.
            self.entries[path] = (*self._stat_key(st), digest, diagnostics, deps)
            self.dirty = True
        for dep, dep_digest in deps.items():
            if self.current_hash(dep) != dep_digest:
                return None
        return FileResult(
            path=path,
            diagnostics=[diagnostic_from_dict(d) for d in diagnostics],
            dependencies=dict(deps),
            parsed=False,
        )

    def current_hash(self, path: str) -> str:
        """Content hash of a dependency now; "" when it is gone. Uses stored stats."""
        known = self._hashes.get(path)
        if known is not None:
            return known
        entry = self.entries.get(path)
        if entry is not None and entry[0] != _UNTRUSTED:
            try:
                st = os.stat(path)
            except OSError:
                st = None
            if st is not None and (st.st_size, st.st_mtime_ns) == entry[:2]:
                self._hashes[path] = entry[2]
                return entry[2]
        return self._hash_file(path)

    def _hash_file(self, path: str) -> str:
        try:
            with open(path, "rb") as fh:
                digest = content_hash(fh.read())
        except OSError:
            digest = ""
        self._hashes[path] = digest
        return digest

    # ----------------------------------------------------------------- updates

    def store(self, result: FileResult, size: int, mtime_ns: int, digest: str) -> None:
        """Remember a fresh result; `size`/`mtime_ns` are from a stat taken before reading."""
        if result.errors:
            return  # an internal error or unreadable file must be retried next run
        key = self._stat_key_values(size, mtime_ns)
        diagnostics = [diagnostic_to_dict(d) for d in result.diagnostics]
        self.entries[result.path] = (*key, digest, diagnostics, dict(result.dependencies))
        self._hashes[result.path] = digest
        self.dirty = True

    def forget_missing(self, roots: list[str], seen: set[str]) -> None:
        """Drop entries below the walked `roots` that the walk no longer found."""
        prefixes = tuple(r.rstrip(os.sep) + os.sep for r in roots)
        stale = [p for p in self.entries if p.startswith(prefixes) and p not in seen]
        for path in stale:
            del self.entries[path]
        self.dirty = self.dirty or bool(stale)

    def save(self) -> None:
        """Write the index atomically. Failing to write a cache is never an error."""
        if not self.dirty:
            return
        payload = {"magic": _MAGIC, "fingerprint": self.fingerprint, "entries": self.entries}
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            _mark_cache_dir(self.directory)
            fd, tmp = tempfile.mkstemp(dir=self.file.parent, prefix=".tmp-", suffix=".index")
            try:
                with os.fdopen(fd, "wb") as fh:
                    marshal.dump(payload, fh)
                os.replace(tmp, self.file)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except (OSError, ValueError):
            return
        self.dirty = False

    def _load(self) -> None:
        try:
            with open(self.file, "rb") as fh:
                payload = marshal.load(fh)
        except (OSError, EOFError, ValueError, TypeError):
            return
        if (
            not isinstance(payload, dict)
            or payload.get("magic") != _MAGIC
            or payload.get("fingerprint") != self.fingerprint
            or not isinstance(payload.get("entries"), dict)
        ):
            return
        entries = payload["entries"]
        if all(_valid_entry(e) for e in entries.values()):
            self.entries = entries

    def _stat_key(self, st: os.stat_result) -> tuple[int, int]:
        return self._stat_key_values(st.st_size, st.st_mtime_ns)

    @staticmethod
    def _stat_key_values(size: int, mtime_ns: int) -> tuple[int, int]:
        if time.time_ns() - mtime_ns < _RACY_NS:
            return (_UNTRUSTED, mtime_ns)
        return (size, mtime_ns)


def _valid_entry(entry: Any) -> bool:
    return (
        isinstance(entry, tuple)
        and len(entry) == 5
        and isinstance(entry[2], str)
        and isinstance(entry[3], list)
        and isinstance(entry[4], dict)
    )


def _mark_cache_dir(directory: Path) -> None:
    """Like ruff: the cache ignores itself in git and tells backup tools it is a cache."""
    gitignore = directory / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text("# Automatically created by qlint.\n*\n")
    tag = directory / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n# Created by qlint.\n")


# ----------------------------------------------------------------- (de)serialization


def _range_to(r: Range) -> list[int]:
    return [r.start.row, r.start.col, r.end.row, r.end.col]


def _range_from(v: list[int]) -> Range:
    return Range(Position(v[0], v[1]), Position(v[2], v[3]))


def diagnostic_to_dict(d: Diagnostic) -> dict[str, Any]:
    """A JSON-able (and marshal-able) dict that `diagnostic_from_dict` turns back exactly."""
    out: dict[str, Any] = {
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "path": d.path,
        "range": _range_to(d.range),
        "noqa_row": d.noqa_row,
    }
    if d.fix is not None:
        out["fix"] = {
            "applicability": d.fix.applicability.value,
            "message": d.fix.message,
            "edits": [[_range_to(e.range), e.content, e.path] for e in d.fix.edits],
        }
    if d.related:
        out["related"] = [[r.path, _range_to(r.range), r.message] for r in d.related]
    if d.evidence:
        out["evidence"] = d.evidence
    if d.help:
        out["help"] = d.help
    if d.cell is not None:
        out["cell"] = d.cell
    if d.runtime is not None:
        rt = d.runtime
        out["runtime"] = [rt.verdict, rt.evidence, rt.fix_verified, rt.seconds]
    return out


def diagnostic_from_dict(data: dict[str, Any]) -> Diagnostic:
    fix = None
    if "fix" in data:
        f = data["fix"]
        edits = tuple(Edit(_range_from(r), content, path) for r, content, path in f["edits"])
        fix = Fix(Applicability(f["applicability"]), f["message"], edits)
    related = tuple(RelatedInfo(p, _range_from(r), m) for p, r, m in data.get("related", ()))
    runtime = RuntimeVerdict(*data["runtime"]) if "runtime" in data else None
    return Diagnostic(
        code=data["code"],
        name=data["name"],
        message=data["message"],
        path=data["path"],
        range=_range_from(data["range"]),
        fix=fix,
        noqa_row=data["noqa_row"],
        related=related,
        evidence=dict(data.get("evidence", {})),
        runtime=runtime,
        help=data.get("help"),
        cell=data.get("cell"),
    )

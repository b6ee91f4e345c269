"""On-disk verdict cache: one small JSON file per check, keyed by everything it depends on.

The key (see `request.request_key`) covers the code, the rule's evidence, the fix edits,
whether the fix was verified, the installed torch/torchao/executorch versions (read with
`importlib.metadata`, never by importing them) and a hash of the checker's own source.
Only deterministic verdicts are stored: a timeout or a worker crash says nothing about
the finding and is retried on the next run. Each record carries its key and a SHA-256 of
its fields; a record that fails either, or holds a value no verdict can have, is a miss
(checked again), never an error and never a garbled verdict.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import cache
from importlib import metadata
from pathlib import Path

from qlint.diagnostic import RuntimeVerdict

PACKAGES = ("torch", "torchao", "executorch")
CACHEABLE = frozenset({"confirmed", "refuted", "skipped"})


def installed_versions() -> dict[str, str | None]:
    """Versions of the packages the worker imports; None when one is not installed."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


@cache
def checker_fingerprint() -> str:
    """Hash of the runtime package's sources: editing a check invalidates its verdicts."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


_FIELDS = ("verdict", "evidence", "fix_verified", "seconds")


def _checksum(key: str, fields: dict) -> str:
    canonical = json.dumps([key, *(fields[name] for name in _FIELDS)], sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


class VerdictCache:
    def __init__(self, directory: Path):
        self.directory = directory

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> RuntimeVerdict | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            fields = {name: data[name] for name in _FIELDS}
            if data.get("key") != key or data.get("sha256") != _checksum(key, fields):
                return None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # unreadable, not JSON (UnicodeDecodeError is a ValueError), not a record
        verdict, evidence, fix_verified, seconds = (fields[name] for name in _FIELDS)
        if (
            verdict not in CACHEABLE
            or not isinstance(evidence, str)
            or fix_verified not in (True, False, None)
            or type(seconds) not in (int, float)
        ):
            return None
        return RuntimeVerdict(verdict=verdict, evidence=evidence, fix_verified=fix_verified, seconds=float(seconds))

    def put(self, key: str, verdict: RuntimeVerdict, cacheable: bool = True) -> None:
        if not cacheable or verdict.verdict not in CACHEABLE:
            return
        path = self._path(key)
        fields = {
            "verdict": verdict.verdict,
            "evidence": verdict.evidence,
            "fix_verified": verdict.fix_verified,
            "seconds": verdict.seconds,
        }
        record = {**fields, "key": key, "sha256": _checksum(key, fields)}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Atomic: a concurrent qlint run reads either nothing or a whole record.
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(record, fh)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only cache directory only costs speed

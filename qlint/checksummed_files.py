"""Files qlint writes for itself (the results index's shards, module summaries): a header
naming the format, the sha256 of the data, then the data.

Written atomically, through a temporary file in the same directory renamed over the target,
so a reader (another run, a forked worker) sees the old file or the new one, never half of
one; read back as None when absent, cut short, corrupted or of another format.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import tempfile
from pathlib import Path

_DIGEST_SIZE = hashlib.sha256().digest_size


def write(target: Path, header: bytes, data: bytes) -> None:
    """Raises OSError when it cannot write (callers treat a cache they cannot write as absent)."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=target.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(header + hashlib.sha256(data).digest() + data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read(path: Path, header: bytes) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    checksum = raw[len(header) : len(header) + _DIGEST_SIZE]
    data = raw[len(header) + _DIGEST_SIZE :]
    if not raw.startswith(header) or hashlib.sha256(data).digest() != checksum:
        return None
    return data


def name_for(key: str, suffix: str) -> str:
    """A file name for `key` (a path, a project root) that any file system takes."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32] + suffix


def read_marshalled(path: Path, header: bytes) -> object | None:
    """What `write(path, header, marshal.dumps(value))` stored, else None."""
    data = read(path, header)
    if data is None:
        return None
    try:
        return marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None

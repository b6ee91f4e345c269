"""Files qlint writes for itself (the results index's shards, module summaries): a header
naming the format, the sha256 of the data, then the data.

Written atomically, through a temporary file in the same directory renamed over the target,
so a reader (another run, a forked worker) sees the old file or the new one, never half of
one; read back as None when absent, cut short, corrupted or of another format.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path

from qlint import digests

Checksum = Callable[[bytes], bytes]


def sha256(data: bytes) -> bytes:
    return digests.sha256(data).digest()


def crc32(data: bytes) -> bytes:
    """For a file read at the start of a run that hashes nothing else (`qlint.run_record`):
    importing OpenSSL for its SHA-256 would cost more than reading the file. It still tells a
    flipped bit or a cut file."""
    return zlib.crc32(data).to_bytes(4, "big")


def write(target: Path, header: bytes, data: bytes, checksum: Checksum = sha256) -> None:
    """Raises OSError when it cannot write (callers treat a cache they cannot write as absent)."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=target.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(header + checksum(data) + data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read(path: Path, header: bytes, checksum: Checksum = sha256) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    size = len(checksum(b""))
    stored = raw[len(header) : len(header) + size]
    data = raw[len(header) + size :]
    if not raw.startswith(header) or checksum(data) != stored:
        return None
    return data


def name_for(key: str, suffix: str) -> str:
    """A file name for `key` (a path, a project root) that any file system takes."""
    return digests.small(key.encode("utf-8", "surrogatepass")).hexdigest()[:32] + suffix


def read_marshalled(path: Path, header: bytes, checksum: Checksum = sha256) -> object | None:
    """What `write(path, header, marshal.dumps(value))` stored, else None."""
    data = read(path, header, checksum)
    if data is None:
        return None
    try:
        return marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None

"""Files qlint writes for itself (the results index's shards, module summaries): a header
naming the format, a CRC-32 of the data, then the data.

The check is against damage (a file cut short, a flipped bit), which CRC-32 catches as the
SHA-256 it replaces did, at a fraction of the cost: a warm `qlint check FILE` on ExecuTorch
reads ~700 KB of them (a shard of the results index, the wrapper names, the listings), and
SHA-256 needed OpenSSL loaded for it. Files of the SHA-256 format read as absent.

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
from pathlib import Path

from qlint.short_digests import sha256_hex

_CHECK = b"crc32\n"  # after the caller's header


def write(target: Path, header: bytes, data: bytes) -> None:
    """Raises OSError when it cannot write (callers treat a cache they cannot write as absent)."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=target.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(header + _CHECK + _crc(data) + data)
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
    start = len(header) + len(_CHECK)
    if not raw.startswith(header) or raw[len(header) : start] != _CHECK:
        return None
    data = raw[start + 4 :]
    if raw[start : start + 4] != _crc(data):
        return None
    return data


def _crc(data: bytes) -> bytes:
    return zlib.crc32(data).to_bytes(4, "big")


def name_for(key: str, suffix: str) -> str:
    """A file name for `key` (a path, a project root) that any file system takes."""
    return sha256_hex(key.encode("utf-8", "surrogatepass"))[:32] + suffix


def read_marshalled(path: Path, header: bytes) -> object | None:
    """What `write(path, header, marshal.dumps(value))` stored, else None."""
    data = read(path, header)
    if data is None:
        return None
    try:
        return marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None


class RootFiles:
    """One file per project root in `directory` (named by `name_for(root, suffix)`), holding a
    `marshal`ed value: the stores the results cache keeps beside its index (the wrapper
    names, the directory listings). A file it cannot write is no file (the value is worked
    out again next time)."""

    def __init__(self, directory: Path, suffix: str, header: bytes):
        self.directory = Path(directory)
        self.suffix = suffix
        self.header = header

    def load(self, root: str) -> object | None:
        return read_marshalled(self.directory / name_for(root, self.suffix), self.header)

    def save(self, root: str, value: object) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            write(self.directory / name_for(root, self.suffix), self.header, marshal.dumps(value))
        except (OSError, ValueError):
            return

"""SHA-256 of short inputs (the settings' fingerprint, cache keys, the names of cache files)
without loading OpenSSL: `hashlib` loads it at import, about 3 ms of CPU, a fiftieth of a
`qlint check FILE` answered from the cache, which hashes nothing longer than a few KB.
CPython's own implementation gives the same digests. Content digests of modules
(`content_sha256_hex`) start the same way, and go to `hashlib` (OpenSSL, ~10x faster per
byte) once a process has hashed more than a one-file check does: a cold run reads megabytes."""

from __future__ import annotations

try:
    from _sha256 import sha256 as _sha256  # CPython 3.10 and 3.11
except ImportError:  # pragma: no cover - the interpreter decides
    try:
        from _sha2 import sha256 as _sha256  # CPython 3.12 and later
    except ImportError:
        from hashlib import sha256 as _sha256  # another interpreter


def sha256_hex(data: bytes) -> str:
    return _sha256(data).hexdigest()


# Bytes of content this process has hashed without OpenSSL, and how many it may: past the
# budget, `hashlib`'s import costs less than the slower hashing would. Measured here: the
# import ~11 M instructions (~3 ms), CPython's SHA-256 ~49 instructions a byte (3.9 ms a MB),
# OpenSSL's ~28 under callgrind (0.65 ms a MB on the CPU): even from 530 KB (callgrind) or
# 0.9 MB (CPU). At 256 KB, ExecuTorch's edited qualcomm tests/utils.py (16 modules, ~350 KB)
# loaded OpenSSL to hash the last ~100 KB. Its memory decides past that: loading it takes
# ~3.4 MiB (libcrypto's pages and its state), which put ao's cold run (one process, 1.3 MB
# hashed) level with ruff's peak (63.6 MiB against 63.6). Up to 2 MB the builtin hashing
# costs at most ~30 M instructions more than OpenSSL would; a run over more bytes (ExecuTorch,
# torch) gets it past the budget, or before forking its workers (`load_before_forking`).
_HASHED = [0]
_BUILTIN_BUDGET = 1 << 21


def load_before_forking() -> None:
    """Load OpenSSL now, in a process about to fork processes that will each hash past the
    budget (the workers of a whole-tree run). Loaded after the fork, each child initialised
    OpenSSL in its own memory (~1.6 MiB of private pages, measured in a forked child); loaded
    before, the children share the parent's pages and copy only the few they write (~0.2 MiB)."""
    _HASHED[0] = _BUILTIN_BUDGET
    import hashlib

    hashlib.sha256(b"").digest()  # its first use initialises the digest, not the import


def content_sha256_hex(data: bytes) -> str:
    """SHA-256 of a module's content. An edited one-file check hashes the few modules it loads
    (ExecuTorch's `backends/qualcomm/tests/utils.py`: 16, ~350 KB), a cold run thousands."""
    if _HASHED[0] + len(data) <= _BUILTIN_BUDGET:
        _HASHED[0] += len(data)
        return _sha256(data).hexdigest()
    import hashlib  # past the budget only: see `_HASHED`

    return hashlib.sha256(data).hexdigest()


def file_digest(path: str) -> str:
    """The first 16 hex digits of `content_sha256_hex` of the file at `path` (cache keys: the
    key's files by content, not by stat). Raises OSError as `open` does."""
    with open(path, "rb") as fh:
        return content_sha256_hex(fh.read())[:16]

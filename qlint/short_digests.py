"""SHA-256 of short inputs (the settings' fingerprint, cache keys, the names of cache files)
without loading OpenSSL: `hashlib` loads it at import, about 3 ms of CPU, a fiftieth of a
`qlint check FILE` answered from the cache, which hashes nothing longer than a few KB.
CPython's own implementation gives the same digests. Content digests of modules, which
read megabytes in a cold run, keep `hashlib` (`qlint.results.content_hash`)."""

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

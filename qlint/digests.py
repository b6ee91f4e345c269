"""SHA-256 without importing `hashlib` at every start of `qlint`.

`hashlib` loads OpenSSL when imported: 11 million instructions, about 3 ms, a fortieth of a
warm run over pytorch/ao that a record answers (`qlint.run_record`) and that hashes nothing
but a few short strings. Those (the settings' fingerprint, cache keys) take the
interpreter's own SHA-256; file contents take OpenSSL's, ten times faster on large data,
imported the first time one is hashed. The digests are the same either way.
"""

from __future__ import annotations

try:
    from _sha2 import sha256 as _builtin  # Python 3.12 and later
except ImportError:
    try:
        from _sha256 import sha256 as _builtin  # Python 3.11
    except ImportError:  # an interpreter built without them
        _builtin = None


def small(data: bytes):
    """A SHA-256 object over `data`, for a few hundred bytes (fingerprints, keys)."""
    if _builtin is None:
        return sha256(data)
    return _builtin(data)


def sha256(data: bytes = b""):
    """A SHA-256 object over `data`, for file contents (`hashlib`'s, imported when first asked)."""
    import hashlib

    return hashlib.sha256(data)

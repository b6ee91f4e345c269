"""What identifies a module's content now, for everything that remembers facts about other
modules: the project index's scopes and summaries, and the facts that outlive one check
(QL101/QL102's helpers, the project scans). One keying, so an unsaved buffer or an edit
invalidates all of them alike, and one digest memo, so a module is hashed once per content.

A module's key is its open buffer's text when the editor holds one (the project index's
overlay), else its stat (mtime_ns, size); a module that is absent has the key None, so one
created later changes it. The digest is the sha256 recorded for a dependency (for the
results cache and the language server's dependents): "" when the module is absent.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping

from qlint.short_digests import content_sha256_hex

_DIGESTS: dict[str, tuple[tuple | None, str]] = {}
_MAX = 100_000
# Where digests an earlier run computed are kept (`scan_memo`): asked before a module is read.
_SAVED: list[Callable[[str, tuple], str | None]] = []
# Before any module is stat'ed by this process: a stat older than this by more than a clock
# tick cannot be shared by an edit made after it was taken (`scan_memo`).
STARTED_NS = time.time_ns()


def content_key(overlay: Mapping[str, str], path: str, normal: bool = False) -> tuple | None:
    """`normal`: `path` is absolute and normalised already (a listing's): project scans ask
    for thousands. No buffer open (the CLI): no path to normalise either."""
    text = (overlay.get(path) if normal else overlay.get(os.path.abspath(path))) if overlay else None
    if text is not None:
        return ("overlay", hash(text))
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def digest(overlay: Mapping[str, str], path: str, key: tuple | None = None) -> str:
    """sha256 of the module as the project index sees it ("" when absent)."""
    key = content_key(overlay, path) if key is None else key
    known = _DIGESTS.get(path)
    if known is not None and known[0] == key:
        return known[1]
    if key is not None and key[0] != "overlay":
        for saved in _SAVED:
            value = saved(path, key)
            if value is not None:
                return value
    if key is None:
        value = ""
    elif key[0] == "overlay":
        value = content_sha256_hex(overlay[os.path.abspath(path)].encode("utf-8", "surrogatepass"))
    else:
        try:
            with open(path, "rb") as fh:
                value = content_sha256_hex(fh.read())
        except OSError:
            key, value = None, ""
    remember_digest(path, key, value)
    return value


def known_or_saved(path: str, key: tuple) -> str | None:
    """The digest of the file at content `key` (a stat, not a buffer) this process computed or
    an earlier run kept (`consult`), without reading it; None when neither knows it."""
    known = _DIGESTS.get(path)
    if known is not None and known[0] == key:
        return known[1]
    for saved in _SAVED:
        value = saved(path, key)
        if value is not None:
            return value
    return None


def digest_at(path: str, key: tuple) -> str | None:
    """The digest of the file at content `key` (a stat, not a buffer): known, kept by an
    earlier run, or read now while the file still has that stat (None when it no longer
    does, or cannot be read). For answers written down for later runs (`kept_answers`),
    whose trails name modules a check read without hashing them."""
    known = known_or_saved(path, key)
    if known is not None:
        return known
    try:
        with open(path, "rb") as fh:
            data = fh.read()
            st = os.fstat(fh.fileno())
    except OSError:
        return None
    # Stat'ed after the read: a file rewritten since `key` was taken has another stat (one
    # rewritten within a clock tick of it is not asked: `kept_answers` trusts no such stat).
    if (st.st_mtime_ns, st.st_size) != tuple(key):
        return None
    value = content_sha256_hex(data)
    remember_digest(path, key, value)
    return value


def content_bytes(overlay: Mapping[str, str], path: str, key: tuple | None, limit: int) -> bytes | None:
    """The module's bytes as its `key` was taken (the buffer's text when open), or None when
    it is absent, unreadable or larger than `limit`."""
    if key is None:
        return None
    if key[0] == "overlay":
        return overlay[path].encode("utf-8", "surrogatepass")
    # Unbuffered: a project scan reads thousands of modules (QL201's caller scan, once per
    # helper: ExecuTorch's 3,784 in 47 ms, against 68 ms through a buffered file object).
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    chunks: list[bytes] = []
    size = 0
    try:
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return (chunks[0] if len(chunks) == 1 else b"".join(chunks)) if size <= limit else None


def consult(saved: Callable[[str, tuple], str | None]) -> None:
    """Ask `saved(path, key)` for a module's digest before reading it (None: not known)."""
    if saved not in _SAVED:
        _SAVED.append(saved)


def digests_under(prefix: str) -> list[tuple[str, tuple[tuple | None, str]]]:
    """(path, (key, digest)) of the modules whose path starts with `prefix`."""
    return [(p, known) for p, known in _DIGESTS.items() if p.startswith(prefix)]


def known_digest(path: str, key: tuple) -> str | None:
    """The digest this process computed for the module at content `key`, if it did."""
    known = _DIGESTS.get(path)
    return known[1] if known is not None and known[0] == key else None


def forget_digest(path: str) -> None:
    """The file changed (an editor's watcher says so): its digest is worked out again even
    where its stat did not move (rewritten within one clock tick, at the same size)."""
    _DIGESTS.pop(path, None)


def remember_digest(path: str, key: tuple | None, value: str) -> None:
    """A digest computed while reading the module for another reason (the project index
    loading it, a project scan)."""
    if len(_DIGESTS) > _MAX:
        _DIGESTS.clear()
    _DIGESTS[path] = (key, value)

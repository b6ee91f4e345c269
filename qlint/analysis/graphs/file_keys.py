"""Content keys for facts about other modules that outlive one check (helpers, the project
scan): a fact is reused only while every module it was read from has the key it had then.

A module's key is its open buffer's text when the editor holds one (the project index's
overlay), else its stat (mtime_ns, size); a module that is absent has the key None, so one
created later changes it. The content hash each dependency is recorded with (for the
results cache and the language server's dependents) is computed once per key.
"""

from __future__ import annotations

import hashlib
import os

_DIGESTS: dict[str, tuple[tuple | None, str]] = {}
_MAX = 100_000


def content_key(project, path: str) -> tuple | None:
    text = project.overlay.get(os.path.abspath(path))
    if text is not None:
        return ("overlay", hash(text))
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def digest(project, path: str, key: tuple | None = None) -> str:
    """sha256 of the module as the project index sees it ("" when absent)."""
    key = content_key(project, path) if key is None else key
    known = _DIGESTS.get(path)
    if known is not None and known[0] == key:
        return known[1]
    if key is None:
        value = ""
    elif key[0] == "overlay":
        value = hashlib.sha256(project.overlay[os.path.abspath(path)].encode("utf-8", "surrogatepass")).hexdigest()
    else:
        try:
            with open(path, "rb") as fh:
                value = hashlib.sha256(fh.read()).hexdigest()
        except OSError:
            key, value = None, ""
    if len(_DIGESTS) > _MAX:
        _DIGESTS.clear()
    _DIGESTS[path] = (key, value)
    return value


def remember_digest(path: str, key: tuple | None, value: str) -> None:
    """A digest computed while reading the module for another reason (the project scan)."""
    if len(_DIGESTS) > _MAX:
        _DIGESTS.clear()
    _DIGESTS[path] = (key, value)


Deps = tuple[tuple[str, "tuple | None"], ...]


def still_valid(project, deps: Deps) -> bool:
    """Whether every module a fact was read from still has the key it had."""
    return all(content_key(project, path) == key for path, key in deps)


def record(project, requester: str, deps: Deps) -> None:
    """Record the modules a fact was read from as dependencies of the check of `requester`."""
    for path, key in deps:
        project.record_read(requester, path, digest(project, path, key))

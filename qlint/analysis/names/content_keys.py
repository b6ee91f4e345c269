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

import hashlib
import os
from collections.abc import Mapping

_DIGESTS: dict[str, tuple[tuple | None, str]] = {}
_MAX = 100_000


def content_key(overlay: Mapping[str, str], path: str) -> tuple | None:
    # No buffer open (the CLI): no path to normalise (project scans ask for thousands).
    text = overlay.get(os.path.abspath(path)) if overlay else None
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
    if key is None:
        value = ""
    elif key[0] == "overlay":
        value = hashlib.sha256(overlay[os.path.abspath(path)].encode("utf-8", "surrogatepass")).hexdigest()
    else:
        try:
            with open(path, "rb") as fh:
                value = hashlib.sha256(fh.read()).hexdigest()
        except OSError:
            key, value = None, ""
    remember_digest(path, key, value)
    return value


def remember_digest(path: str, key: tuple | None, value: str) -> None:
    """A digest computed while reading the module for another reason (the project index
    loading it, a project scan)."""
    if len(_DIGESTS) > _MAX:
        _DIGESTS.clear()
    _DIGESTS[path] = (key, value)

"""Content keys for facts about other modules that outlive one check (helpers, the project
scan): a fact is reused only while every module it was read from has the key it had then.

The keys and digests are the project index's own (`ProjectIndex.content_key`/`digest`, see
`qlint.analysis.names.content_keys`): these helpers take the index the fact was read through.
"""

from __future__ import annotations

import os

from qlint.analysis.names import content_keys
from qlint.analysis.names.content_keys import remember_digest
from qlint.analysis.names.import_paths import tried_before

__all__ = [
    "Deps",
    "content_bytes",
    "content_key",
    "digest",
    "record",
    "record_trail",
    "recording",
    "remember_digest",
    "still_valid",
]


def content_key(project, path: str) -> tuple | None:
    return project.content_key(path)


def content_bytes(project, path: str, key: tuple | None, limit: int) -> bytes | None:
    """The module's bytes as `key` was taken (None: absent, unreadable, over `limit`)."""
    return content_keys.content_bytes(project.overlay, path, key, limit)


def digest(project, path: str, key: tuple | None = None) -> str:
    """sha256 of the module as the project index sees it ("" when absent)."""
    return project.digest(path, key)


Deps = tuple[tuple[str, "tuple | None"], ...]


def still_valid(project, deps: Deps) -> bool:
    """Whether every module a fact was read from still has the key it had."""
    return all(content_key(project, path) == key for path, key in deps)


def record(project, requester: str, deps: Deps) -> None:
    """Record the modules a fact was read from as dependencies of the check of `requester`."""
    if not recording(project):
        return
    for path, key in deps:
        project.record_read(requester, path, digest(project, path, key))


def record_trail(project, requester: str, trail) -> None:
    """`record` of a fact's trail: its modules (path, key), and its lookups ((("find",
    module, root), the file found or None), `forwarding`'s and `packet_imports`' spelling),
    each as the paths it found no file at before its answer ("" = absent; `tried_before`):
    a module created at one of them is imported instead, or where none was. Other entries
    (the names a fact rests on) are left to the reader."""
    if not recording(project):
        return
    for path, key in trail:
        if type(path) is str:
            project.record_read(requester, path, digest(project, path, key))
        elif path[0] == "find":
            for tried in tried_before(path[1], os.path.join(path[2], "_.py"), key):
                project.record_read(requester, tried, project.tried_digest(tried))


def recording(project) -> bool:
    """Whether what a check reads is recorded: not in a run that drops it (`--no-cache`,
    `ProjectIndex.dependencies_unwanted`) while no one collects the reads either (a model
    flow's tracker or a kept fact sets `project.reads`, and a kept fact wants them all). The
    helper search records its trails for each file whose import trigger it answers: ~12,000
    records, each normalising two paths and looking up a digest, in a cold run over the
    installed torch whose results keep none of them."""
    return project.wants_dependencies or project.reads is not None

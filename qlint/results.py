"""What a check of one file produces, and how paths are shown: the part of the engine that
every face reads without running a check. Kept apart from `qlint.engine` so a run whose
results all come from the cache imports no rule, analysis or parser machinery."""

from __future__ import annotations

import os

from qlint.diagnostic import Diagnostic
from qlint.short_digests import content_sha256_hex
from qlint.value_classes import field, value_class


@value_class
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # Other project files whose content this result depends on (path -> sha256, "" = absent),
    # for the cache. A directory is spelled with a trailing separator: "" = none there,
    # `shadowed_names.DIRECTORY` = one there.
    dependencies: dict[str, str] = field(default_factory=dict)
    # Problems that are not findings: unreadable file, internal rule error. Exit code 2.
    errors: list[str] = field(default_factory=list)
    parsed: bool = False


def content_hash(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return content_sha256_hex(data)


def display_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel

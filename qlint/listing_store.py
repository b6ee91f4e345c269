"""Where the results cache keeps a project's directory listings between runs: one
checksummed, `marshal`ed file per root (`project_files.saved_listings`), written atomically.

A cached result that depends on a whole listing (a project scan's, or the wrapper names',
`qlint.analysis.wrapper_record`) is checked against the files under its root as they are
now. Listing them again cost `qlint check FILE` more than the rest of its lookup: 640
directories of ExecuTorch, 620 of the installed torch package (where most entries are not
Python files). Read back, a directory is listed again only when its stamp moved since
(`project_files._listed`: mtime, ctime, inode): adding, removing or renaming an entry moves
it, so the files found are those a new listing would find; only mtimes old enough to vouch
are kept.
"""

from __future__ import annotations

from pathlib import Path

from qlint import checksummed_files

_HEADER = b"qlint-listings-2\n"


class ListingStore:
    def __init__(self, directory: Path):
        self._files = checksummed_files.RootFiles(directory, ".listing", _HEADER)

    def load(self, root: str) -> dict | None:
        payload = self._files.load(root)
        if not isinstance(payload, dict) or payload.get("root") != root or not isinstance(payload.get("dirs"), dict):
            return None
        return payload["dirs"]

    def save(self, root: str, dirs: dict) -> None:
        self._files.save(root, {"root": root, "dirs": dirs})

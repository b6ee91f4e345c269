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

import marshal
from pathlib import Path

from qlint import checksummed_files

_HEADER = b"qlint-listings-2\n"


class ListingStore:
    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def _file(self, root: str) -> Path:
        return self.directory / checksummed_files.name_for(root, ".listing")

    def load(self, root: str) -> dict | None:
        payload = checksummed_files.read_marshalled(self._file(root), _HEADER)
        if not isinstance(payload, dict) or payload.get("root") != root or not isinstance(payload.get("dirs"), dict):
            return None
        return payload["dirs"]

    def save(self, root: str, dirs: dict) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            checksummed_files.write(self._file(root), _HEADER, marshal.dumps({"root": root, "dirs": dirs}))
        except (OSError, ValueError):
            return

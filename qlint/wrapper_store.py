"""Where the results cache keeps the project's wrapper names between runs (`wrapper_record`):
one checksummed, `marshal`ed file per project root, written atomically."""

from __future__ import annotations

import marshal
from pathlib import Path

from qlint import checksummed_files
from qlint.analysis.wrapper_record import Record, from_data

# 2: with the names of the helpers forwarding to QL101's sinks.
_HEADER = b"qlint-wrappers-2\n"


class WrapperStore:
    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def _file(self, root: str) -> Path:
        return self.directory / checksummed_files.name_for(root, ".wrappers")

    def load(self, root: str) -> Record | None:
        payload = checksummed_files.read_marshalled(self._file(root), _HEADER)
        return from_data(payload, root) if isinstance(payload, dict) else None

    def save(self, record: Record) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            checksummed_files.write(self._file(record.root), _HEADER, marshal.dumps(record.to_data()))
        except (OSError, ValueError):
            return

"""Where the results cache keeps the project's wrapper names between runs (`wrapper_record`):
one checksummed, `marshal`ed file per project root, written atomically."""

from __future__ import annotations

from pathlib import Path

from qlint import checksummed_files
from qlint.analysis.wrapper_record import Record, from_data

# 2: with the names of the helpers forwarding to QL101's sinks.
# 3: the stats kept in the tree's snapshot (`tree_snapshot`), where there is one; a reader of 2
# would take its missing table for damage.
# 4: with the names' digest (`wrapper_record.digest_of`), not worked out again at each read.
# 5: a root with no index keeps a marker of it (`Record.too_many`), which a reader of 4 lacks.
# 6: with the stems of the modules defining QL101's helpers (`Record.sink_modules`).
# 7: those stems with their packages' (`import pkg`, then `pkg.checks.assert_nodes(...)`).
_HEADER = b"qlint-wrappers-7\n"


class WrapperStore:
    def __init__(self, directory: Path):
        self._files = checksummed_files.RootFiles(directory, ".wrappers", _HEADER)

    def load(self, root: str) -> Record | None:
        payload = self._files.load(root)
        return from_data(payload, root) if isinstance(payload, dict) else None

    def save(self, record: Record) -> None:
        self._files.save(record.root, record.to_data())

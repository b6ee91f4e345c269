"""Module summaries on disk, next to the results cache (`qlint.cache`).

One small file per module path under `<cache>/<version>/<fingerprint>.summaries/`, keyed
like the results index (qlint version, the settings' rule-set fingerprint and the project
root), holding the summary of the content it was computed from: a reader passes the
content hash of the module as it is now, and a summary of other content is a miss. Files,
not one index: worker processes compute summaries side by side and each writes its own,
atomically, with no index to merge; a check of one file reads only the few it imports.

Each file is a header, a SHA-256 of the payload and a `marshal`ed dict (plain data: loading
a cache never runs code). A cut, corrupted or foreign file, or a payload that does not
decode as a summary, is a miss; writing is best effort and never fails a run.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
from collections.abc import Iterator
from pathlib import Path

from qlint import __version__, checksummed_files
from qlint.analysis.names.summary import ModuleSummary
from qlint.settings import Settings

_MAGIC = "qlint-summary-2"
_HEADER = b"qlint-summary-2\n"


class SummaryStore:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._made = False

    @classmethod
    def for_settings(cls, settings: Settings) -> SummaryStore:
        from qlint.cache import cache_dir_for, cache_key

        return cls(cache_dir_for(settings) / __version__ / f"{cache_key(settings)}.summaries")

    def _file(self, path: str) -> Path:
        return self.directory / (hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:32] + ".summary")

    def get(self, path: str, digest: str, module: str | None) -> ModuleSummary | None:
        """The summary of `path` as it is now (content `digest`, dotted name `module`), or None."""
        data = checksummed_files.read(self._file(path), _HEADER)
        if data is None:
            return None
        try:
            payload = marshal.loads(data)
            if not isinstance(payload, dict) or payload.get("magic") != _MAGIC or payload.get("path") != path:
                return None
            summary = ModuleSummary.from_data(payload.get("summary"))
        except (EOFError, ValueError, TypeError, KeyError):
            return None
        # Another content, or the same file under another package layout (an `__init__.py`
        # added above it renames it and changes what its relative imports mean).
        if summary.digest != digest or summary.module != module:
            return None
        return summary

    def put(self, path: str, summary: ModuleSummary) -> None:
        payload = marshal.dumps({"magic": _MAGIC, "path": path, "summary": summary.to_data()})
        target = self._file(path)
        try:
            if not self._made:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._made = True
            checksummed_files.write(target, _HEADER, payload)
        except (OSError, ValueError):
            return


@contextlib.contextmanager
def summary_store(settings: Settings, enabled: bool) -> Iterator[None]:
    """While inside: every project index of this process (and of workers forked meanwhile)
    reads and writes module summaries in the store of `settings` (none with `--no-cache`)."""
    from qlint.analysis.names.project import ProjectIndex

    before, layout = ProjectIndex.store, ProjectIndex.fixed_layout
    ProjectIndex.use_store(SummaryStore.for_settings(settings) if enabled else None)
    ProjectIndex.fix_layout(True)  # no module file appears or disappears during the run
    try:
        yield
    finally:
        ProjectIndex.use_store(before)
        ProjectIndex.fix_layout(layout)

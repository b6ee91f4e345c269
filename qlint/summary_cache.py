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
import marshal
import os
import time
from collections.abc import Iterator
from pathlib import Path

from qlint import __version__, checksummed_files
from qlint.analysis.names.summary import ModuleSummary
from qlint.settings import Settings

_MAGIC = "qlint-summary-3"
_HEADER = b"qlint-summary-3\n"
# What the project scans learned about a root's modules (`qlint.analysis.scan_memo`).
_SCAN_MAGIC = "qlint-scan-1"
_SCAN_HEADER = b"qlint-scan-1\n"
# QL101/QL102's answers about other modules (`qlint.analysis.graphs.kept_answers`), one
# shard per file checked, in a folder of their own (its listing, when pruned, is theirs
# alone); 2: the shards (1 was one file, `helper.answers`).
_ANSWERS_MAGIC = "qlint-answers-2"
_ANSWERS_HEADER = b"qlint-answers-2\n"
_ANSWERS_DIR = "answers"
# Past this many shards, or bytes of them, the least recently used go (`prune_answers`):
# a shard is a few KB to a few hundred (torch's fx/experimental/symbolic_shapes.py: ~215).
_MAX_SHARDS = 2_000
_MAX_SHARD_BYTES = 64 << 20
_PRUNE_ONE_IN = 16  # of the shards made, one in this many looks whether to prune
_ANSWERS_TOUCHED = 86_400  # a shard read this many seconds after its last write is touched
# What a root's packaging files declare for setuptools (`qlint.analysis.names.package_map`);
# 2: `setup.py`, `setup.cfg` and the subdirectories' files are read too.
_DECLARED_MAGIC = "qlint-declared-2"
_DECLARED_HEADER = b"qlint-declared-2\n"


class SummaryStore:
    keeps_scans = True  # what project scans learn is kept too (`scan_memo`), for later runs

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._made = False

    @classmethod
    def for_settings(cls, settings: Settings) -> SummaryStore:
        from qlint.cache_keys import cache_dir_for, cache_key

        return cls(cache_dir_for(settings) / __version__ / f"{cache_key(settings)}.summaries")

    def _file(self, path: str) -> Path:
        return self.directory / checksummed_files.name_for(path, ".summary")

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
        self._write(self._file(path), _HEADER, payload)

    def _make_directory(self) -> None:
        if not self._made:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._made = True

    def _write(self, target: Path, header: bytes, payload: bytes) -> None:
        try:
            self._make_directory()
            checksummed_files.write(target, header, payload)
        except (OSError, ValueError):
            return

    def _scan_file(self, root: str) -> Path:
        return self.directory / checksummed_files.name_for(root, ".scan")

    def get_scan(self, root: str) -> dict | None:
        """What the project scans of an earlier run learned about the modules under `root`
        (`scan_memo`), or None."""
        payload = checksummed_files.read_marshalled(self._scan_file(root), _SCAN_HEADER)
        if not isinstance(payload, dict) or payload.get("magic") != _SCAN_MAGIC or payload.get("root") != root:
            return None
        return payload.get("scan") if isinstance(payload.get("scan"), dict) else None

    def put_scan(self, root: str, scan: dict) -> None:
        try:
            payload = marshal.dumps({"magic": _SCAN_MAGIC, "root": root, "scan": scan})
        except ValueError:
            return
        self._write(self._scan_file(root), _SCAN_HEADER, payload)

    def _answers_file(self, asker: str) -> Path:
        return self.directory / _ANSWERS_DIR / checksummed_files.name_for(asker, ".answers")

    def get_answers(self, asker: str) -> dict | None:
        """What earlier checks of the file `asker` found about other modules for the helper
        search (`kept_answers`). A shard read that was last written a day or more ago is
        touched: the oldest are pruned first (`prune_answers`), and this one is in use."""
        target = self._answers_file(asker)
        payload = checksummed_files.read_marshalled(target, _ANSWERS_HEADER)
        if not isinstance(payload, dict) or payload.get("magic") != _ANSWERS_MAGIC or payload.get("asker") != asker:
            return None
        answers = payload.get("answers")
        if not isinstance(answers, dict):
            return None
        with contextlib.suppress(OSError):
            if time.time() - os.stat(target).st_mtime > _ANSWERS_TOUCHED:
                os.utime(target)
        return answers

    def put_answers(self, asker: str, answers: dict) -> None:
        """`answers` as the shard of `asker`. Once in a while (`_PRUNE_ONE_IN` of the shards
        made), the oldest shards are pruned (`prune_answers`)."""
        try:
            payload = marshal.dumps({"magic": _ANSWERS_MAGIC, "asker": asker, "answers": answers})
        except ValueError:
            return
        target = self._answers_file(asker)
        made = not target.exists()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            checksummed_files.write(target, _ANSWERS_HEADER, payload)
        except (OSError, ValueError):
            return
        if made and os.urandom(1)[0] % _PRUNE_ONE_IN == 0:
            self.prune_answers()

    def prune_answers(self, most: int | None = None, most_bytes: int | None = None) -> None:
        """Past `most` shards or `most_bytes` together (files no longer checked, or no longer
        there), remove the least recently written or read until a quarter of the room is free
        again; and the one file of answers qlint kept before the shards, if it is there."""
        most = _MAX_SHARDS if most is None else most
        most_bytes = _MAX_SHARD_BYTES if most_bytes is None else most_bytes
        for old in ("helper.answers", "helper.answers.lock"):
            with contextlib.suppress(OSError):
                os.unlink(self.directory / old)
        shards = []
        try:
            with os.scandir(self.directory / _ANSWERS_DIR) as entries:
                for entry in entries:
                    if entry.name.endswith(".answers") and not entry.name.startswith("."):
                        with contextlib.suppress(OSError):
                            stat = entry.stat()
                            shards.append((stat.st_mtime, stat.st_size, entry.path))
        except OSError:
            return
        total = sum(size for _, size, _ in shards)
        if len(shards) <= most and total <= most_bytes:
            return
        shards.sort()
        count = len(shards)
        for _, size, path in shards:
            if count <= most * 3 // 4 and total <= most_bytes * 3 // 4:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
            count -= 1
            total -= size

    @contextlib.contextmanager
    def answers_lock(self, asker: str) -> Iterator[None]:
        """Held while one process reads the shard of `asker`, adds its own answers and writes
        it back: the workers of a run flush theirs as they exit, side by side, and two checks
        of one file (an editor's and pre-commit's) may end together. One lock file per
        sixteenth of the shards (by name), so that their number stays bounded. Where no lock
        can be taken (no `fcntl`, a directory not writable), none is: a merge may then drop
        another's."""
        try:
            import fcntl
        except ImportError:
            yield
            return
        folder = self.directory / _ANSWERS_DIR
        try:
            folder.mkdir(parents=True, exist_ok=True)
            stripe = checksummed_files.name_for(asker, "")[0]
            fd = os.open(folder / f".lock-{stripe}", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            yield
            return
        try:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing it releases the lock

    def _declared_file(self, root: str) -> Path:
        return self.directory / checksummed_files.name_for(root, ".declared")

    def get_declared(self, root: str, raw: bytes) -> tuple[tuple[str, str, bool], ...] | None:
        """The (package, directory, quiet when missing) read from `root`'s packaging files
        when their bytes were exactly `raw` (`packaging_files.store_key`), or None."""
        payload = checksummed_files.read_marshalled(self._declared_file(root), _DECLARED_HEADER)
        if not isinstance(payload, dict) or payload.get("magic") != _DECLARED_MAGIC:
            return None
        if payload.get("root") != root or payload.get("raw") != raw:
            return None
        pairs = payload.get("declared")
        if not isinstance(pairs, tuple) or not all(
            type(p) is tuple and len(p) == 3 and type(p[0]) is str and type(p[1]) is str and type(p[2]) is bool
            for p in pairs
        ):
            return None
        return pairs

    def put_declared(self, root: str, raw: bytes, pairs: tuple[tuple[str, str, bool], ...]) -> None:
        payload = marshal.dumps({"magic": _DECLARED_MAGIC, "root": root, "raw": raw, "declared": pairs})
        self._write(self._declared_file(root), _DECLARED_HEADER, payload)


class RunSummaries(SummaryStore):
    """The summaries the workers of one run without a cache (`--no-cache`) compute, for each
    other, in a directory of the run's own that goes with it. Each worker summarised the
    modules the files it checked import, and the two workers of a run over ExecuTorch both
    summarised ~190 of them (parsing each); a module one summarised, the other now reads.
    Nothing outlives the run, so what project scans learn is not written (`scan_memo`)."""

    keeps_scans = False


@contextlib.contextmanager
def summary_store(settings: Settings, enabled: bool, shared: bool = False, answers: bool = False) -> Iterator[None]:
    """While inside: every project index of this process (and of workers forked meanwhile)
    reads and writes module summaries in the store of `settings`; with `--no-cache`, in a
    store of the run's own where its workers share them (`shared`), or none.
    With `answers` (a check of one buffer, or a run that checks one file), QL101/QL102's
    answers about other modules too (`kept_answers`); without, a run over many files reads
    none and writes only the small tables (the one module found spelling a name, or
    subclassing a class), which the first edited check after it needs, in the shards of the
    files that asked; and the answers it asks by the thousand (the names the packet gate read,
    the helper search's without a wrapper-name index; torch: ~5,600, 2.2 MB), in one shard
    (`kept_state.RUN`) a check of one file decodes one module's answers at a time from."""
    from qlint.analysis import scan_memo
    from qlint.analysis.graphs import kept_answers, kept_shards
    from qlint.analysis.names import package_map
    from qlint.analysis.names.project import ProjectIndex

    before, layout = ProjectIndex.store, ProjectIndex.fixed_layout
    directory = None
    if enabled:
        store: SummaryStore | None = SummaryStore.for_settings(settings)
    elif shared:
        from qlint.run_scratch import run_directory

        directory = run_directory("qlint-run-summaries-")
        store = RunSummaries(Path(directory))
    else:
        store = None
    ProjectIndex.use_store(store)
    # Not in a store of the run's own (`RunSummaries`): nothing of it outlives the run.
    kept_answers.use(store if store is not None and store.keeps_scans else None, only_small=not answers)
    package_map.use_store(store if store is not None and store.keeps_scans else None)
    ProjectIndex.fix_layout(True)  # no module file appears or disappears during the run
    try:
        yield
    finally:
        scan_memo.flush()
        kept_shards.flush()
        kept_answers.use(None)
        package_map.use_store(None)
        ProjectIndex.use_store(before)
        ProjectIndex.fix_layout(layout)
        if directory is not None:
            import shutil

            shutil.rmtree(directory, ignore_errors=True)

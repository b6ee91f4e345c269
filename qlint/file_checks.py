"""How one process checks its files: one file checked (with what the results cache keeps of
it) or fixed in memory, the order a process takes its files in, and the collector's settings
while it checks. A run of one process does this itself (`runner._map`); a run with workers
does it in each of them (`worker_process.run_chunk`), which are sent these functions by
their qualified names."""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from qlint.results import FileResult, content_hash, display_path
from qlint.settings import Settings
from qlint.value_classes import value_class

if TYPE_CHECKING:
    from qlint.fix_session import FixedFile


@value_class
class FixReport:
    """What `qlint fix` did to one file; its texts are in the run's `FixSession`."""

    path: str
    applied: int
    changed: bool
    remaining: FileResult
    diff: str | None = None
    error: str | None = None  # the file could not be read, fixed or written: exit code 2
    notice: str | None = None  # left alone on purpose (edited meanwhile): not an error


def _traceback() -> str:
    """The current exception's last frames (imported on a crash only, not at every start)."""
    import traceback

    return traceback.format_exc(limit=-3)


def check_one(path: str, settings: Settings) -> tuple[FileResult, int, int, str]:
    """Stat before reading, so a file edited meanwhile is seen as changed next run."""
    return _checked_file(path, settings, for_cache=True)


def _checked_file(path: str, settings: Settings, for_cache: bool) -> tuple[FileResult, int, int, str]:
    """(result, size, mtime, digest) of `path`; without `for_cache` (a run without a results
    cache), neither stat'ed nor hashed: (result, 0, 0, "")."""
    try:
        st = os.stat(path) if for_cache else None
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        result = FileResult(path=path)
        result.errors.append(f"{display_path(path)}: cannot read: {exc.strerror or exc}")
        return result, 0, 0, ""
    # Imported on the first file to check: a run served from the cache needs no engine.
    from qlint.engine import check_source, checked_once
    from qlint.notebook import check_notebook, is_notebook

    try:
        result = check_notebook(data, path, settings) if is_notebook(path) else check_source(data, path, settings)
    except (Exception, RecursionError):  # the engine's own safety net failed: keep going
        result = FileResult(path=path)
        result.errors.append(f"{display_path(path)}: internal error:\n{_traceback()}")
        return result, 0, 0, ""
    finally:
        checked_once(path)
    if st is None:
        return result, 0, 0, ""
    return result, st.st_size, st.st_mtime_ns, content_hash(data)


def check_one_uncached(path: str, settings: Settings) -> tuple[FileResult, int, int, str]:
    """`check_one` for a run without a cache: the result's dependencies, read by the cache
    only, are not sent to the parent (thousands of paths and digests per result of a scan of
    the project); nor is the file stat'ed or hashed for a cache entry (ExecuTorch: 3,841 files,
    most of which no rule reads)."""
    result, size, mtime_ns, digest = _checked_file(path, settings, for_cache=False)
    result.dependencies = {}
    return result, size, mtime_ns, digest


@value_class(frozen=True)
class FixTask:
    """Fix one file in memory; the parent decides about writing (see `qlint.fix_session`)."""

    unsafe: bool

    def __call__(self, path: str, settings: Settings) -> tuple[FixReport, FixedFile | None]:
        from qlint.fix_session import FixedFile
        from qlint.fixes import fix_file
        from qlint.notebook import is_notebook

        if is_notebook(path):
            return self._notebook(path, settings)
        try:
            outcome = fix_file(path, settings, unsafe=self.unsafe, write=False)
        except (Exception, RecursionError):
            error = f"internal error while fixing:\n{_traceback()}"
            return FixReport(path, 0, False, FileResult(path=path), None, error), None
        # A fix that would not re-parse is reported, never written: count nothing as applied.
        changed = outcome.changed and outcome.error is None
        applied = outcome.applied if changed else 0
        report = FixReport(path, applied, changed, outcome.remaining, None, outcome.error)
        if not changed or outcome.data is None:
            return report, None
        return report, FixedFile(path, outcome.data, outcome.original, outcome.fixed, outcome.initial)

    def _notebook(self, path: str, settings: Settings) -> tuple[FixReport, FixedFile | None]:
        from qlint.fix_session import FixedFile
        from qlint.notebook import fix_notebook

        try:
            with open(path, "rb") as fh:
                raw = fh.read()
            nb = fix_notebook(raw, path, settings, self.unsafe)
        except (Exception, RecursionError):
            error = f"internal error while fixing:\n{_traceback()}"
            return FixReport(path, 0, False, FileResult(path=path), None, error), None
        changed = nb.changed and nb.error is None
        # Cell-by-cell diff (as ruff shows notebooks); the parent writes the JSON as any other file.
        diff = nb.diff(display_path(path)) if changed else None
        report = FixReport(path, nb.applied if changed else 0, changed, nb.remaining, diff, nb.error)
        return report, (FixedFile(path, raw, nb.original, nb.fixed) if changed else None)


def check_order(func: Callable[[str, Settings], Any], paths: list[str]) -> Iterator[str]:
    """Every path once, in the given order except that a file whose tree a module summary
    kept (`tree_handover`: a file checked meanwhile imports it) is checked right after, so
    it is parsed once and its tree is not held for long. Checks only: `qlint fix` rewrites
    files as it goes, and a file checked alone has nothing to share."""
    if func not in (check_one, check_one_uncached) or len(paths) < 2 or len(set(paths)) != len(paths):
        yield from paths
        return
    from qlint.analysis.names.tree_handover import HANDOVER

    named = {os.path.abspath(p): p for p in paths}
    remaining = dict.fromkeys(paths)
    HANDOVER.expect(named)
    try:
        while remaining:
            path = next((named[k] for k in HANDOVER.kept() if named.get(k) in remaining), None)
            if path is None:
                path = next(iter(remaining))
            del remaining[path]
            yield path
    finally:
        HANDOVER.expect(())


# Checking allocates millions of short-lived AST nodes: with the default thresholds the
# cyclic GC runs constantly and rescans the imported modules. Freezing what is loaded and
# collecting less often saves ~20% CPU for a bounded amount of extra garbage. The engine
# pauses the collector during each check, so a young collection runs between files, when
# the reference cycles a check left behind are unreachable: it frees them. A check leaves
# none (`tests/test_flow_teardown.py`, `ModuleScope.let_go`): what a young collection finds
# is what the run keeps on purpose (other modules' scopes and flows, the trees kept for the
# next checks), each object traversed once, at ~45% of its parse for a tree (ExecuTorch at
# 50,000: 12 collections, 1.2 million objects, 0.4 s of CPU, 2,900 objects freed). Rarely
# then: a run over ExecuTorch or the installed torch makes none. The older generations would
# only rescan (2 s of a 14 s run over ExecuTorch at (50_000, 20, 100)): at most every thousand
# young collections.
_GC_THRESHOLDS = (500_000, 1_000, 1_000)


def tune_gc() -> tuple[int, int, int]:
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*_GC_THRESHOLDS)
    return old


@contextlib.contextmanager
def gc_tuned(collect: bool = True) -> Iterator[None]:
    """`collect=False` (one file to check): no collection at all while inside. The collection
    a check's end triggers would only scan that file's garbage (5 ms after ExecuTorch's
    1,111-line vulkan/test/utils.py): what is left goes to the oldest generation with the
    rest, collected when a full collection runs, if ever in a command line's life."""
    old = tune_gc()
    was_enabled = gc.isenabled()
    if not collect:
        gc.disable()
    try:
        yield
    finally:
        # Survivors go straight to the oldest generation (two list splices): with the default
        # thresholds back, the next young collection would otherwise rescan all of them.
        gc.freeze()
        gc.set_threshold(*old)
        gc.unfreeze()
        if was_enabled:
            gc.enable()

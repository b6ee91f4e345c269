"""The content keys of a project's modules as a check sees them (`project_keys`: its project
index's buffers and stats), each recorded as a dependency of the check that asks: once per check
and root, shared by the scans that read the project (QL101, QL102, QL103, QL201), and once per
run while the run holds its files still. The listing they are read from is `project_files`'.
"""

from __future__ import annotations

import contextlib
import os

from qlint.analysis.project_files import buffers_under, disk_files, python_files, restore_listings, saved_listings
from qlint.analysis.recent_entries import RecentEntries


def project_keys(ctx, root: str, recursive: bool = True) -> dict[str, tuple | None]:
    """path -> content key of every module under `root` as the check of `ctx` sees them (its
    project index's buffers and stats), each recorded as a dependency of that check: once per
    check and root, shared by the scans that read the project (QL101, QL102, QL103, QL201)."""
    root = os.path.abspath(root)
    memo = ("module_keys.keys", root, recursive)
    known = ctx.cache.get(memo)
    if known is not None:
        return known
    project = ctx.project
    own = os.path.abspath(ctx.path)
    run = _held_still(project)
    kept = _RUN_KEYS.get((root, recursive)) if run is not None else None
    if kept is not None and kept[0] is run and kept[2] is not None:
        project.record_reads(ctx.path, [read for read in kept[2] if read[0] != own])
        ctx.cache[memo] = kept[1]
        return kept[1]
    keys = unrecorded_keys(ctx, root, recursive)
    last = _LAST_READS.get((root, recursive, own))
    if last is not None and last[0] == keys:
        reads = last[1]  # the same contents: the same digests (an editor's next check)
    elif not project.wants_dependencies:
        reads = []  # the run keeps no dependencies (`--no-cache`): nothing to hash them for
    else:
        # Whatever a module holds may decide the answer: a dependency of this check.
        digest = project.digest
        reads = [(path, digest(path, key)) for path, key in keys.items() if path != own]
        if project.track_dependents:  # a command-line run checks each file once: nothing to keep
            _LAST_READS[root, recursive, own] = (keys, reads)
    project.record_reads(ctx.path, reads)
    if run is not None:
        if own in keys and project.wants_dependencies:  # the checked file's digest too, for the checks of the others
            reads = [*reads, (own, project.digest(own, keys[own]))]
        _keep_run_keys(run, root, recursive, keys, reads)
    ctx.cache[memo] = keys
    return keys


def _keep_run_keys(run: dict, root: str, recursive: bool, keys: dict, reads: list | None) -> None:
    """`reads` None: the keys only, taken by a search that recorded none (`unrecorded_keys`)."""
    if len(_RUN_KEYS) >= _MAX_RUN_KEYS or any(kept[0] is not run for kept in _RUN_KEYS.values()):
        _RUN_KEYS.clear()  # another run's, or too many roots
    _RUN_KEYS[root, recursive] = (run, keys, reads)


def unrecorded_keys(ctx, root: str, recursive: bool = True) -> dict[str, tuple | None]:
    """`project_keys` recorded as no dependency of the check: for a search whose answer one
    module may decide (a module subclassing a class, one naming a method), whose caller
    records that module alone when it does, and `project_keys` when it does not (every
    module may then change the answer). A warm `qlint check FILE` validates what its result
    recorded: ExecuTorch's qualcomm/tests/utils.py stat'ed its 3,784 modules for an answer
    that test_qnn_delegate.py alone decides."""
    root = os.path.abspath(root)
    known = ctx.cache.get(("module_keys.keys", root, recursive))
    if known is not None:
        return known
    memo = ("module_keys.unrecorded", root, recursive)
    known = ctx.cache.get(memo)
    if known is None:
        run = _held_still(ctx.project)
        kept = _RUN_KEYS.get((root, recursive)) if run is not None else None
        if kept is not None and kept[0] is run:
            known = kept[1]
        else:
            known = _listed_keys(ctx.project, root, recursive)
            if run is not None:  # listed and stat'ed once per run, as `project_keys` is
                _keep_run_keys(run, root, recursive, known, None)
        ctx.cache[memo] = known
    return known


def _listed_keys(project, root: str, recursive: bool) -> dict[str, tuple | None]:
    consult(project, root)
    keys = _watched_keys(project, root, recursive)
    if keys is None:
        content_key = project.content_key
        # Listed: absolute and normalised.
        keys = {path: content_key(path, True) for path in python_files(root, project.overlay, recursive)}
    return keys


def consult(project, root: str) -> None:
    """What earlier runs kept about the modules under `root` (absolute), and its listings, in
    use for the scans of this process (`scan_memo.use_root`), without listing the project."""
    # Imported by the first scan: a run the results cache answers reads no module.
    from qlint.analysis import scan_memo

    listed = scan_memo.use_root(root, project.store, lambda: saved_listings(root))
    if listed is not None:
        with contextlib.suppress(TypeError, ValueError, AttributeError):  # a damaged file: ignored
            restore_listings(root, listed)


def _watched_keys(project, root: str, recursive: bool) -> dict[str, tuple | None] | None:
    """`project_keys` from the listing and keys an editor's file watcher vouches for
    (`ProjectIndex.watched`; None without one, or where it does not see): stat'ing torch's
    2,300 modules and 600 directories at each keystroke is what its events make needless."""
    watched = getattr(project, "watched", None)
    if watched is None:
        return None
    disk = watched.keys_under(root, recursive)
    if disk is None:
        links: list[str] = []
        listed = sorted(disk_files(root, recursive, links=links))
        if not watched.keep_listing(root, recursive, (listed, frozenset(listed)), links):
            return None
        disk = watched.keys_under(root, recursive)
    buffers = buffers_under(root, project.overlay, recursive)
    if not buffers:
        return disk
    keys = dict(disk)
    for path in buffers:
        keys[path] = ("overlay", hash(project.overlay[path]))
    if len(keys) != len(disk):  # a buffer with no file on disk yet: in the listing's order
        keys = {path: keys[path] for path in sorted(keys)}
    return keys


# (root, recursive) -> (the run's content keys, the keys `project_keys` took, the digests of
# all of them, None until a check records them): while a check run holds files still
# (`_held_still`), every check that scans the project sees the same listing and contents, and
# listing and stat'ing ExecuTorch's 3,800 modules again for each of the ~50 checks that search
# it cost ~1 s of a cold run.
_RUN_KEYS: dict[tuple[str, bool], tuple[dict, dict, list | None]] = {}
_MAX_RUN_KEYS = 8


def _held_still(project) -> dict | None:
    """The content keys of the run in progress when no file changes during it (`qlint check`
    over a tree: `ProjectIndex.contents_fixed` and `fixed_layout`), None otherwise (the
    language server, `qlint fix`, an unsaved buffer)."""
    cls = type(project)
    if getattr(cls, "fixed_content", False) and getattr(cls, "fixed_layout", False) and not project.overlay:
        return cls.run_keys
    return None


# (root, recursive, checked file) -> (the content keys `project_keys` took, the digests it
# recorded): the last of each for the few files an editor checks again and again.
_LAST_READS: RecentEntries[tuple[str, bool, str], tuple[dict, list]] = RecentEntries(8)

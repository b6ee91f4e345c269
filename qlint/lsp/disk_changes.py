"""Files and folders that change outside the editor's buffers: the open buffers whose last
check read them are checked again (`recheck_due`), and the client's file watcher stands in for
the stat of each file a check reads."""

from __future__ import annotations

import os

from pygls.uris import to_fs_path

from qlint.analysis import run_roots
from qlint.analysis.names import shadowed_names
from qlint.analysis.names.packaging_files import PACKAGING_NAMES
from qlint.analysis.project_files import LISTING_PREFIX, parse_listing_dependency
from qlint.config import CONFIG_NAMES
from qlint.lsp.scheduler import LATER


class DiskChanges:
    """Mixed into `QlintLanguageServer` (uses its `checker`, `project`, `open`, `checked`,
    `schedule`, `workspace`)."""

    def watching_started(self) -> None:
        """The client watches the workspace folders for us (`workspace/didChangeWatchedFiles`
        registered): from the next check on, what a check reads of the files there is kept
        until an event names them (`ProjectIndex.watch`), instead of stat'ed at each check."""
        self.watch_roots = self.workspace_roots()
        self.checker.submit(self.project.watch, self.watch_roots)

    def folders_changed(self) -> None:
        """Workspace folders added or removed: they stand in for the project root of a file
        with no marker above it (`run_roots`), which decides how its imports resolve and how
        far the scans for a helper's callers reach, so every open buffer is checked again
        under the new roots. The watcher's roots follow at the next check."""
        self.checker.submit(run_roots.use_directories, self.workspace_roots())
        for uri in list(self.open):
            self.schedule(uri, LATER, notify_dependents=False)

    def workspace_roots(self) -> tuple[str, ...]:
        folders = [to_fs_path(f.uri) for f in self.workspace.folders.values()]
        roots = [p for p in (*folders, self.workspace.root_path) if p]
        return tuple(sorted({os.path.abspath(p) for p in roots}))

    def files_changed(self, changes: list[tuple[str, int]]) -> None:
        """Files changed on disk outside the editor (a `git checkout`), with the watcher's
        `FileChangeType`s: what the project index kept of them goes, and the open buffers
        whose last check read them, or scanned a directory they were created in or deleted
        from, are checked again; a config or packaging file changed: all of them."""
        changes = [(os.path.abspath(p), int(kind)) for p, kind in changes]
        names = {os.path.basename(p) for p, _ in changes}
        # On the checker thread: between two checks, never half-way through one.
        self.checker.submit(self.project.files_changed, changes)
        if names & set(PACKAGING_NAMES):  # they decide project roots and import roots
            self.checker.submit(run_roots.forget_layout)
        if names & {*CONFIG_NAMES, *PACKAGING_NAMES}:
            for uri in list(self.open):
                self.schedule(uri, LATER, notify_dependents=False)
            return
        open_paths = set(self.open.values())
        changed = {p for p, _ in changes} - open_paths  # an open buffer is the truth
        for uri, state in list(self.checked.items()):
            if recheck_due(changed, state.dependencies):
                self.schedule(uri, LATER, notify_dependents=False)


def recheck_due(changed: set[str], dependencies: frozenset[str]) -> bool:
    """Whether a check that read `dependencies` may answer otherwise now that `changed`
    (absolute paths: files, or directories with all they held) changed: it read one of them,
    or a file under a changed directory, or scanned a directory one was created in or deleted
    from (`project_files.listing_dependency`)."""
    if not changed:
        return False
    if changed & dependencies:
        return True
    inside = tuple(p + os.sep for p in changed)
    for dep in dependencies:
        if dep.startswith(inside):
            return True
        if dep.endswith(os.sep) and any(p.startswith(dep) for p in changed):
            return True  # a directory read as absent (`import_paths.tried_before`) now holds one
        if dep.startswith(shadowed_names.PREFIX) and shadowed_names.changed_under(dep, changed):
            return True  # a module named as a standard or installed one, made or removed
        listing = parse_listing_dependency(dep) if dep.startswith(LISTING_PREFIX) else None
        if listing is not None:
            root = listing[0] + os.sep
            for p in changed:
                if root.startswith(p + os.sep) or (p.startswith(root) and (listing[1] or os.sep not in p[len(root) :])):
                    return True
    return False

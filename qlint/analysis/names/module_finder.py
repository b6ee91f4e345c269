"""Where another module of the project is: the file `import module` from a requester finds,
asked for by the project index (`project.ProjectIndex`) and the readers it serves.

A check asks for the same (module, requesting directory) many times, each a few `stat`s per
place the module may live in: the answers are kept for the check, or for the whole run while
its files stay put (the run settings' `fixed_layout`). An editor's finder keeps them across
checks while the directories deciding them are unchanged (`kept_lookups`), or while its file
watcher sees every path a lookup looked at (`watched_files`).
"""

from __future__ import annotations

import os

from qlint.analysis.names import layout_lookups
from qlint.analysis.names.import_paths import module_bases, module_files, resolved
from qlint.analysis.names.kept_lookups import KeptLookups
from qlint.analysis.repo_root import same_repository

__all__ = ["ModuleFinder"]


class ModuleFinder:
    def __init__(self, editor, settings: type, keep_across_checks: bool):
        # The editor's buffers count as files; its watcher, once it has one, vouches for paths.
        self._editor = editor
        # Whose run settings hold (`fixed_layout`, `layouts`): read at each ask, a run sets them.
        self._settings = settings
        self.found: dict[tuple[str, str], str | None] = {}  # (module, requester's directory) -> path
        self._dirs: dict[str, str] = {}  # requester -> its absolute directory, per check
        # An editor's finder keeps where modules were found across checks, while the
        # directories that decide it are unchanged (`kept_lookups`).
        self.kept = KeptLookups() if keep_across_checks else None

    def begin_check(self) -> None:
        """A new check: what was found for the last one may be stale, unless the layout is
        fixed for the run (then `forget` clears it when the run ends)."""
        self._dirs.clear()
        if not self._settings.fixed_layout:
            self.found.clear()
            if self.kept is not None:
                self.kept.begin_check()

    def forget(self) -> None:
        """A file appeared or went (an editor's event, a new run): the answers kept for this
        check or run go."""
        self.found.clear()

    def buffers_changed(self) -> None:
        """A buffer counts as a file where none was, or no longer: lookups kept across checks
        may find another file now (the watcher's kept ones go with it, `EditorOverlay`)."""
        if self.kept is not None:
            self.kept.clear()

    def find(self, module: str, requester: str, probed: list[str] | None = None) -> str | None:
        """The file of `module` imported from `requester` (None: not in the project). With
        `probed`, every path looked at is added to it."""
        # `module_bases`: the file's package root first, then namespace-package roots and
        # directories `pyproject.toml` maps (ExecuTorch's `executorch` is the checkout itself).
        buffers = self._editor.buffers
        if self._settings.fixed_layout and probed is None and not buffers:
            return layout_lookups.find(module, requester, self._settings.layouts)  # the same, once per run
        for base in module_bases(module, requester):
            for candidate in module_files(base):
                if probed is not None:
                    probed.append(candidate)
                if candidate in buffers or os.path.isfile(candidate):
                    # Through a symbolic link (`src/executorch/backends -> ../../backends`): the
                    # module is the file the link points to, the one checked and edited.
                    real = candidate if candidate in buffers else resolved(candidate)
                    if probed is not None and real != candidate:
                        probed.append(real)  # behind a link: what the watcher sees of it decides
                    # A rollout checks several checkouts side by side: a package chain that
                    # climbs out of one repository must not resolve into its neighbour.
                    return real if same_repository(real, requester) else None
        return None

    def in_check(self, module: str, requester: str) -> str | None:
        """`find`, asked once per check for files of one directory (the rules of a check look
        for the same modules, each a few `stat`s)."""
        directory = self._dirs.get(requester)
        if directory is None:  # a relative requester is absolute from the cwd of this check
            directory = self._dirs[requester] = os.path.dirname(os.path.abspath(requester))
        key = (module, directory)
        found = self.found
        if key not in found:
            watched, kept = self._editor.watched, self.kept
            if watched is not None and key in watched.found:
                found[key] = watched.found[key]
            else:
                # With a watcher: the paths a lookup looks at, to keep its answer until an
                # event (`watched_files`) where the watcher sees them all.
                probed: list[str] | None = [] if watched is not None else None

                def lookup(module: str, requester: str) -> str | None:
                    return self.find(module, requester, probed)

                if kept is None or self._settings.fixed_layout:
                    answer = found[key] = lookup(module, requester)
                else:
                    answer = found[key] = kept.find(key, module, requester, lookup)
                if probed and watched.covers_all(probed):  # looked up now, nothing out of its sight
                    watched.found[key] = answer
        return found[key]

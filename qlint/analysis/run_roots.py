"""The directories a run was asked about, standing in for the project root of a file that has
none (no `.git`, no `pyproject.toml`, `setup.py` or `setup.cfg` above it): an unpacked archive
or a copy of a tree checked from its top, `qlint check .`, as a user of ruff or pyright would
(both take the directory they run in as the project's when no marker says otherwise). The
file is then checked as in a checkout with `.git` there: its imports resolve through the
packaging the root declares (EVT's `benchmark/` scripts import `gtl`, which `python/setup.py`
installs from `python/`), and the project scans (a helper's callers) reach the whole tree.

The CLI names the directories on its command line, or the working directory when it is handed
files or nothing; the language server its workspace folders. The filesystem root, the home
directory and installed trees (`site-packages`) are never a project's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from qlint.analysis.names.shadowed_names import INSTALL_DIRS

_ROOTS: list[tuple[str, ...]] = [()]
_PATHS: list[tuple[str, ...]] = [()]  # as asked about: files among them too


def use(paths: Iterable[str], cwd: str | None = None) -> None:
    """Take the run's directories from its `paths` (the command line's; `cwd` for the files
    among them, and when there are none)."""
    paths = [os.path.abspath(p) for p in paths]
    roots = [p for p in paths if os.path.isdir(p)]
    if len(roots) < len(paths) or not paths:
        roots.append(os.path.abspath(cwd if cwd is not None else os.getcwd()))
    use_directories(roots)
    _PATHS[0] = tuple(paths) or _ROOTS[0]


def use_directories(directories: Iterable[str]) -> None:
    """Take `directories` (absolute: workspace folders) as the run's."""
    never = {os.path.abspath(os.sep), os.path.expanduser("~")}
    kept = tuple(sorted({os.path.abspath(d) for d in directories} - never, key=len))
    _PATHS[0] = kept
    if kept != _ROOTS[0]:
        _ROOTS[0] = kept
        forget_layout()


def forget_layout() -> None:
    """The run's directories or a project's packaging files changed: what was found through
    them (project roots, import roots, installed module names) may not hold. A module not
    imported yet remembers nothing, and a run the results cache answers imports neither (nor
    any of the analysis)."""
    for name in ("qlint.analysis.names.import_paths", "qlint.analysis.names.package_map"):
        module = sys.modules.get(name)
        if module is not None:
            module.forget_roots()


def paths() -> tuple[str, ...]:
    """What the run was asked about (absolute): the command line's paths, the workspace folders."""
    return _PATHS[0]


def root_for(directory: str) -> str | None:
    """The outermost of the run's directories holding `directory` (absolute), if any."""
    for root in _ROOTS[0]:
        if directory == root or directory.startswith(root.rstrip(os.sep) + os.sep):
            return None if INSTALL_DIRS.intersection(directory.split(os.sep)) else root
    return None


__all__ = ["forget_layout", "paths", "root_for", "use", "use_directories"]

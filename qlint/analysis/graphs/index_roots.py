"""The root a file's wrapper-name index covers (`wrapper_index`): the directory whose listing
holds every module the helper search can resolve from the file (its repository, or the
`pyproject.toml` directory, or its import root), or None where no listing can vouch for
that (an installed package, whose import root is all of site-packages; a file in a directory
the listing skips).

The same root decides how deep the helper search follows wrapper chains
(`wrapper_chains.CHAIN_LINKS`) in every kind of run: a tree run that made the index, a run
of a few files, `qlint check FILE`, an editor's buffer. Kept apart from `wrapper_index` so
that the search asks it without importing the index's machinery.
"""

from __future__ import annotations

import os

from qlint.analysis.names.import_paths import install_dir
from qlint.analysis.names.modules import import_root
from qlint.analysis.names.package_map import project_root
from qlint.analysis.skipped_dirs import SKIP_DIRS


def root_for(path: str) -> str | None:
    """The root of the module at `path`, or None (see the module's docstring)."""
    # Asked twice per file (QL101's and QL102's import triggers): by the path as given first,
    # which names the same file while the working directory stays (`_ROOT_CWD`).
    global _ROOT_CWD
    if not os.path.isabs(path):
        cwd = os.getcwd()
        if cwd != _ROOT_CWD:
            _ROOT_CWD = cwd
            _PATH_ROOTS.clear()
    known = _PATH_ROOTS.get(path, "")
    if known != "":
        return known
    if len(_PATH_ROOTS) > 100_000:
        _PATH_ROOTS.clear()
    root = _PATH_ROOTS[path] = _directory_root(path)
    return root


_PATH_ROOTS: dict[str, str | None] = {}
_ROOT_CWD: str | None = None
_ROOTS: dict[str, str | None] = {}  # directory -> its root


def _directory_root(path: str) -> str | None:
    directory = os.path.dirname(os.path.abspath(path))
    known = _ROOTS.get(directory, "")
    if known != "":
        return known
    first = import_root(path)
    root: str | None = first
    if install_dir(first) is not None:
        root = None  # an installed package: its import root is all of site-packages
    else:
        repo = project_root(directory)
        if repo is not None and os.path.commonpath([repo, first]) == repo:
            root = repo
        inside = os.path.relpath(directory, root)
        if any(part in SKIP_DIRS or part.startswith(".") for part in inside.split(os.sep) if part != "."):
            root = None  # its neighbours are not listed
    _ROOTS[directory] = root
    return root

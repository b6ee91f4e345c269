"""Which repository holds a path: the nearest directory with a `.git` entry.

A `.git` file counts as much as a directory (worktrees and submodules have one), so a
submodule is its own repository. Standard library only: the project index (analysis) and
the CLI's per-repository grouping both ask, and neither may pull the other in.
"""

from __future__ import annotations

import os
from functools import lru_cache


@lru_cache(maxsize=8192)
def _root_of_directory(directory: str) -> str | None:
    if os.path.exists(os.path.join(directory, ".git")):
        return directory
    parent = os.path.dirname(directory)
    if parent == directory:
        return None
    return _root_of_directory(parent)


def repository_root(path: str) -> str | None:
    """The repository's top directory (absolute), or None outside any repository."""
    path = os.path.abspath(path)
    directory = path if os.path.isdir(path) else os.path.dirname(path)
    return _root_of_directory(directory)


def file_repository(path: str) -> str | None:
    """`repository_root` of an absolute path to a file, which may not exist: no `stat` of it."""
    return _root_of_directory(os.path.dirname(path))


def same_repository(a: str, b: str) -> bool:
    """True when both paths sit in one repository, or both in none."""
    return repository_root(a) == repository_root(b)

"""The Python files of a project directory as a check sees them: on disk and in unsaved buffers.

Scans that read the whole project (QL101's packet scan, QL102's consumers, QL103's convert
calls, QL201's callers) list the same files, so they skip the same directories."""

from __future__ import annotations

import os
from collections.abc import Iterable

# Directories that hold no project source: version control, caches, environments, builds.
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".tox", ".venv", "venv", "build", "dist"})


def python_files(root: str, overlay: Iterable[str] = (), recursive: bool = True) -> list[str]:
    """Absolute paths of the `.py` files under `root` (only its own files unless `recursive`),
    with the open buffers (`overlay` paths) under it, sorted."""
    root = os.path.abspath(root)
    files: set[str] = set()
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")] if recursive else []
        files.update(os.path.join(directory, n) for n in names if n.endswith(".py"))
    inside = root + os.sep
    files.update(
        p
        for p in overlay
        if p.endswith(".py") and p.startswith(inside) and (recursive or os.sep not in p[len(inside) :])
    )
    return sorted(files)

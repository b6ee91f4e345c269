"""The directories a project listing never walks into: version control, caches, environments,
builds (and any whose name starts with a dot). Apart from `project_files`, which lists, so that
the stores keeping listings (`scan_memo`) can tell a skipped name from a missing one without
importing the lister."""

from __future__ import annotations

SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".tox", ".venv", "venv", "build", "dist"})


def walked(name: str) -> bool:
    """Whether a listing walks into (and so names) a directory called `name`."""
    return name not in SKIP_DIRS and not name.startswith(".")

"""The settings one file is checked with: the config nearest it, not above its repository's
top, or the defaults anchored there (`qlint.repos` gives the why). Kept apart from the
repositories' grouping so a one-file check (a buffer, flake8) imports only this."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from qlint.analysis.repo_root import repository_root
from qlint.config import find_config, settings_from_file
from qlint.settings import Settings


def config_for(start: Path, repo_root: str | None) -> Path | None:
    """The nearest config above `start`, not above `repo_root` (see the module docstring)."""
    found = find_config(start)
    if found is None or repo_root is None:
        return found
    inside = os.path.commonpath([str(found.parent.resolve()), os.path.realpath(repo_root)])
    return found if inside == os.path.realpath(repo_root) else None


def defaults_at(git_root: str | None) -> Settings:
    # No config: globs and the cache are anchored at the repository's top (cwd outside one).
    return Settings(root=Path(git_root).resolve() if git_root else Path.cwd().resolve())


def settings_for_path(path: str) -> Settings:
    """The settings one file is checked with when a tool hands over single files (flake8,
    the lintrunner reporter's whole-file fixes, a buffer's `--stdin-filename`): the same rule
    as `group_paths`."""
    absolute = os.path.abspath(path)
    git_root = repository_root(absolute)
    return _settings_of(config_for(Path(os.path.dirname(absolute)), git_root), git_root)


@lru_cache(maxsize=64)
def _settings_of(config_path: Path | None, git_root: str | None) -> Settings:
    return settings_from_file(config_path) if config_path is not None else defaults_at(git_root)

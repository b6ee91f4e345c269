"""PATH arguments → repositories, each with its own settings (a rollout over several checkouts).

A path belongs to the repository that holds it: the nearest directory with a `.git` entry
(directory or file, so worktrees and submodules count). Its settings come from the config
nearest the path, as in ruff (`qlint.toml` before `pyproject.toml` with `[tool.qlint]`, the
closest directory wins, and a config's directory anchors its globs), with one difference
on purpose: the search stops at the repository's top directory. Ruff would keep climbing,
so a checkout cloned into a workspace that has its own `pyproject.toml` would inherit the
workspace's settings; in a rollout each repository must be judged by its own. Outside any
repository the search is unbounded, as before. `--config FILE` applies to every path.

Outside any repository, the unit is the config's directory, else the working directory
for paths below it, else the named directory itself. The repository's name (for reports,
`<name>.patch`, `<name>.md`) is its directory's name;
two repositories with the same name get the parent directory's name prepended.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from qlint.analysis.repo_root import repository_root
from qlint.config import Overrides, apply_overrides, settings_from_file
from qlint.file_settings import config_for, defaults_at
from qlint.settings import Settings
from qlint.value_classes import field, value_class


@value_class
class Repository:
    name: str
    root: Path  # the repository's top directory (or the config's, or cwd, outside one)
    settings: Settings
    paths: list[str] = field(default_factory=list)  # the arguments that belong to it
    is_git: bool = False

    def relative(self, path: str) -> str:
        """`path` relative to the repository's top, with `/`: what patches and baselines use."""
        rel = os.path.relpath(os.path.abspath(path), self.root)
        return rel.replace(os.sep, "/")


def group_paths(
    paths: Sequence[str], config: str | os.PathLike | None = None, overrides: Overrides | None = None
) -> list[Repository]:
    """One `Repository` per (repository, config) the arguments fall into, in argument order.

    Raises `ConfigError` for a broken config, as `load_settings` does.
    """
    overrides = overrides or Overrides()
    explicit = None
    if config is not None:
        from qlint.config import load_settings

        explicit = load_settings((), config=config, overrides=overrides)
    groups: dict[tuple[str, str], Repository] = {}
    loaded: dict[Path | None, Settings] = {}
    for arg in paths or (".",):
        absolute = os.path.abspath(arg)
        start = Path(absolute if os.path.isdir(absolute) else os.path.dirname(absolute))
        git_root = repository_root(absolute)
        if explicit is not None:
            config_path, settings = explicit.config_path, explicit
        else:
            config_path = config_for(start, git_root)
            if config_path not in loaded:
                base = settings_from_file(config_path) if config_path is not None else defaults_at(git_root)
                loaded[config_path] = apply_overrides(base, overrides)
            settings = loaded[config_path]
        root = Path(git_root) if git_root else _loose_root(absolute, settings, config_path)
        key = (str(root), str(config_path))
        if key not in groups:
            groups[key] = Repository(root.name or str(root), root, settings, [], git_root is not None)
        groups[key].paths.append(arg)
    repos = _without_overlaps(list(groups.values()))
    _unique_names(repos)
    return repos


def _without_overlaps(repos: list[Repository]) -> list[Repository]:
    """`qlint check repo repo/sub` where `repo/sub` has a config of its own: the walk of `repo`
    already covers `repo/sub`, so that argument joins `repo`'s group (one check per file,
    with the settings the walk uses) instead of being checked twice."""
    dirs = [(os.path.abspath(p), r) for r in repos for p in r.paths if os.path.isdir(p)]
    for repo in repos:
        for arg in list(repo.paths):
            absolute = os.path.abspath(arg)
            for directory, owner in dirs:
                inside = absolute.startswith(directory.rstrip(os.sep) + os.sep)
                if owner is not repo and owner.root == repo.root and inside:
                    repo.paths.remove(arg)
                    owner.paths.append(arg)
                    break
    return [r for r in repos if r.paths]


def _loose_root(absolute: str, settings: Settings, config_path: Path | None) -> Path:
    """Outside any repository: the config's directory, else the working directory for paths
    below it, else the argument itself (an installed package tree named on the command
    line is a unit of its own, with patch paths relative to it)."""
    if config_path is not None:
        return settings.root
    cwd = os.getcwd()
    if absolute == cwd or absolute.startswith(cwd.rstrip(os.sep) + os.sep):
        return Path(cwd)
    return Path(absolute if os.path.isdir(absolute) else os.path.dirname(absolute))


def _unique_names(repos: list[Repository]) -> None:
    seen: dict[str, int] = {}
    for repo in repos:
        seen[repo.name] = seen.get(repo.name, 0) + 1
    for repo in repos:
        if seen[repo.name] > 1:
            repo.name = f"{repo.root.parent.name}-{repo.name}" if repo.root.parent.name else repo.name
    taken: set[str] = set()
    for repo in repos:  # still equal (same parent name too): number them
        name, n = repo.name, 2
        while name in taken:
            name, n = f"{repo.name}-{n}", n + 1
        repo.name = name
        taken.add(name)

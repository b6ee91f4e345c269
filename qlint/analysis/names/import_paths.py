"""Where a module named in a file of a repository may live in that repository.

The chain of `__init__.py` above the file (`modules.import_root`) is the first place, and
for most packages the only one. Three layouts need more, and users run qlint from the root
of such checkouts:

- directories without `__init__.py` (namespace packages, test trees run by pytest from the
  repository root): `from tests.quant.helpers import f` in `tests/quant/test_x.py` imports
  from the repository root, or from any directory between it and the file;
- a package mapped onto another directory by `pyproject.toml`: ExecuTorch declares
  `[tool.setuptools.package-dir] executorch = "src/executorch"`, and `src/executorch/backends`
  is a symbolic link to the top-level `backends/`, so `executorch.backends.x` is `backends/x/`
  of the checkout (`[tool.setuptools.packages.find] where = ["src"]` and a `""` entry name
  plain roots);
- a package installed from a directory a setup script names (EVT's `python/setup.py`,
  `package_dir={"": "."}`): `setup.py` and `setup.cfg` are read as `pyproject.toml` is, at
  the project root and in the directories right below it (`packaging_files`); a tree with no
  marker at all takes the run's directory as its project root (`run_roots`);
- a checkout whose directory carries the package's name (`executorch/backends/x/`, no
  `executorch/__init__.py`): its parent directory imports it as a namespace package.

Only directories inside the requester's repository count: a neighbouring checkout in a
rollout is another project. Read once per repository (and per directory) and cached.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import lru_cache

from qlint.analysis.names.modules import import_root
from qlint.analysis.names.package_map import declared_packages, project_root

_INSTALL_DIRS = frozenset({"site-packages", "dist-packages"})


def module_bases(module: str, requester: str) -> Iterator[str]:
    """Paths without extension (`<dir>/a/b` for `a.b`) to try, most specific first."""
    parts = module.split(".")
    for root in module_roots(requester):
        base = base_in(root, parts)
        if base is not None:
            yield base


def module_roots(requester: str) -> tuple[tuple[str, str], ...]:
    """(package prefix or "" for any module, directory) pairs a module imported by
    `requester` is looked for under, most specific first (`base_in` makes the paths)."""
    return _roots(os.path.dirname(os.path.abspath(requester)))


def base_in(root: tuple[str, str], parts: list[str]) -> str | None:
    """The path without extension of the module of dotted `parts` under one of
    `module_roots` (None: a root for another package)."""
    prefix, directory = root
    if not prefix:
        return os.path.join(directory, *parts)
    if parts[0] == prefix:
        return os.path.join(directory, *parts[1:]) if len(parts) > 1 else directory
    # A subpackage mapped onto a directory of its own (`package_dir_keys`: `executorch.backends`);
    # asked of every root an import's first part misses, so a plain prefix is passed over first.
    if "." in prefix:
        head = prefix.split(".")
        if parts[: len(head)] == head:
            return os.path.join(directory, *parts[len(head) :])
    return None


@lru_cache(maxsize=4096)
def _roots(directory: str) -> tuple[tuple[str, str], ...]:
    """(package prefix or "" for any module, directory) pairs for files of `directory`."""
    first = import_root(os.path.join(directory, "_.py"))
    roots: list[tuple[str, str]] = [("", first)]
    installed = install_dir(first)
    if installed is not None:
        # An installed tree is no checkout, even inside one (pyenv is a git clone): climbing
        # from site-packages would reach the standard library, and climbing to it from the
        # namespace directories of installed examples doubled the cost on ExecuTorch's wheel.
        # Its own top-level package resolves from anywhere inside it, namespace directories
        # included (`executorch/` of the wheel has no `__init__.py`: `executorch.backends.x`).
        top = os.path.relpath(first, installed).split(os.sep)[0]
        if first != installed and top.isidentifier():
            roots.append((top, os.path.join(installed, top)))
        return tuple(roots)
    repo = project_root(directory)
    if repo is None or os.path.commonpath([repo, first]) != repo:
        return tuple(roots)
    roots += [("", d) for d in _ancestors(first, repo)]
    for entry in declared_packages(repo):
        if entry not in roots:
            roots.append(entry)
    # The src layout (`src/<package>/`, tests beside `src/`): what setuptools' automatic
    # discovery, hatchling, uv_build, flit and pdm install without being told, so a test
    # module's `import <package>` is the checkout's `src/<package>` even when `pyproject.toml`
    # declares no `where` (timmx's tests call its PT2E helpers so).
    src = os.path.join(repo, "src")
    if ("", src) not in roots and os.path.isdir(src) and not os.path.isfile(os.path.join(src, "__init__.py")):
        roots.append(("", src))
    name = os.path.basename(repo)
    if name.isidentifier() and not os.path.isfile(os.path.join(repo, "__init__.py")):
        roots.append((name, repo))
    return tuple(roots)


def forget_roots() -> None:
    """The run's directories or the packaging files changed (`run_roots.forget_layout`): the
    roots found before may not hold."""
    _roots.cache_clear()
    resolved.cache_clear()


def _ancestors(start: str, top: str) -> list[str]:
    """Directories above `start` up to `top` (inclusive; `top` is an ancestor of `start`)."""
    found = []
    while start != top:
        start = os.path.dirname(start)
        found.append(start)
    return found


def install_dir(directory: str) -> str | None:
    """The `site-packages` (or `dist-packages`) directory `directory` is, or lies in, if any."""
    parts = directory.split(os.sep)
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in _INSTALL_DIRS:
            return os.sep.join(parts[: i + 1]) or os.sep
    return None


@lru_cache(maxsize=8192)
def resolved(path: str) -> str:
    """`path` with symbolic links inside its repository followed, spelled from the same
    repository root (`/tmp/x` stays `/tmp/x` where `/tmp` itself is a link)."""
    repo = project_root(path)
    real = os.path.realpath(path)
    if repo is None or real == path:
        return path
    real_repo = os.path.realpath(repo)
    if os.path.commonpath([real_repo, real]) != real_repo:
        return real  # a link out of the repository: the caller's same-repository check decides
    return os.path.join(repo, os.path.relpath(real, real_repo))


__all__ = ["base_in", "forget_roots", "install_dir", "module_bases", "module_roots", "resolved"]

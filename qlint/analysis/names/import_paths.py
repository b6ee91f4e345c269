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
- a checkout whose root holds a package's layout (`package_map.root_packages`): its directory
  carries the package's name (`executorch/backends/x/`, no `executorch/__init__.py`: its
  parent directory imports it as a namespace package), or the packaging maps that package's
  subpackages onto the root's directories of the same paths (ExecuTorch's links, or its old
  `setup.py`'s `package_dir`), so `executorch.examples.qualcomm.utils` is the checkout's own
  `examples/qualcomm/utils.py` even where no link or key names `examples/qualcomm`;
- a package directory whose modules are also run as scripts (`python pkg/run.py` puts `pkg/`
  first on `sys.path`): `from core import x` in `pkg/run.py` is `pkg/core.py` when nothing
  else can be (`SCRIPT_DIR`, the last root).

Only directories inside the requester's repository count: a neighbouring checkout in a
rollout is another project. Read once per repository (and per directory) and cached.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from functools import lru_cache

from qlint.analysis.names import shadowed_names
from qlint.analysis.names.modules import import_root
from qlint.analysis.names.package_map import declared_packages, project_root, root_packages
from qlint.analysis.names.shadowed_names import INSTALL_DIRS, site_dirs, standard_or_installed
from qlint.analysis.repo_root import file_repository

# The prefix of the root that is the requester's own directory, where that is a package's:
# the script directory `python pkg/run.py` puts first on `sys.path`. It is the last root, and
# holds only modules whose first part is neither the standard library's nor installed: run as
# a package module, `from core import x` finds the project's top-level `core` (an earlier
# root), an installed `core` or a standard one, and fails where there is none, so the sibling
# `pkg/core.py` is the one module it can name. Run as a script it is `pkg/core.py` too, but
# for a standard or installed name the two runs differ, and the package's is taken.
SCRIPT_DIR = "."


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
    if prefix == SCRIPT_DIR:
        return None if standard_or_installed(parts[0]) else os.path.join(directory, *parts)
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
        if directory != first:  # a package's directory: also a script's (`SCRIPT_DIR`)
            roots.append((SCRIPT_DIR, directory))
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
    # The root as a package whose layout it holds (`package_map.root_packages`): after the
    # declared directories and `src/`, which are what that package installs where they hold
    # the module, before the installed package, which is another version's code.
    for name in root_packages(repo):
        if (name, repo) not in roots:
            roots.append((name, repo))
    if directory != first:  # a package's directory: also a script's (`SCRIPT_DIR`)
        roots.append((SCRIPT_DIR, directory))
    return tuple(roots)


def tried_before(module: str, requester: str, found: str | None) -> tuple[str, ...]:
    """The paths `ProjectIndex.find_module(module, requester)` looks at and finds no file at
    before it finds `found` (None: every path of the requester's repository it looks at).
    While each stays absent the lookup finds the same: a result resting on the lookup is
    valid as long as these are absent and `found` unchanged, so they are what it depends
    on, not only the module found (a module created ahead of it, `core.py` at the project's
    top beside `pkg/core.py`, is the one imported then) or the one place the file's own
    package would hold it (`from core import x` in `scripts/run.py` finds `scripts/core.py`
    once it is created)."""
    return _tried_before(module, os.path.dirname(os.path.abspath(requester)), found)


@lru_cache(maxsize=16384)
def _tried_before(module: str, directory: str, found: str | None) -> tuple[str, ...]:
    parts = module.split(".")
    tried: list[str] = []
    for root in _roots(directory):
        base = base_in(root, parts)
        if base is not None:
            tried += module_files(base)
    if found is not None:
        if found in tried:
            return _collapsed(tried[: tried.index(found)])
        # Found behind a symbolic link: the path looked at is the one leading to it.
        at = next((i for i, path in enumerate(tried) if resolved(path) == found), len(tried))
        return _collapsed(tried[:at])
    # Nothing found. A path in another repository may be a file (the lookup then gives up
    # there, `same_repository`); one created there changes nothing.
    own = file_repository(os.path.join(directory, "_.py"))
    if not standard_or_installed(parts[0]):
        return _collapsed([p for p in tried if file_repository(p) == own])
    # A standard or installed module: a project module created at one of these paths shadows
    # it (Python imports it from the script's directory or the root it is run from, and the
    # lookup finds it then). Below a root where its top-level name is no directory, the
    # entries of that root with such names decide (`shadowed_names`): one dependency for all.
    kept: list[str] = []
    shadowed: list[str] = []
    for root in _roots(directory):
        base = base_in(root, parts)
        if base is None or file_repository(base + ".py") != own:
            continue
        top = os.path.join(root[1], parts[0])
        if not root[0] and not _is_dir(top):
            shadowed.append(root[1])
        else:  # a package mapped onto the root, or a directory of that name: its paths
            kept += module_files(base)
    paths = _collapsed(kept)
    if shadowed:
        paths += (shadowed_names.key(tuple(dict.fromkeys(shadowed))),)
    return paths


def module_files(base: str) -> tuple[str, str, str]:
    """The files a module at `base` may be, in the order `ProjectIndex.find_module` tries them
    (`tried_before` relies on that order)."""
    return (base + ".py", os.path.join(base, "__init__.py"), base + ".pyi")


def _collapsed(paths: list[str]) -> tuple[str, ...]:
    """`paths` (absent files), each under a directory that does not exist given as the highest
    such directory, spelled with a trailing separator (`root/executorch/` for the dozens of
    `executorch.exir.*` modules a file of ExecuTorch's checkout imports, tried under the
    checkout before its package root finds them): no file appears under it before it does.
    A dependency so spelled holds while nothing is there, a directory or a file: the results
    cache takes any directory there for a change, and `lsp.disk_changes.recheck_due` any file
    created below it."""
    out: dict[str, None] = {}
    for path in paths:
        parent = os.path.dirname(path)
        if _is_dir(parent):
            out[path] = None
            continue
        while not _is_dir(os.path.dirname(parent)) and os.path.dirname(parent) != parent:
            parent = os.path.dirname(parent)
        out[parent + os.sep] = None
    return tuple(out)


@lru_cache(maxsize=16384)
def _is_dir(path: str) -> bool:
    # Kept for the process (`forget_roots` clears it): one that has become a directory since
    # only makes a dependency on it fail (a recheck), one gone since is looked below.
    return os.path.isdir(path)


@lru_cache(maxsize=16384)
def tried_apart(module: str, requester: str, root: str, found: str | None) -> tuple[str, ...]:
    """The paths `tried_before(module, requester, found)` holds that the same lookup from
    `root` (`lookup_root`'s answer, which stands for the requester in what is kept of it)
    does not: the requester's own package directory, where `SCRIPT_DIR` would find the
    module once it is created there (`lookup_root` takes that directory only while it holds
    the module's first part). A fact keyed by `root` records them as absent modules of its
    own, or a module created beside the requester would leave it standing."""
    if os.path.dirname(requester) == root or standard_or_installed(module.partition(".")[0]):
        return ()  # the same roots, or only `SCRIPT_DIR` apart, which holds no such module
    mine = tried_before(module, requester, found)
    theirs = set(tried_before(module, os.path.join(root, "_.py"), found))
    return tuple(path for path in mine if path not in theirs)


def lookup_root(module: str, requester: str, root: str | None = None) -> str:
    """The directory standing for `requester` in what is kept of its lookup of `module`: its
    import root (`root`, when known), where every file finds a module at the same place, or
    its own directory when that is a package's holding `module`'s first part, where the
    `SCRIPT_DIR` root may decide. A file under it (`kept_answers.root_requester`) looks
    `module` up as `requester` does."""
    if root is None:
        root = import_root(requester)
    top = module.partition(".")[0]
    if standard_or_installed(top):
        return root
    directory = os.path.dirname(requester) if os.path.isabs(requester) else os.path.dirname(os.path.abspath(requester))
    if directory == root or install_dir(root) is not None or not _holds(directory, top):
        return root
    return directory


@lru_cache(maxsize=8192)
def _holds(directory: str, top: str) -> bool:
    base = os.path.join(directory, top)
    return os.path.isfile(base + ".py") or os.path.isdir(base) or os.path.isfile(base + ".pyi")


def forget_roots() -> None:
    """The run's directories or the packaging files changed (`run_roots.forget_layout`): the
    roots found before may not hold."""
    _roots.cache_clear()
    resolved.cache_clear()
    _holds.cache_clear()
    _tried_before.cache_clear()
    _is_dir.cache_clear()
    tried_apart.cache_clear()


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
        if parts[i] in INSTALL_DIRS:
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


__all__ = [
    "SCRIPT_DIR",
    "base_in",
    "forget_roots",
    "install_dir",
    "lookup_root",
    "module_bases",
    "module_files",
    "module_roots",
    "resolved",
    "site_dirs",
    "standard_or_installed",
    "tried_apart",
    "tried_before",
]

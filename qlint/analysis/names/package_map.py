"""Packages a repository's `pyproject.toml` maps onto other directories, and the module
names that mapping gives the files of the checkout.

ExecuTorch declares `[tool.setuptools.package-dir] executorch = "src/executorch"`, and
`src/executorch` holds symbolic links to the top-level directories (`backends -> ../../backends`,
`examples/qualcomm -> ../../../examples/qualcomm`). Installed, `backends/x/y.py` is
`executorch.backends.x.y`; in the checkout, the chain of `__init__.py` alone would call it
`backends.x.y`, and a file in a directory without `__init__.py` only `y`. Named as installed,
the checkout resolves its own absolute imports, and recognises its own public APIs
(`executorch.export.QuantizationRecipe`) as the rules know them.
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache

from qlint.analysis import run_roots
from qlint.analysis.names.packaging_files import declarations, packaging_texts, store_key
from qlint.analysis.names.shadowed_names import INSTALL_DIRS
from qlint.analysis.repo_root import repository_root

_MAX_LINK_DEPTH = 3  # `src/executorch/examples/qualcomm`: links sit a level or two down


def mapped_module_name(path: str) -> str | None:
    """The installed name of a `.py` file under a directory `pyproject.toml` maps (None elsewhere)."""
    return _mapped(os.path.abspath(path))


def project_root(path: str) -> str | None:
    """The repository holding `path`; outside any (an unpacked archive, a tree written by a
    tool), the nearest directory above it with a `pyproject.toml`, else with a `setup.py` or
    `setup.cfg` (a project that predates `pyproject.toml`: Samsung TICO's release archive),
    else the directory the run was asked about, if it holds `path` (`run_roots`)."""
    repo = repository_root(path)
    if repo is not None:
        return repo
    directory = path if os.path.isdir(path) else os.path.dirname(path)
    return _pyproject_dir(directory) or _setup_dir(directory) or run_roots.root_for(directory)


@lru_cache(maxsize=8192)
def _pyproject_dir(directory: str) -> str | None:
    if os.path.isfile(os.path.join(directory, "pyproject.toml")):
        return directory
    parent = os.path.dirname(directory)
    return None if parent == directory else _pyproject_dir(parent)


@lru_cache(maxsize=8192)
def _setup_dir(directory: str) -> str | None:
    """The nearest directory above with a setup script that is not a module: one in a package
    (`torchao/prototype/.../setup.py`, a build helper shipped inside it) or anywhere in an
    installed tree marks no project."""
    if any(part in INSTALL_DIRS for part in directory.split(os.sep)):
        return None
    here = directory
    while True:
        markers = (os.path.join(here, m) for m in ("setup.py", "setup.cfg"))
        if any(os.path.isfile(m) for m in markers) and not os.path.isfile(os.path.join(here, "__init__.py")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


@lru_cache(maxsize=16384)
def _mapped(path: str) -> str | None:
    repo = project_root(path)
    if repo is None:
        return None
    names = _aliases(repo)
    if not names:
        return None
    directory, filename = os.path.split(path)
    stem, ext = os.path.splitext(filename)
    if ext not in (".py", ".pyi") or not stem.isidentifier():
        return None
    parts = [] if stem == "__init__" else [stem]
    while True:
        rel = os.path.relpath(directory, repo)
        if rel in names:
            return ".".join([*([names[rel]] if names[rel] else []), *reversed(parts)]) or None
        if directory == repo:
            return None
        directory, name = os.path.split(directory)
        if not name.isidentifier():
            return None
        parts.append(name)


def forget_roots() -> None:
    """The run's directories or the packaging files changed (`run_roots.forget_layout`): the
    project roots and package directories found before may not hold."""
    for memo in (_mapped, _aliases, _declared, _pyproject_dir, _setup_dir, _root_packages):
        memo.cache_clear()


def declared_packages(repo: str) -> tuple[tuple[str, str], ...]:
    """(package name, or "" for a plain import root; directory) pairs the project's packaging
    declares for setuptools (`[tool.setuptools.package-dir]`, `[tool.setuptools.packages.find]
    where`, their `setup.cfg` and `setup.py` spellings: `packaging_files`), whose directories
    are there, named packages first, a subpackage before the package holding it (setuptools
    takes the most specific key: `pkg.sub` mapped elsewhere is not `pkg`'s `sub/`)."""
    return tuple((name, path) for name, _, path, there in _declared(repo) if there)


def missing_package_dirs(repo: str) -> tuple[tuple[str, str], ...]:
    """(package name, directory as written) pairs of `[tool.setuptools.package-dir]` whose
    directory is not in the checkout (a copy made without ExecuTorch's `src/executorch` links)."""
    return tuple((name, written) for name, written, _, there in _declared(repo) if not there)


# Where the reading of the packaging files is kept for later runs (`use_store`): the results
# cache's summary store, while one is in use. None: parsed every time.
_STORE: list = [None]


def use_store(store) -> None:
    """Keep what each project's packaging files declare in `store` (a `summary_cache.SummaryStore`, with
    `get_declared`/`put_declared`), or nowhere (None)."""
    _STORE[0] = store


@lru_cache(maxsize=256)
def _declared(repo: str) -> tuple[tuple[str, str, str, bool], ...]:
    """(name, directory as written, its path in `repo`, whether it is there), from the packaging
    files of `repo` (`packaging_files`: its `pyproject.toml`, `setup.cfg`, `setup.py`, and
    those of the directories right below it); a missing directory only where the root's
    `pyproject.toml` names a package directory (`missing_package_dirs`), else nothing."""
    texts = packaging_texts(repo)
    if not texts:
        return ()
    key = store_key(texts)
    store = _STORE[0]
    written = store.get_declared(repo, key) if store is not None else None
    if written is None:
        written = declarations(texts)
        if store is not None:
            store.put_declared(repo, key, written)
    found: list[tuple[str, str, str, bool]] = []
    for name, target, quiet in written:
        path = _within(repo, target)
        if path is None:  # pointing outside the checkout: not the checkout's to name
            continue
        there = os.path.isdir(path)
        if there or not quiet:
            found.append((name, target, path, there))
    # The most specific key first (`declared_packages`), sorted here, where it is kept: the
    # roots are asked for once per directory imports are resolved from.
    return tuple(sorted(found, key=lambda e: -e[0].count(".") if e[0] else 1))


@lru_cache(maxsize=256)
def _aliases(repo: str) -> dict[str, str]:
    """Directory (relative to the repository) -> the dotted package name it is installed as."""
    real_repo = os.path.realpath(repo)
    names: dict[str, str] = {}

    def visit(directory: str, dotted: str, depth: int) -> None:
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return
        for entry in entries:
            if not entry.name.isidentifier() or not entry.is_dir():  # follows links
                continue
            child = f"{dotted}.{entry.name}" if dotted else entry.name
            if entry.is_symlink():
                real = os.path.realpath(entry.path)
                if os.path.commonpath([real_repo, real]) == real_repo:
                    names.setdefault(os.path.relpath(real, real_repo), child)
            elif depth < _MAX_LINK_DEPTH:
                visit(entry.path, child, depth + 1)

    for name, directory in declared_packages(repo):
        if name:  # `""`/`where` roots name their packages as the `__init__.py` chain does
            names.setdefault(os.path.relpath(directory, repo), name)
            visit(directory, name, 1)
    _say_missing(repo, names)
    return names


def root_packages(repo: str) -> tuple[str, ...]:
    """The packages whose layout the checkout's root directory holds, so that `<name>.x.y` may
    be its own `x/y.py` (`import_paths` tries the root so, after the directories declared):

    - the root's own name, where it has no `__init__.py` (a checkout in `executorch/`: its
      parent imports it as a namespace package);
    - a package whose every mapping the packaging declares names the root's directory of the
      same path: ExecuTorch's `src/executorch/backends -> ../../backends` links (only some
      directories are linked: `examples/qualcomm` was not at 6cca6e63, and its scripts import
      `executorch.examples.qualcomm.utils`, run with the checkout's parent on `PYTHONPATH`), or
      its `setup.py` of 2024-25, `package_dir={"executorch/backends": "backends", ...}`.
      One mapping elsewhere (`pkg.fx` -> `py/pkg/fx`), or a directory of the package's own
      at the root, and the root is not the package: its directories are not the package's by
      their paths.

    Without this, a checkout in a directory of another name (`executorch-old/`) resolved what
    its links or `package_dir` leave out to the installed package (site-packages), another
    version's code, instead of its own."""
    return _root_packages(repo)


@lru_cache(maxsize=256)
def _root_packages(repo: str) -> tuple[str, ...]:
    return _held_at_root(repo, _aliases(repo))


def _held_at_root(repo: str, names: dict[str, str]) -> tuple[str, ...]:
    """`root_packages` of `repo`, whose directories `names` (`_aliases`) are installed as."""
    found: dict[str, bool] = {}
    for rel, dotted in names.items():
        top, dot, below = dotted.partition(".")
        if dot:  # a subpackage's directory; the package's own (`src/executorch`) says nothing
            found[top] = found.get(top, True) and rel == below.replace(".", os.sep)
    name = os.path.basename(repo)
    own = (name,) if name.isidentifier() and not os.path.isfile(os.path.join(repo, "__init__.py")) else ()
    # A root holding the package's own directory (`pkg/` beside `data/`, mapped as `pkg.data`)
    # is not that package: `pkg.x` is `pkg/x`, not the root's `x`.
    mirrored = (top for top, same in found.items() if same and not _holds_top(repo, top))
    return tuple(dict.fromkeys([*own, *mirrored]))


def _holds_top(repo: str, top: str) -> bool:
    base = os.path.join(repo, top)
    return os.path.isdir(base) or os.path.isfile(base + ".py")


def _within(repo: str, target: str) -> str | None:
    path = os.path.normpath(os.path.join(repo, target))
    return path if os.path.commonpath([repo, path]) == repo else None


def _say_missing(repo: str, names: dict[str, str]) -> None:
    """Once per process and repository (`_aliases` is cached; a parallel run asks before it
    forks, `warn_missing`): the findings of such a checkout differ from a full one's. Its
    imports of the package still resolve to its own files where the root holds the package's
    layout (`_held_at_root` of its directories' `names`: a copy of ExecuTorch made without its
    links, in `executorch/`), asked only when a directory is missing."""
    missing = missing_package_dirs(repo)
    at_root = _held_at_root(repo, names) if missing else ()
    for name, written in missing:
        what = f"package `{name}`" if name else "the import root"
        if not name:
            imports = ""
        elif name.partition(".")[0] in at_root:
            imports = f" (imports of `{name}.*` resolve to the checkout's own directories: {_why(repo, name)})"
        else:
            imports = f" (imports of `{name}.*` may not resolve)"
        print(
            f"qlint: warning: {os.path.join(repo, 'pyproject.toml')} maps {what} to {written!r}, which is not"
            f" in the checkout: its modules are named by their directories alone{imports}",
            file=sys.stderr,
        )


def _why(repo: str, name: str) -> str:
    top = name.partition(".")[0]
    if os.path.basename(repo) == top:
        return f"its directory is named `{top}`"
    return f"the packaging maps `{top}`'s subpackages onto the directories of the same paths"


def warn_missing(paths) -> None:
    """Say (once) which of the package directories the repositories of `paths` (a command's
    files and directories) declare are missing: before a parallel run forks, so that its
    processes do not each say it."""
    for repo in sorted({r for r in (project_root(os.path.abspath(p)) for p in paths) if r is not None}):
        _aliases(repo)


__all__ = [
    "declared_packages",
    "forget_roots",
    "mapped_module_name",
    "missing_package_dirs",
    "project_root",
    "root_packages",
    "use_store",
    "warn_missing",
]

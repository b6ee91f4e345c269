"""Where a file sits among Python modules: its dotted name, its import root, and what a
relative import in it names. Pure path arithmetic (plus a cached `isfile`), used by every
layer that has to name a module."""

from __future__ import annotations

import os
from functools import lru_cache

from qlint.analysis.names.package_map import mapped_module_name
from qlint.analysis.names.shadowed_names import INSTALL_DIRS


@lru_cache(maxsize=4096)
def _is_package_dir(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "__init__.py"))


def module_name_for(path: str) -> str | None:
    """Dotted module name from the chain of `__init__.py` above the file (None for `<stdin>`),
    or the installed name where `pyproject.toml` maps the directory (`package_map`)."""
    path = os.path.abspath(path)
    mapped = mapped_module_name(path)
    if mapped is not None:
        return mapped
    directory, filename = os.path.split(path)
    stem, ext = os.path.splitext(filename)
    if ext not in (".py", ".pyi") or not stem.isidentifier():
        return None
    parts = [] if stem == "__init__" else [stem]
    while _is_package_dir(directory):
        directory, name = os.path.split(directory)
        if not name.isidentifier():
            break
        parts.append(name)
    above = _installed_package_path(directory)
    if above:
        parts += reversed(above)
    return ".".join(reversed(parts)) or None


@lru_cache(maxsize=4096)
def _installed_package_path(directory: str) -> tuple[str, ...]:
    """The directories between an install directory and `directory` (where a chain of
    `__init__.py` stopped), when each is an identifier: an installed file imports by that
    whole path, directories without `__init__.py` being namespace packages (PEP 420). The
    ExecuTorch wheel ships `executorch/` itself, and `examples/qualcomm/oss_scripts/*`,
    without one: `executorch.examples.qualcomm.utils` is what its scripts import, not `utils`.
    A checkout's directories without `__init__.py` keep their ambiguous names
    (`import_paths.module_bases` tries the roots they may be run from)."""
    parts = directory.split(os.sep)
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in INSTALL_DIRS:
            inside = tuple(parts[i + 1 :])
            return inside if all(p.isidentifier() for p in inside) else ()
    return ()


def namespace_import(path: str, top: str) -> tuple[str, str] | None:
    """For a module whose chain of `__init__.py` stops at a directory without one that lies, up
    to `top` (the project's root), inside a regular package (`pkg/__init__.py`, then
    `pkg/passes/insert.py` with no `pkg/passes/__init__.py`): the dotted name Python imports it
    by (`pkg.passes.insert`: a directory without `__init__.py` inside a package is a namespace
    package, PEP 420) and the directory without `__init__.py` its own chain stops at."""
    top = os.path.abspath(top)
    found = _through_namespaces(os.path.abspath(path), top)
    return found if found is not None and found[1] else None


def _through_namespaces(path: str, top: str) -> tuple[str, str] | None:
    """(the dotted name, the first directory without `__init__.py` on the way, "" for none)."""
    name = module_name_for(path)
    if name is None:
        return None
    directory = os.path.dirname(path)
    # Up from the file's directory to the one above its top-level package (or its own, for a
    # module outside any): the directory the chain of `__init__.py` stops at.
    for _ in range(name.count(".") + (1 if os.path.basename(path) in ("__init__.py", "__init__.pyi") else 0)):
        directory = os.path.dirname(directory)
    spaces = []  # the directories without `__init__.py`, innermost first
    while directory.startswith(top + os.sep) and not _is_package_dir(directory):
        base = os.path.basename(directory)
        if not base.isidentifier():
            return None
        spaces.append(directory)
        directory = os.path.dirname(directory)
    if not spaces or not _is_package_dir(directory):
        return name, ""
    package = _through_namespaces(os.path.join(directory, "__init__.py"), top)
    if package is None:
        return None
    dotted = ".".join([package[0], *(os.path.basename(d) for d in reversed(spaces)), name])
    return dotted, spaces[0]


def module_stem(path: str) -> str:
    """The last part of the file's dotted name: its file name, or its package's directory for
    an `__init__.py` (the word another module's import of it must spell)."""
    path = os.path.abspath(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    return os.path.basename(os.path.dirname(path)) if stem == "__init__" else stem


def import_root(path: str) -> str:
    """The directory from which the file's top-level package (or the file itself) imports."""
    directory = _DIRECTORIES.get(path)
    if directory is None:
        directory = os.path.dirname(os.path.abspath(path))
        # Asked again and again of the same paths (the helper search: ~34,000 times in a cold
        # run over the installed torch, for a few thousand paths), each time normalising the
        # path anew. An absolute path's directory is a function of its spelling alone; a
        # relative one's depends on the working directory, and is worked out at each ask.
        if os.path.isabs(path):
            if len(_DIRECTORIES) >= _MAX_DIRECTORIES:
                _DIRECTORIES.clear()
            _DIRECTORIES[path] = directory
    return _import_root_of(directory)


# absolute path, as asked -> the directory it names the file in (`os.path.dirname(abspath)`)
_DIRECTORIES: dict[str, str] = {}
_MAX_DIRECTORIES = 100_000


@lru_cache(maxsize=4096)
def _import_root_of(directory: str) -> str:
    # Asked ~50,000 times in a run over ExecuTorch (the helper search keys its memo on it),
    # for a few hundred directories. Cached as `_is_package_dir` is, on which alone it depends.
    while _is_package_dir(directory):
        directory = os.path.dirname(directory)
    return directory


def resolve_relative(module: str | None, path: str, level: int, name: str | None) -> str | None:
    """Absolute module name for `from <level dots><name> import ...` written in `module`."""
    if level == 0:
        return name
    if module is None:
        return None
    package = module.split(".")
    if not path.endswith(("__init__.py", "__init__.pyi")):
        package = package[:-1]
    if level - 1 > len(package):
        return None
    package = package[: len(package) - (level - 1)]
    return ".".join(package + ([name] if name else [])) or None

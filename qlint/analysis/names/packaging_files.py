"""The packaging files of a project whose declarations name its import roots, and what they
declare, relative to the project root.

Read: `pyproject.toml`, `setup.cfg` and `setup.py` at the project root, and the same files in
each directory right below it that is not itself a package (EVT installs `python/` by
`python/setup.py`; a repository holding one Python project among C++ sources commonly keeps
it so: `python/`, `bindings/`). One directory listing of the root and a few `open`s per
subdirectory, once per root and process; deeper setup scripts are vendored projects
(`third_party/x/setup.py`) or build helpers, not this project's packaging.

Precedence, as setuptools merges them: in one directory the configuration files win over the
script's keywords (`pyproject.toml`, then `setup.cfg`, then `setup.py`); the root's files come
before a subdirectory's; and a package named in `package_dir` comes before a `""` root, as
setuptools maps a package by its own entry before the root's (`module_roots` tries the
directories in this order, the first that holds a module wins).
"""

from __future__ import annotations

import os

from qlint.analysis.skipped_dirs import walked

# (package name or "", directory relative to the project root, quiet: a missing directory is
# not warned about). Only the root's `pyproject.toml` package directories are warned about: an
# ExecuTorch copy without its `src/executorch` links resolves differently from a full one.
Written = tuple[str, str, bool]

PACKAGING_NAMES = ("pyproject.toml", "setup.cfg", "setup.py")


def packaging_texts(repo: str) -> tuple[tuple[str, str, bytes], ...]:
    """(directory relative to `repo`, file name, bytes) of the packaging files that may declare
    something (each passes its text prefilter), root first."""
    found: list[tuple[str, str, bytes]] = []
    for rel, directory in _directories(repo):
        found += _texts(directory, rel)
    return tuple(found)


def packaging_files(repo: str) -> tuple[tuple[str, str, str, os.stat_result], ...]:
    """(directory relative to `repo`, file name, path, stat) of every packaging file there,
    declaring or not: what a run's layout is keyed on (`run_layout`), by content."""
    found = []
    for rel, directory in _directories(repo):
        for name in PACKAGING_NAMES:
            path = os.path.join(directory, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            found.append((rel, name, path, st))
    return tuple(found)


def _directories(repo: str) -> list[tuple[str, str]]:
    """(relative, absolute) of the directories whose packaging files count, root first."""
    found = [(".", repo)]
    try:
        entries = sorted(os.scandir(repo), key=lambda e: e.name)
    except OSError:
        entries = []
    for entry in entries:
        if not walked(entry.name) or not _is_dir(entry):
            continue
        if os.path.isfile(os.path.join(entry.path, "__init__.py")):
            continue  # a package's `setup.py` is a module of it, or a build helper
        found.append((entry.name, entry.path))
    return found


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _texts(directory: str, rel: str) -> list[tuple[str, str, bytes]]:
    found = []
    for name in PACKAGING_NAMES:
        try:
            with open(os.path.join(directory, name), "rb") as fh:
                raw = fh.read()
        except OSError:  # absent, a directory, unreadable
            continue
        if _may_declare(name, raw, rel == "."):
            found.append((rel, name, raw))
    return found


def _may_declare(name: str, raw: bytes, at_root: bool) -> bool:
    if name == "pyproject.toml":
        # The TOML parser (with `datetime`) is ~5 ms of every `qlint check FILE` in a repository
        # whose `pyproject.toml` declares none (pytorch/ao's names its build backend); a key
        # may be spelled with an escape in a quoted key.
        return b"package-dir" in raw or b"where" in raw or b"\\u" in raw or b"\\U" in raw
    if name == "setup.cfg":
        return b"package_dir" in raw or b"where" in raw
    from qlint.analysis.names.setup_scripts import may_declare  # `ast`: not for a run the cache answers

    return may_declare(raw, at_root)


def store_key(texts: tuple[tuple[str, str, bytes], ...]) -> bytes:
    """The bytes a kept reading of `texts` is valid for: every file's place, size and content."""
    return b"".join(f"{rel}/{name}\0{len(raw)}\0".encode() + raw for rel, name, raw in texts)


def declarations(texts: tuple[tuple[str, str, bytes], ...]) -> tuple[Written, ...]:
    """What `texts` declare, in the order of precedence (module docstring)."""
    from qlint.analysis.names.pyproject_reads import pyproject_declarations
    from qlint.analysis.names.setup_scripts import setup_cfg_declarations, setup_py_declarations

    named: list[Written] = []
    roots: list[Written] = []
    for rel, name, raw in texts:
        if name == "pyproject.toml":
            read = pyproject_declarations(raw)
        elif name == "setup.cfg":
            read = setup_cfg_declarations(raw)
        else:
            read = setup_py_declarations(raw, rel == ".")
        for package, target, where in read:
            if rel == "." and name == "pyproject.toml":
                entry = (package, target, where)  # as written: the warning quotes it
            else:
                entry = (package, os.path.normpath(os.path.join(rel, target)), True)
            (named if package else roots).append(entry)
    return tuple(dict.fromkeys(named + roots))


__all__ = ["PACKAGING_NAMES", "Written", "declarations", "packaging_files", "packaging_texts", "store_key"]

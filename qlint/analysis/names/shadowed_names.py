"""Standard and installed module names, and the project files that would shadow them.

A lookup of a standard or installed module (`typing`, `torch.fx.passes`) finds nothing in the
project, unless the project holds a module of that name at one of the directories it imports
from (`colorsys.py` beside a script): Python imports the project's then, and so does
`ProjectIndex.find_module`. A cached answer resting on such a lookup depends on each path it
tried (`import_paths.tried_before`), but those are most of what a result would depend on
(ExecuTorch: 21,000 more dependencies, a warm run by the per-file path +12%), and they are
the same few names under the same few directories. Where the module's top-level name is no
directory below an import root, what decides is which entries of that root carry a standard
or installed name: one dependency, `shadows:<root>...` over all such roots of a lookup, whose
digest is those entries (`digest_now`). A file created or removed there under another name
leaves it, one under such a name (or a directory, below which the module might be) fails it.

Light on purpose: the results cache reads it (`qlint.cache`), on a warm run that imports no
analysis.
"""

from __future__ import annotations

import contextlib
import os
import site
import sys
from functools import lru_cache

from qlint.short_digests import sha256_hex

INSTALL_DIRS = frozenset({"site-packages", "dist-packages"})
# The digest of a dependency `<dir>/` read as a directory that is there (`ProjectIndex.is_directory`):
# the results cache takes it for changed once no directory is at that path. Here, as the other
# dependency the cache reads without a stat of a file, and below `qlint.results` (`test_layers`).
DIRECTORY = "directory"
PREFIX = "shadows:"
# Between roots: one a path hardly holds. Not a NUL: a reader that takes the dependency for a
# path (`os.stat` of a kept fact's reads) gets ValueError for it, not "absent".
_SEP = "\n"
_SUFFIXES = (".py", ".pyi")


@lru_cache(maxsize=8192)
def standard_or_installed(top: str) -> bool:
    """Whether a top-level module `top` is the standard library's or installed (a file or
    directory of that name in a site directory)."""
    if top in sys.stdlib_module_names or top in sys.builtin_module_names:
        return True
    return top in _installed_tops()


@lru_cache(maxsize=1)
def _installed_tops() -> frozenset[str]:
    """What each entry of the site directories names up to its first dot (`torch`, `six.py`,
    `torch-2.9.dist-info`: `torch`, `six`, `torch-2`): a name is installed when it is one."""
    return frozenset(entry.partition(".")[0] for directory in site_dirs() for entry in _entries(directory))


@lru_cache(maxsize=1)
def site_dirs() -> tuple[str, ...]:
    found = [p for p in sys.path if p and any(d in p.split(os.sep) for d in INSTALL_DIRS)]
    with contextlib.suppress(AttributeError):  # a virtualenv's old `site` module
        found += [*site.getsitepackages(), site.getusersitepackages()]
    return tuple(dict.fromkeys(os.path.abspath(p) for p in found if os.path.isdir(p)))


@lru_cache(maxsize=64)
def _entries(directory: str) -> frozenset[str]:
    try:
        return frozenset(os.listdir(directory))
    except OSError:
        return frozenset()


def key(roots: tuple[str, ...]) -> str:
    """The dependency standing for the standard or installed names under `roots`."""
    return PREFIX + _SEP.join(roots)


def roots_of(dependency: str) -> list[str]:
    return dependency[len(PREFIX) :].split(_SEP)


def shadowing(entry: str) -> bool:
    """Whether a directory entry named `entry` may be imported as a standard or installed
    top-level module (`torch.py`, `copy.pyi`, `torchao/`, or a file named so: it may become
    one of those)."""
    for suffix in _SUFFIXES:
        if entry.endswith(suffix):
            entry = entry[: -len(suffix)]
            break
    return entry.isidentifier() and standard_or_installed(entry)


def digest_now(roots: list[str], listed: dict[str, str]) -> str:
    """What the entries of `roots` carrying a standard or installed name are now: each entry's
    name and whether it is a directory, per root (`listed` keeps each root's for the caller:
    the lookups of one run or check share a few roots)."""
    parts = []
    for root in roots:
        part = listed.get(root)
        if part is None:
            part = listed[root] = _entries_now(root)
        parts.append(part)
    return sha256_hex("\n".join(parts).encode("utf-8", "surrogatepass"))[:32]


def _entries_now(root: str) -> str:
    try:
        with os.scandir(root) as listing:
            found = sorted(
                f"{entry.name}{os.sep if _is_dir(entry) else ''}" for entry in listing if shadowing(entry.name)
            )
    except OSError:
        return "\0absent"  # no root there: one made is another answer
    return _SEP.join(found)


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def changed_under(dependency: str, changed: set[str]) -> bool:
    """Whether one of `changed` (files or directories) is, or is below, an entry with a
    standard or installed name under one of the dependency's roots, or is such a root or a
    directory above one (`lsp.disk_changes.recheck_due`)."""
    for root in roots_of(dependency):
        inside = root + os.sep
        for path in changed:
            if path == root or inside.startswith(path + os.sep):
                return True
            if path.startswith(inside) and shadowing(path[len(inside) :].split(os.sep, 1)[0]):
                return True
    return False

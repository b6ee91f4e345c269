"""Where a module lives, looked up once per run whose files stay put (`ProjectIndex.fixed_layout`).

`ProjectIndex.find_module` tries each base `module_bases` gives (the requester's import root,
the directories above it up to the repository, the ones `pyproject.toml` maps), three `stat`s
per base. It keeps its answers per (module, requester's directory), yet the bases above an
import root are the same for every root under them, and most modules asked for are not the
project's (`torch.nn` under each of ExecuTorch's 275 roots): a cold run over ExecuTorch made
3,708 lookups and 38,600 `stat`s (0.50 s of CPU with `-j1`; 0.28 s now). Here a base is
looked at once per run, and each directory on the way to it is asked from its listing,
listed once per run: a name the listing does not hold is no file, and most lookups end at
the first part of the module's name, without a `stat`. The answer is `find_module`'s: the
first of `base.py`, `base/__init__.py`, `base.pyi` that is a file, the file behind a link,
none in another repository than the requester's.
"""

from __future__ import annotations

import os

from qlint.analysis.names.import_paths import SCRIPT_DIR, base_in, module_roots, resolved
from qlint.analysis.repo_root import repository_root

_UNSEEN = object()
_MAX_ENTRIES = 200_000
# (the run it is for: `ProjectIndex.layouts`, (module, root) -> the file or None,
# directory -> its entries, file -> its repository)
_RUN: tuple[int, dict, dict, dict] = (-1, {}, {}, {})


def find(module: str, requester: str, run: int) -> str | None:
    """`ProjectIndex.find_module(module, requester)` in the run numbered `run`."""
    global _RUN
    if _RUN[0] != run:
        _RUN = (run, {}, {}, {})
    _, found, listings, repos = _RUN
    parts: list[str] | None = None
    for root in module_roots(requester):
        real = found.get((module, root), _UNSEEN)
        if real is _UNSEEN:
            parts = parts or module.split(".")
            if len(found) > _MAX_ENTRIES:
                found.clear()
            real = found[(module, root)] = _module_file(root, parts, listings)
        if real is not None:
            # A rollout checks checkouts side by side: a package chain climbing out of one
            # repository must not resolve into its neighbour.
            return real if _repository(real, repos) == _repository(requester, repos) else None
    return None


def holds_none_under(top: str, roots: tuple[tuple[str, str], ...], run: int) -> bool:
    """Whether `find(module, requester, run)` finds nothing for `top` and every module under
    it (`top.x.y`), `roots` being `module_roots(requester)`: none of them can hold one. A
    root for another package (`base_in`: its prefix starts otherwise) holds none; any other
    root holds none where its directory's listing has neither `top`, `top.py` nor `top.pyi`,
    the first names `_module_file` asks of it (`os`, `typing` in the roots of most files)."""
    global _RUN
    if _RUN[0] != run:
        _RUN = (run, {}, {}, {})
    listings = _RUN[2]
    for prefix, directory in roots:
        if prefix == SCRIPT_DIR:
            if base_in((prefix, directory), [top]) is not None and _holds_top(directory, top, listings):
                return False
        elif prefix:
            if prefix.partition(".")[0] == top:
                return False
        elif _holds_top(directory, top, listings):
            return False
    return True


def _holds_top(directory: str, top: str, listings: dict[str, frozenset[str]]) -> bool:
    return not _listing(directory, listings).isdisjoint((top, top + ".py", top + ".pyi"))


def _module_file(root: tuple[str, str], parts: list[str], listings: dict[str, frozenset[str]]) -> str | None:
    """The file of the module of dotted `parts` under one of `module_roots`, if any."""
    base = base_in(root, parts)
    if base is None:
        return None
    prefix, directory = root
    # Below the prefix's directory: past every part a subpackage's prefix spells
    # (`executorch.backends` mapped onto `backends/`: `executorch.backends.x` is `backends/x`).
    below = parts[prefix.count(".") + 1 :] if prefix and prefix != SCRIPT_DIR else parts
    if below:
        for part in below[:-1]:
            if part not in _listing(directory, listings):
                return None
            directory = os.path.join(directory, part)
        name = below[-1]
    else:  # the prefix's own directory (`executorch` mapped onto the checkout)
        directory, name = os.path.split(base)
    names = _listing(directory, listings)
    for entry, candidate in ((name + ".py", base + ".py"), (name, os.path.join(base, "__init__.py"))):
        if entry in names and os.path.isfile(candidate):
            return resolved(candidate)
    if name + ".pyi" in names and os.path.isfile(base + ".pyi"):
        return resolved(base + ".pyi")
    return None


def _listing(directory: str, listings: dict[str, frozenset[str]]) -> frozenset[str]:
    """The directory's entries (none where it cannot be listed: absent, or not a directory)."""
    names = listings.get(directory)
    if names is None:
        try:
            names = frozenset(os.listdir(directory))
        except OSError:
            names = frozenset()
        if len(listings) > _MAX_ENTRIES:
            listings.clear()
        listings[directory] = names
    return names


def _repository(path: str, repos: dict[str, str | None]) -> str | None:
    known = repos.get(path, _UNSEEN)
    if known is _UNSEEN:
        if len(repos) > _MAX_ENTRIES:
            repos.clear()
        known = repos[path] = repository_root(path)
    return known  # type: ignore[return-value]


__all__ = ["find", "holds_none_under"]

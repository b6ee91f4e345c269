"""PATH arguments → the Python files to check, like ruff: `.gitignore`, excludes, symlinks.

Speed matters (the warm cached run over the installed torch tree is mostly this walk), so
the walk uses `os.scandir`'s cached entry types, keeps paths as plain strings that start
with the directory they came from (so `.gitignore` bases are string prefixes), and only
calls `realpath` on symlinks. Loops are impossible because every directory is entered at
most once by its real path. Problems become error strings, never exceptions.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterable, Sequence

from qlint.analysis.project_files import Listing, listing_of
from qlint.gitignore import IgnoreFile, glob_to_regex, is_ignored
from qlint.path_resolution import Resolution, resolution
from qlint.results import display_path
from qlint.settings import Settings

# Notebooks too, as ruff since 0.6: their code cells are checked (see qlint.notebook).
PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")


class Discovery:
    """What a walk found (a plain class: a dataclass costs every start of `qlint` about a
    millisecond, to build its methods)."""

    __slots__ = ("errors", "files", "ignore_files", "listings", "names", "repository_probes", "resolved", "started")

    def __init__(
        self,
        files: list[str] | None = None,
        errors: list[str] | None = None,
        listings: dict[str, Listing] | None = None,
        names: dict[str, frozenset[str]] | None = None,
    ):
        self.files = files if files is not None else []  # absolute, sorted, unique
        self.errors = errors if errors is not None else []
        # directory -> its `project_files.listing_of`, for each directory walked: what the
        # results cache checks listings against, without listing them again (ExecuTorch: 640).
        self.listings = listings if listings is not None else {}
        # directory -> the casefolded names of all its entries, for each directory walked: a
        # path whose component is not among its walked parent's names does not exist (the
        # cache's absent dependencies, 2,400 on ExecuTorch, need no stat each).
        self.names = names if names is not None else {}
        # What else the walk's answer depends on (`qlint.run_record` vouches for it by stats):
        # the `.gitignore`/`info/exclude` files it read or looked for, the directories it asked
        # whether they hold `.git`, where each directory it started from and each symbolic link
        # it met led when it met them (`path_resolution`: a link's target can change while a
        # stat of the directory holding it does not), and when it started (ns).
        self.ignore_files: list[str] = []
        self.repository_probes: list[tuple[str, bool]] = []
        self.resolved: dict[str, Resolution] = {}
        self.started = 0


def discover(paths: Sequence[str], settings: Settings) -> Discovery:
    """Expand files and directories; explicitly named files are kept unless `force_exclude`."""
    started = time.time_ns()
    walker = _Walker(settings)
    for arg in paths or (".",):
        walker.add_argument(arg)
    found = Discovery(sorted(walker.files), walker.errors, walker.listings, walker.names)
    found.ignore_files, found.repository_probes = walker.ignore_files, walker.repository_probes
    found.resolved, found.started = walker.resolved, started
    return found


class ExcludeMatcher:
    """ruff's `exclude` semantics: a bare glob matches any file or directory name; a glob
    with `/` matches the path relative to the project root."""

    def __init__(self, patterns: Iterable[str], root: str):
        self.root = root.rstrip(os.sep)
        self.names: set[str] = set()
        name_globs, path_globs = [], []
        for pattern in patterns:
            pattern = pattern.rstrip("/")
            if not pattern:
                continue
            if "/" in pattern:
                pattern = pattern[2:] if pattern.startswith("./") else pattern
                if os.path.isabs(pattern):
                    rel = os.path.relpath(pattern, self.root)
                    pattern = rel.replace(os.sep, "/") if not rel.startswith("..") else pattern
                path_globs.append(glob_to_regex(pattern, star_crosses_slash=True))
            elif any(ch in pattern for ch in "*?[\\"):
                name_globs.append(glob_to_regex(pattern, star_crosses_slash=True))
            else:
                self.names.add(pattern)
        self._name_re = re.compile("|".join(name_globs), re.DOTALL) if name_globs else None
        self._path_re = re.compile("|".join(path_globs), re.DOTALL) if path_globs else None

    def excluded(self, name: str, path: str) -> bool:
        if name in self.names:
            return True
        if self._name_re is not None and self._name_re.fullmatch(name):
            return True
        if self._path_re is not None and path.startswith(self.root + os.sep):
            rel = path[len(self.root) + 1 :].replace(os.sep, "/")
            return self._path_re.fullmatch(rel) is not None
        return False

    def excluded_or_below_excluded(self, path: str) -> bool:
        """For `--force-exclude`: the path or an ancestor inside the project is excluded."""
        current = path
        while True:
            if self.excluded(os.path.basename(current), current):
                return True
            parent = os.path.dirname(current)
            if parent == current or not parent.startswith(self.root + os.sep):
                return False
            current = parent


class _Walker:
    def __init__(self, settings: Settings):
        self.root = str(settings.root)
        self.exclude = ExcludeMatcher((*settings.exclude, *settings.extend_exclude), self.root)
        self.force_exclude = settings.force_exclude
        self.gitignore = settings.respect_gitignore
        self.files: set[str] = set()
        self.errors: list[str] = []
        self.visited: set[str] = set()  # real paths of directories already walked
        self.listings: dict[str, Listing] = {}
        self.names: dict[str, frozenset[str]] = {}
        self.ignore_files: list[str] = []
        self.repository_probes: list[tuple[str, bool]] = []
        self.resolved: dict[str, Resolution] = {}

    def add_argument(self, arg: str) -> None:
        path = os.path.abspath(arg)
        try:
            st = os.stat(path)
        except OSError as exc:
            reason = "broken symbolic link" if os.path.islink(path) else (exc.strerror or str(exc))
            self.errors.append(f"{arg}: {reason}")
            return
        if self.force_exclude and self.exclude.excluded_or_below_excluded(path):
            return
        if stat.S_ISDIR(st.st_mode):
            stack = self._ancestor_ignores(path) if self.gitignore else ()
            real = os.path.realpath(path)
            self.resolved[path] = (real, "d")
            self._walk(path, real, tuple(stack))
        elif stat.S_ISREG(st.st_mode):
            self.files.add(path)
        else:  # a FIFO or device would block the read forever: `-` is how to pass a stream
            self.errors.append(f"{arg}: not a regular file (use `-` to read standard input)")

    def _walk(self, top: str, top_real: str, top_stack: tuple[IgnoreFile, ...]) -> None:
        # Explicit stack, not recursion: real trees can be deeper than Python's recursion limit.
        pending = [(top, top_real, top_stack)]
        while pending:
            directory, real, ignores = pending.pop()
            if real in self.visited:
                continue
            self.visited.add(real)
            try:
                with os.scandir(directory) as it:
                    entries = list(it)
            except OSError as exc:
                self.errors.append(f"{display_path(directory)}: cannot read directory: {exc.strerror or exc}")
                continue
            self.listings[directory] = listing_of(entries)
            for entry in entries:
                if entry.is_symlink():  # before `_visit` decides by where it leads
                    self.resolved[entry.path] = resolution(entry.path)
            self.names[directory] = frozenset(entry.name.casefold() for entry in entries)
            if self.gitignore:
                for entry in entries:
                    if entry.name == ".gitignore":
                        loaded = _load_ignore(directory, entry.path, self.ignore_files)
                        if loaded is not None:
                            ignores = (*ignores, loaded)
                        break
            for entry in entries:
                self._visit(entry, real, ignores, pending)

    def _visit(self, entry: os.DirEntry, real: str, ignores, pending: list) -> None:
        name = entry.name
        path = entry.path
        try:
            is_dir = entry.is_dir()
        except OSError:  # e.g. a symlink loop `a -> a`: not a directory we can enter
            is_dir = False
        if not is_dir and not name.endswith(PYTHON_SUFFIXES):
            return  # skipped whatever the excludes say: no need to ask them (a third of ao's entries)
        if self.exclude.excluded(name, path):
            return
        if ignores and is_ignored(ignores, path, name, is_dir):
            return
        if is_dir:
            child_real = os.path.realpath(path) if entry.is_symlink() else os.path.join(real, name)
            if child_real not in self.visited:
                pending.append((path, child_real, ignores))
            return
        try:
            is_file = entry.is_file()
        except OSError as exc:
            self.errors.append(f"{display_path(path)}: cannot read: {exc.strerror or exc}")
            return
        if is_file:
            self.files.add(path)
        elif entry.is_symlink():
            self.errors.append(f"{display_path(path)}: broken symbolic link")

    def _ancestor_ignores(self, path: str) -> list[IgnoreFile]:
        """`.gitignore` files above a walked directory, up to its git repository's root
        (or the project root when there is no repository), plus `.git/info/exclude`.
        The directory's own `.gitignore` is loaded by the walk itself."""
        chain = []
        current = path
        while True:
            chain.append(current)
            if current == self.root:
                break
            found = os.path.exists(os.path.join(current, ".git"))
            self.repository_probes.append((current, found))
            if found:
                break
            parent = os.path.dirname(current)
            if parent == current:
                return []  # neither in a repository nor below the project root
            current = parent
        top = chain[-1]
        ignores = []
        info = _load_ignore(top, os.path.join(top, ".git", "info", "exclude"), self.ignore_files)
        if info is not None:
            ignores.append(info)
        for directory in reversed(chain[1:]):
            loaded = _load_ignore(directory, os.path.join(directory, ".gitignore"), self.ignore_files)
            if loaded is not None:
                ignores.append(loaded)
        return ignores


def _load_ignore(base: str, path: str, read: list[str]) -> IgnoreFile | None:
    read.append(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return None
    ignore = IgnoreFile.parse(base, text)
    return ignore if ignore.rules else None

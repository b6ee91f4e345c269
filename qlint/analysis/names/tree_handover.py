"""Trees one parse gives both the engine's check of a file and the summary of it as a
module other files import, in a command-line run.

A check summarises the modules its file imports (`ProjectIndex` parses each once and drops
the tree); when such a module is one of the files the run checks, it was parsed twice: once
for its summary, once for its own check, in either order. On ExecuTorch (-j1) that was ~150
of the run's ~1,430 whole-module parses. Both directions are served here:
- summarised first: the runner names the files it will check (`expect`), the project index
  keeps the tree of a summary it parses of one of them (`keep`), and the runner checks the
  kept ones next (`kept`), so such a tree lives for about one check;
- checked first: the engine's trees of the last files checked (`checked_tree`) serve a
  summary asked soon after (`checked_parse`), usually by a sibling that imports the file;
- a caller search of another file's check parsed it to analyse its calls of a helper
  (`project_callers._module`), or parsed its summary for that and found no call to read
  (`ProjectIndex.drop_kept_tree`): kept like a summary's tree. On ExecuTorch (-j1) the 15
  MediaTek export scripts a helper's check analysed were each parsed again by their own
  check, hundreds of checks later.
Each is bounded by source bytes (a tree takes ~23 bytes per source byte: ~6 and ~3 MiB),
and a tree is taken only for the very bytes it was parsed from. The language server
expects no checks: nothing is kept there.
"""

from __future__ import annotations

import ast
import os

# Source bytes of the trees kept at once: a tree takes ~23 bytes per source byte (ExecuTorch),
# so ~6 MiB, a small part of a worker's peak.
BUDGET = 256 * 1024
# The same for the checked files' trees (a budget always full). Test modules are left out: few
# are imported, and on ExecuTorch they are ~45% of the bytes checked, so this budget without
# them reaches further back (44 of 87 summaries of a checked file, against 31 with them).
RECENT_BUDGET = 128 * 1024


class TreeHandover:
    def __init__(self, budget: int = BUDGET, recent_budget: int = RECENT_BUDGET):
        self.budget = budget
        self.recent_budget = recent_budget
        self._pending: set[str] = set()  # absolute paths still to be checked by this process
        self._kept: dict[str, tuple[bytes, ast.Module]] = {}  # path -> (the bytes parsed, tree)
        self._size = 0
        # The other way round: the engine's trees of the files checked last, for a summary
        # asked of one of them by a check that follows soon (a sibling that imports it).
        self._recent: dict[str, tuple[bytes, ast.Module]] = {}
        self._recent_size = 0
        self.handed = 0  # trees the engine took instead of parsing, for the benchmarks
        self.reused = 0  # checked files' trees a summary took instead of parsing

    def expect(self, paths) -> None:
        """These (absolute) files are checked by this process next: the ones expected before
        and not checked are forgotten, with their trees, and so are the checked files' trees."""
        self._pending = set(paths)
        self._kept.clear()
        self._size = 0
        self._recent.clear()
        self._recent_size = 0

    def expects(self, path: str) -> bool:
        return path in self._pending

    def keep(self, path: str, data: bytes, tree: ast.Module) -> bool:
        """The tree a summary parsed from `data`, the content of `path`, an expected file.
        False when it is not kept (not expected, a tree kept already, or over the budget)."""
        if path not in self._pending or path in self._kept or self._size + len(data) > self.budget:
            return False
        self._kept[path] = (data, tree)
        self._size += len(data)
        return True

    def kept(self) -> list[str]:
        """The expected files whose tree is kept, in the order they were parsed."""
        return list(self._kept)

    def take(self, path: str, data: bytes) -> ast.Module | None:
        """The tree kept for `path` when it was parsed from exactly `data` (handed over once)."""
        kept = self._drop(path)
        if kept is None or kept[0] != data:
            return None  # none kept, or the file was edited since the summary read it
        self.handed += 1
        return kept[1]

    def peek(self, path: str, data: bytes) -> ast.Module | None:
        """The tree kept for `path` if it was parsed from exactly `data`, left for the engine:
        another reader of the module (a project scan) reads it instead of parsing the file
        again. It must not change the tree (facts kept on nodes are the nodes' own)."""
        kept = self._kept.get(path)
        return kept[1] if kept is not None and kept[0] == data else None

    def checked(self, path: str) -> None:
        """The check of `path` is over (parsed or not): nothing is kept for it any more."""
        self._pending.discard(path)
        self._drop(path)

    def _drop(self, path: str) -> tuple[bytes, ast.Module] | None:
        kept = self._kept.pop(path, None)
        if kept is not None:
            self._size -= len(kept[0])
        return kept

    def checked_tree(self, path: str, data: bytes, tree: ast.Module) -> None:
        """The engine's tree of an expected file it has just checked, parsed from `data`: kept
        for a summary of it while the newest trees fit the budget, the oldest dropped."""
        if path not in self._pending or len(data) > self.recent_budget or _is_test(path):
            return
        self._recent[path] = (data, tree)
        self._recent_size += len(data)
        while self._recent_size > self.recent_budget:
            oldest = next(iter(self._recent))
            self._recent_size -= len(self._recent.pop(oldest)[0])

    def checked_parse(self, path: str, data: bytes) -> ast.Module | None:
        """The engine's tree of `path` when it was parsed from exactly `data` (handed once)."""
        recent = self._recent.pop(path, None)
        if recent is None:
            return None
        self._recent_size -= len(recent[0])
        if recent[0] != data:
            return None
        self.reused += 1
        return recent[1]


class KeptTree:
    """The tree a fact's parse kept for the reader that asked for it (`ProjectIndex.fact_at(...,
    keep_tree=True)`): one tree at most, until that reader takes it or leaves it."""

    __slots__ = ("held",)

    def __init__(self) -> None:
        self.held: tuple[str, str, ast.Module, bytes] | None = None  # (path, digest, tree, bytes)

    def keep(self, path: str, digest: str, tree: ast.Module, data: bytes) -> None:
        self.held = (path, digest, tree, data)

    def take(self, path: str, data: bytes) -> ast.Module | None:
        """The tree kept for `path` if it was parsed from exactly `data` (None otherwise);
        handed over once, and dropped in any case."""
        kept, self.held = self.held, None
        # Its bytes compared, not their digests: the caller's bytes are not hashed again.
        if kept is None or kept[0] != os.path.abspath(path) or kept[3] != data:
            return None
        return kept[2]

    def drop(self) -> None:
        """The reader did not take the tree (the module names no caller): a file this process
        checks later gets it (`HANDOVER`) rather than parsing it again."""
        kept, self.held = self.held, None
        if kept is not None and HANDOVER.expects(kept[0]):
            HANDOVER.keep(kept[0], kept[3], kept[2])


def _is_test(path: str) -> bool:
    name = os.path.basename(path)
    return name.startswith("test_") or name.endswith("_test.py")


HANDOVER = TreeHandover()

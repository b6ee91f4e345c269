"""What an editor adds to the project index (`project.ProjectIndex`): its unsaved buffers,
which count as the files they edit, and its file watcher (`watched_files`), which vouches for
the files under its folders between checks.

A command-line index has neither (an empty overlay, no watcher); `qlint check -` has one
buffer, the text it checks.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable

from qlint.analysis.names import content_keys
from qlint.analysis.names.watched_files import WatchedFiles
from qlint.diagnostic import Range
from qlint.source import LineIndex, read_source

__all__ = ["EditorOverlay"]


class EditorOverlay:
    def __init__(self, buffers: dict[str, str] | None = None):
        # absolute path -> the buffer's text; the one dict for the index's life (it is shared).
        self.buffers = {os.path.abspath(k): v for k, v in (buffers or {}).items()}
        # What an editor's file watcher vouches for between checks (`watch`): None, every
        # check stats what it depends on.
        self.watched: WatchedFiles | None = None

    def watch(self, roots: Iterable[str]) -> WatchedFiles:
        """The editor's watcher reports every file created, changed or deleted under `roots`
        from now on (`files_changed`)."""
        self.watched = WatchedFiles(roots)
        return self.watched

    def set_buffer(self, path: str, text: str | None) -> bool:
        """The buffer of `path` (absolute) holds `text` now, or closed (None: the file on disk
        counts again). True when a buffer counts as a file where none was, or no longer:
        module lookups kept across checks may find another file now."""
        watched = self.watched
        appeared_or_went = (path in self.buffers) != (text is not None)
        if appeared_or_went and watched is not None:
            watched.found.clear()
        if text is None:
            self.buffers.pop(path, None)
            if watched is not None:  # the disk counts again: its key as it is now
                watched.keys.pop(path, None)
        else:
            self.buffers[path] = text
        return appeared_or_went

    def files_changed(self, changes: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
        """The watcher's events ((path, `FileChangeType`)), with absolute paths: what the
        watcher kept of those files goes, and their digests (an open buffer stays the truth
        for its module; its file's key goes all the same)."""
        changes = [(os.path.abspath(p), kind) for p, kind in changes]
        if self.watched is not None:
            self.watched.forget(changes)
        for path, _ in changes:
            content_keys.forget_digest(path)
        return changes

    def text(self, path: str) -> str | None:
        """A module's text: its unsaved buffer if open, else the file (None if unreadable)."""
        path = os.path.abspath(path)
        if path in self.buffers:
            return self.buffers[path]
        return read_source(path)

    def locate(self, path: str, node: ast.AST) -> tuple[Range, str]:
        """Range (in code points; ast columns are UTF-8 bytes) and source text of a node of
        another module, from one read of that module."""
        lines = LineIndex(self.text(path) or "")
        rng = lines.range_of(node)
        return rng, lines.text[lines.offset(rng.start) : lines.offset(rng.end)]

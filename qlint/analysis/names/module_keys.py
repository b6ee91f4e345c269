"""What identifies a module's content as the project index (`project.ProjectIndex`) sees it,
and its digest: an editor's buffer, else the file (its stat, or what the editor's watcher kept
of it), or, for a lookup's standard or installed names under its roots (`shadowed_names`),
the entries there. Everything that remembers facts about other modules compares these.
"""

from __future__ import annotations

import functools
import os

from qlint.analysis.names import content_keys, shadowed_names

__all__ = ["ModuleKeys"]


class ModuleKeys:
    def __init__(self, editor, settings: type):
        self._editor = editor  # its buffers are the modules they edit; its watcher vouches for keys
        self._buffers = editor.buffers  # the same dict for the editor's life: read at every key
        # Whose run settings hold (`fixed_content`, `run_keys`, `fixed_layout`): read at each ask.
        self._settings = settings
        # `tried_digest` of the check (of the run: fixed layout), and the roots' entries it read.
        self._shadows: dict[str, str] = {}
        self._shadow_roots: dict[str, str] = {}

    def begin_check(self) -> None:
        """A new check: the entries under roots are listed again, unless the layout is fixed."""
        if not self._settings.fixed_layout:
            self._shadows.clear()
            self._shadow_roots.clear()

    def content_key(self, path: str, normal: bool = False) -> tuple | None:
        """What identifies the module's content now (its buffer, else its stat; None: absent),
        for everything that remembers facts about other modules (`content_keys`). `normal`:
        the path is absolute and normalised already. A lookup's standard or installed names
        under its roots (`shadowed_names`, among a kept fact's reads) are keyed by their digest."""
        if path.startswith(shadowed_names.PREFIX):
            return (shadowed_names.PREFIX, self.tried_digest(path))
        buffers, watched = self._buffers, self._editor.watched
        if watched is not None:
            if not normal:
                path = os.path.abspath(path)
            text = buffers.get(path)
            return ("overlay", hash(text)) if text is not None else watched.key(path)
        settings = self._settings
        if not settings.fixed_content:
            return content_keys.content_key(buffers, path, normal)
        if buffers and (path if normal else _absolute(path)) in buffers:
            # A buffer is never frozen; the files beside it hold still as in a run over a tree
            # (`qlint check -`: the kept answers of torch's builder.py re-stat'ed its imports'
            # modules ~13,000 times).
            return content_keys.content_key(buffers, path, normal)
        keys = settings.run_keys
        if path not in keys:
            keys[path] = content_keys.content_key(buffers, path, normal)
        return keys[path]

    def digest(self, path: str, key: tuple | None = None) -> str:
        """sha256 of the module as this index sees it ("" when absent), hashed once per content.
        A lookup's standard or installed names under its roots (`shadowed_names`, a kept
        fact's read) have their own digest (`tried_digest`)."""
        if path.startswith(shadowed_names.PREFIX):
            return self.tried_digest(path)
        if key is None and self._editor.watched is not None:
            key = self.content_key(path)  # the kept key, not a fresh stat
            if key is None:
                return ""
        return content_keys.digest(self._buffers, path, key)

    def tried_digest(self, path: str) -> str:
        """The digest a path of `tried_before` is recorded with: "" (absent), or for the
        standard or installed names under roots (`shadowed_names`) what those entries are,
        listed once per check (per run with a fixed layout)."""
        if not path.startswith(shadowed_names.PREFIX):
            return ""
        digest = self._shadows.get(path)
        if digest is None:
            digest = self._shadows[path] = shadowed_names.digest_now(shadowed_names.roots_of(path), self._shadow_roots)
        return digest


@functools.lru_cache(maxsize=65_536)
def _normalised(path: str) -> str:
    return os.path.normpath(path)


def _absolute(path: str) -> str:
    """`os.path.abspath(path)`; an absolute path's is lexical (`normpath`), kept per path: a
    check of one buffer (`qlint check -`) asks for the keys of the modules its kept answers
    were read from ~12,000 times (torch's eval_frame.py), each time whether the buffer is one."""
    return _normalised(path) if path[:1] == os.sep else os.path.abspath(path)

"""The words of a module's import statements, from its bytes: what the wrapper index keeps
of each module (`wrapper_reads`) to find, in a few scans, the modules that may import a name
or a module, and what the helper search reads of a module to ask as the index asks
(`wrapper_chains._as_module`).
"""

from __future__ import annotations

from qlint.analysis.names.project_words import words_of
from qlint.lazy_patterns import lazy


def import_words(data: bytes) -> frozenset[bytes]:
    """The words of every row holding `import` (a superset of the import statements: prose
    too), with the rows a bracket or line continuations carry the statement over."""
    rows = []
    end = len(data)
    # Most modules continue no row with a backslash (`\\` before a row's end or, as a bracket
    # ends a statement here, before `)`): their rows are not looked back and forth from. One
    # search led by the backslash (a byte most modules hold rarely or never), not three scans of
    # every module for the pairs (ExecuTorch: 0.09 s of the index's CPU, 0.01 s as one search).
    continued = _CONTINUATION.search(data) is not None
    at = data.find(b"import")
    while at != -1:
        start = data.rfind(b"\n", 0, at) + 1
        while continued and start > 1 and _continued(data, start - 1):  # `from pkg \` on the row before
            start = data.rfind(b"\n", 0, start - 1) + 1
        stop = data.find(b"\n", at)
        stop = end if stop == -1 else stop
        opened = data.find(b"(", at, stop)
        if opened != -1:
            stop = max(stop, _closing(data, opened + 1))
        while continued and stop < end and _continued(data, stop):
            nxt = data.find(b"\n", stop + 1)
            stop = end if nxt == -1 else nxt
        rows.append(data[start:stop])
        at = data.find(b"import", stop)
    # One split of all the rows (a row ends a word: the line break joining them does too),
    # as `words_of` splits (a translation and a split: no pattern).
    return words_of(b"\n".join(rows))


def _closing(data: bytes, at: int) -> int:
    """Where the first `)` from `at` on stands outside a comment (the end where none does):
    an import's bracket closes there, as `text_imports` reads it. A `)` in a comment on the
    bracket's row (`from m import (  # see f()`) closes nothing: the names on the rows after
    it are the statement's (read as the row alone, a module importing a wrapper so was never
    read for the index, and a batch run missed what a check of the one file found)."""
    while True:
        close = data.find(b")", at)
        if close == -1:
            return len(data)
        if data.find(b"#", max(data.rfind(b"\n", 0, close) + 1, at), close) == -1:
            return close
        at = data.find(b"\n", close)  # the rest of that row is the comment's
        if at == -1:
            return len(data)


_CONTINUATION = lazy(rb"\\[\n\r)]")  # what `_continued` may find, anywhere in a module


def _continued(data: bytes, newline: int) -> bool:
    """Whether the row ending at the `\n` at `newline` ends with a line continuation."""
    before = data[max(0, newline - 2) : newline]
    return before.endswith(b"\\") or before == b"\\\r"

"""Per-repository patches in the form `git apply` accepts on a clean checkout.

`difflib.unified_diff` is close but not enough: it splits lines with `str.splitlines`
(which also breaks at form feeds, `\\x1c`, U+2028: characters that real sources carry and
that git does not treat as line ends), and it has no `\\ No newline at end of file` marker,
so a fix in a file without a final newline would not apply. Lines here end at `\\n` only,
`\\r` stays part of the line as git sees it, and each file's hunks are encoded in the
file's own encoding (its PEP 263 cookie), so the patch matches the bytes on disk.
"""

from __future__ import annotations

import difflib
import io
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass

_NO_EOL = "\\ No newline at end of file\n"


@dataclass(frozen=True)
class FileChange:
    path: str  # relative to the repository's top, `/`-separated
    original: str
    fixed: str


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def file_diff(change: FileChange, context: int = 3) -> str:
    """One file's diff with git's header (`diff --git a/… b/…`); "" when nothing changed."""
    if change.original == change.fixed:
        return ""
    out = [f"diff --git a/{change.path} b/{change.path}\n"]
    body = difflib.unified_diff(
        _lines(change.original),
        _lines(change.fixed),
        fromfile=f"a/{change.path}",
        tofile=f"b/{change.path}",
        n=context,
    )
    for line in body:
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\n") + "\n")
        elif line.endswith("\n"):
            out.append(line)
        else:  # the last line of a file without a final newline
            out.append(line + "\n" + _NO_EOL)
    return "".join(out)


def source_encoding(text: str) -> str:
    """The encoding a source file declares (utf-8 without a cookie)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(text.encode("utf-8", "surrogatepass")).readline)
    except SyntaxError:
        return "utf-8"
    return "utf-8" if encoding == "utf-8-sig" else encoding


def patch_bytes(changes: Iterable[FileChange]) -> bytes:
    """A whole repository's patch, files in path order, each in its own encoding."""
    chunks = []
    for change in sorted(changes, key=lambda c: c.path):
        diff = file_diff(change)
        if diff:
            chunks.append(diff.encode(source_encoding(change.fixed), "surrogateescape"))
    return b"".join(chunks)


def patch_text(changes: Iterable[FileChange]) -> str:
    """The same patch as text, for `--diff` on a terminal."""
    return "".join(file_diff(c) for c in sorted(changes, key=lambda c: c.path))

"""Applying fixes: non-overlapping edits, repeated to a fixpoint, re-parsed, written atomically.

A fix is accepted whole or not at all; when two fixes touch the same text the later one
waits for the next round, after the file has been re-checked with the first applied.
"""

from __future__ import annotations

import ast
import difflib
import os
import tempfile
from dataclasses import dataclass

from qlint.analysis.names.project import ProjectIndex
from qlint.diagnostic import Diagnostic, Edit
from qlint.engine import FileResult, check_source
from qlint.settings import Settings
from qlint.source import DecodeError, LineIndex, decode_source

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    path: str
    original: str
    fixed: str
    applied: int
    remaining: FileResult
    error: str | None = None

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def apply_edits(text: str, diagnostics: list[Diagnostic], unsafe: bool) -> tuple[str, int]:
    """Apply every applicable fix that does not overlap an earlier accepted one."""
    lines = LineIndex(text)
    accepted: list[tuple[int, int, str]] = []
    count = 0
    for diag in sorted(diagnostics, key=Diagnostic.sort_key):
        if diag.fix is None or not diag.fix.applies(unsafe) or diag.fix.foreign(diag.path):
            continue
        spans = [(lines.offset(e.range.start), lines.offset(e.range.end), e.content) for e in diag.fix.edits]
        if any(_overlaps(s, a) for s in spans for a in accepted):
            continue
        accepted.extend(spans)
        count += 1
    if not accepted:
        return text, 0
    out = []
    cursor = 0
    # Insertions at the same offset keep the order their fixes were accepted in.
    for start, end, content in sorted(accepted, key=lambda s: (s[0], s[1])):
        out.append(text[cursor:start])
        out.append(content)
        cursor = max(cursor, end)
    out.append(text[cursor:])
    return "".join(out), count


def _overlaps(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    if a[0] == a[1] == b[0] == b[1]:
        return True  # two insertions at one point: order would be a guess
    # Touching spans do not overlap; an insertion strictly inside a replaced span does.
    return a[0] < b[1] and b[0] < a[1]


def fix_text(text: str, path: str, settings: Settings, unsafe: bool, project: ProjectIndex | None = None) -> FixOutcome:
    """Fix an in-memory text to a fixpoint. Never returns text that does not parse."""
    project = project or ProjectIndex.for_path(path)
    current, applied = text, 0
    result = check_source(current, path, settings, project)
    for _ in range(MAX_ROUNDS):
        candidate, count = apply_edits(current, result.diagnostics, unsafe)
        if count == 0:
            break
        try:
            ast.parse(candidate, filename=path)
        except (SyntaxError, ValueError, RecursionError) as exc:
            return FixOutcome(
                path,
                text,
                current,
                applied,
                result,
                f"a fix would not re-parse ({exc}); kept the last valid text",
            )
        current, applied = candidate, applied + count
        if path in project.overlay:
            project.set_overlay(path, current)
        result = check_source(current, path, settings, project)
    return FixOutcome(path, text, current, applied, result)


def fix_file(path: str, settings: Settings, unsafe: bool, write: bool) -> FixOutcome:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        text = decode_source(data)
    except (OSError, DecodeError) as exc:
        result = check_source(data, path, settings) if isinstance(exc, DecodeError) else FileResult(path)
        return FixOutcome(path, "", "", 0, result, f"cannot read: {exc}")
    outcome = fix_text(text, path, settings, unsafe)
    if write and outcome.changed and outcome.error is None:
        write_atomic(path, outcome.fixed, data)
    return outcome


def write_atomic(path: str, text: str, original: bytes) -> None:
    """Write in the file's own encoding via a temp file and rename: never a half-written file."""
    import io
    import tokenize

    encoding, _ = tokenize.detect_encoding(io.BytesIO(original).readline)
    data = text.encode("utf-8" if encoding == "utf-8-sig" else encoding)
    if original.startswith(b"\xef\xbb\xbf"):
        data = b"\xef\xbb\xbf" + data
    directory = os.path.dirname(os.path.abspath(path))
    real = os.path.realpath(path)
    fd, tmp = tempfile.mkstemp(prefix=".qlint-", suffix=".tmp", dir=os.path.dirname(real) or directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, os.stat(real).st_mode & 0o7777)
        os.replace(tmp, real)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def unified_diff(outcome: FixOutcome) -> str:
    return "".join(
        difflib.unified_diff(
            outcome.original.splitlines(keepends=True),
            outcome.fixed.splitlines(keepends=True),
            fromfile=f"a/{outcome.path}",
            tofile=f"b/{outcome.path}",
        )
    )


__all__ = [
    "Edit",
    "FixOutcome",
    "apply_edits",
    "fix_file",
    "fix_text",
    "unified_diff",
    "write_atomic",
]

"""Applying fixes: non-overlapping edits, repeated to a fixpoint, re-parsed, written atomically.

A fix is accepted whole or not at all; when two fixes touch the same text the later one
waits for the next round, after the file has been re-checked with the first applied. The
re-parse is the engine's own (`parse_module`, same recursion budget as `check`), and the
caller's `ProjectIndex` is never changed: the file's intermediate texts live in a copy of
its overlay. Writing is `qlint.file_writes` (only over unchanged bytes, keeping owner and
links).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field

from qlint.analysis.names.project import ProjectIndex
from qlint.diagnostic import Diagnostic, Edit
from qlint.engine import FileResult, check_source, parse_module
from qlint.file_writes import ChangedOnDisk, replace_file
from qlint.settings import Settings
from qlint.source import DecodeError, LineIndex, decode_source, split_lines

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    path: str
    original: str
    fixed: str
    applied: int
    remaining: FileResult
    error: str | None = None
    # The check of the text as read, before any fix: what stays true if nothing is written.
    initial: FileResult | None = field(default=None, repr=False)
    data: bytes | None = field(default=None, repr=False)  # the bytes read, for the write check

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
    in_overlay = os.path.abspath(path) in project.overlay
    if in_overlay:
        project = project.private_copy()  # the rounds below move the file's overlay along
    current, applied = text, 0
    result = initial = check_source(current, path, settings, project)
    for _ in range(MAX_ROUNDS):
        candidate, count = apply_edits(current, result.diagnostics, unsafe)
        if count == 0:
            break
        try:
            parse_module(candidate, path)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            error = f"a fix would not re-parse ({exc}); kept the last valid text"
            return FixOutcome(path, text, current, applied, result, error, initial)
        current, applied = candidate, applied + count
        if in_overlay:
            project.set_overlay(path, current)
        result = check_source(current, path, settings, project)
    return FixOutcome(path, text, current, applied, result, None, initial)


def fix_file(path: str, settings: Settings, unsafe: bool, write: bool) -> FixOutcome:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        text = decode_source(data)
    except (OSError, DecodeError) as exc:
        result = check_source(data, path, settings) if isinstance(exc, DecodeError) else FileResult(path)
        what = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return FixOutcome(path, "", "", 0, result, f"cannot read: {what}", result)
    outcome = fix_text(text, path, settings, unsafe)
    outcome.data = data
    if write and outcome.changed and outcome.error is None:
        try:
            write_atomic(path, outcome.fixed, data)
        except ChangedOnDisk:
            outcome.error = "skipped: changed on disk while fixing"
        except OSError as exc:
            outcome.error = f"cannot write: {exc.strerror or exc}"
    return outcome


def write_atomic(path: str, text: str, original: bytes) -> None:
    """Replace the file that held `original` with `text` (see `qlint.file_writes`)."""
    replace_file(path, text, original)


def unified_diff(outcome: FixOutcome) -> str:
    return text_diff(outcome.path, outcome.original, outcome.fixed)


def text_diff(path: str, original: str, fixed: str) -> str:
    """git-style unified diff of one file (`a/` and `b/` prefixes, lines split as Python does)."""
    return "".join(
        difflib.unified_diff(split_lines(original), split_lines(fixed), fromfile=f"a/{path}", tofile=f"b/{path}")
    )


__all__ = [
    "ChangedOnDisk",
    "Edit",
    "FixOutcome",
    "apply_edits",
    "fix_file",
    "fix_text",
    "unified_diff",
    "write_atomic",
]

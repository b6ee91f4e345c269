"""`Diagnostic` <-> LSP: positions in the editor's code units, severities, the fix in `data`.

The engine counts columns in code points (Python string indices). LSP counts them in the
position encoding negotiated at `initialize`: UTF-16 code units unless the client offers
another, so an emoji is one column to qlint and two to the editor. Every position crosses
that boundary here and nowhere else.

A published diagnostic carries its fix (edits in engine coordinates) and the document
version it was computed for in `data`, so a code action is answered from the diagnostic the
editor sends back, without re-linting, and a stale one (the buffer changed since) is refused
instead of editing the wrong text.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path

from qlint import registry
from qlint.diagnostic import Applicability, Diagnostic, Edit, Fix, Position, Range
from qlint.lsp.verdicts import verdict_from_json
from qlint.rules.base import Severity
from qlint.source import LineIndex

SOURCE = "qlint"
UTF16 = types.PositionEncodingKind.Utf16.value
UTF8 = types.PositionEncodingKind.Utf8.value
UTF32 = types.PositionEncodingKind.Utf32.value
# The rule's severity (a fact of the rule class, served by the registry) in LSP terms.
SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


def units(text: str, encoding: str = UTF16) -> int:
    """Length of `text` in the code units of `encoding`."""
    if text.isascii() or encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)  # astral: a surrogate pair


def col_from_units(line: str, count: int, encoding: str = UTF16) -> int:
    """The code-point column `count` code units into `line` (clamped to the line; a
    position inside a character, which a correct client never sends, rounds up)."""
    if line.isascii() or encoding == UTF32:
        return min(max(count, 0), len(line))
    seen = 0
    for index, ch in enumerate(line):
        if seen >= count:
            return index
        seen += units(ch, encoding)
    return len(line)


class DocumentText:
    """One text with both coordinate systems: engine `Position`s and LSP positions."""

    def __init__(self, text: str, encoding: str = UTF16, path: str | None = None):
        self.text = text
        self.path = os.path.abspath(path) if path else None
        self.index = LineIndex(text)
        self.encoding = encoding

    def _row_and_line(self, row: int) -> tuple[int, str]:
        row = min(max(row, 1), len(self.index.starts))
        return row, self.index.line(row)

    def to_lsp(self, pos: Position) -> types.Position:
        row, line = self._row_and_line(pos.row)
        col = min(max(pos.col, 0), len(line))
        return types.Position(line=row - 1, character=units(line[:col], self.encoding))

    def from_lsp(self, pos: types.Position) -> Position:
        row, line = self._row_and_line(pos.line + 1)
        return Position(row, col_from_units(line, pos.character, self.encoding))

    def range_to_lsp(self, rng: Range) -> types.Range:
        return types.Range(start=self.to_lsp(rng.start), end=self.to_lsp(rng.end))

    def range_from_lsp(self, rng: types.Range) -> Range:
        return Range(self.from_lsp(rng.start), self.from_lsp(rng.end))

    def offset_to_lsp(self, offset: int) -> types.Position:
        return self.to_lsp(self.index.position(offset))

    def text_edits(self, edits: Iterable[Edit]) -> list[types.TextEdit]:
        return [types.TextEdit(range=self.range_to_lsp(e.range), new_text=e.content) for e in edits]


def diff_edits(doc: DocumentText, new_text: str) -> list[types.TextEdit]:
    """Edits that turn `doc` into `new_text`, one per changed block of lines, so applying a
    whole-file fix keeps the editor's cursor, folds and undo steps where nothing changed."""
    old_lines = doc.text.splitlines(keepends=True)
    new_lines = new_text.splitlines(keepends=True)
    starts = [0]
    for line in old_lines:
        starts.append(starts[-1] + len(line))
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    edits = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edits.append(
            types.TextEdit(
                range=types.Range(start=doc.offset_to_lsp(starts[i1]), end=doc.offset_to_lsp(starts[i2])),
                new_text="".join(new_lines[j1:j2]),
            )
        )
    return edits


def severity_of(code: str) -> types.DiagnosticSeverity:
    return SEVERITY[registry.severity(code)]


def tags_of(code: str) -> list[types.DiagnosticTag] | None:
    """Findings about text that can simply go (an unused suppression comment): greyed out."""
    rule = registry.rules().get(code)
    return [types.DiagnosticTag.Unnecessary] if rule is not None and rule.unnecessary else None


def to_lsp_diagnostic(
    diag: Diagnostic,
    doc: DocumentText,
    version: int | None,
    text_of: Callable[[str], str | None] = lambda path: None,
) -> types.Diagnostic:
    """`text_of(path)` gives another file's text (open buffer or disk) so the ranges of
    related information that point there are converted against the right line."""
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=from_fs_path(info.path) or info.path, range=_range_in(info, doc, text_of)),
            message=info.message,
        )
        for info in diag.related
    ]
    return types.Diagnostic(
        range=doc.range_to_lsp(diag.range),
        message=diag.message,
        severity=severity_of(diag.code),
        code=diag.code,
        code_description=types.CodeDescription(href=diag.url),
        source=SOURCE,
        tags=tags_of(diag.code),
        related_information=related or None,
        data={"version": version, "name": diag.name, "noqaRow": diag.noqa_row, "fix": fix_to_json(diag.fix)},
    )


def _range_in(info, doc: DocumentText, text_of: Callable[[str], str | None]) -> types.Range:
    if doc.path is not None and os.path.abspath(info.path) == doc.path:
        return doc.range_to_lsp(info.range)
    text = text_of(info.path)
    if text is None:  # unreadable: code points are the best guess left
        start, end = info.range.start, info.range.end
        return types.Range(
            start=types.Position(line=start.row - 1, character=start.col),
            end=types.Position(line=end.row - 1, character=end.col),
        )
    return DocumentText(text, doc.encoding).range_to_lsp(info.range)


def from_lsp_diagnostic(lsp: types.Diagnostic, doc: DocumentText, path: str, version: int | None) -> Diagnostic | None:
    """The qlint `Diagnostic` an editor sent back, or None when it is not ours, carries no
    data (the client dropped it) or was computed for another version of the buffer."""
    data = lsp.data
    if lsp.source != SOURCE or not isinstance(data, dict) or data.get("version") != version:
        return None
    noqa_row = data.get("noqaRow")
    return Diagnostic(
        code=str(lsp.code),
        name=str(data.get("name") or ""),
        message=lsp.message,
        path=path,
        range=doc.range_from_lsp(lsp.range),
        fix=fix_from_json(data.get("fix")),
        noqa_row=noqa_row if isinstance(noqa_row, int) else None,
        runtime=verdict_from_json(data.get("runtime")),
    )


def fix_to_json(fix: Fix | None) -> dict[str, Any] | None:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability.value,
        "message": fix.message,
        "edits": [
            {
                "range": [e.range.start.row, e.range.start.col, e.range.end.row, e.range.end.col],
                "content": e.content,
                "path": e.path,
            }
            for e in fix.edits
        ],
    }


def fix_from_json(data: Any) -> Fix | None:
    """The inverse of `fix_to_json`; None for anything malformed (it came from the client)."""
    if not isinstance(data, dict):
        return None
    try:
        edits = []
        for edit in data["edits"]:
            row, col, end_row, end_col = (int(v) for v in edit["range"])
            if not isinstance(edit["content"], str):
                return None
            path = edit.get("path")
            if path is not None and not isinstance(path, str):
                return None
            edits.append(Edit(Range.of(row, col, end_row, end_col), edit["content"], path))
        return Fix(Applicability(data["applicability"]), str(data["message"]), tuple(edits))
    except (KeyError, TypeError, ValueError):
        return None

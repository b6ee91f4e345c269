"""Code actions: quick fixes and `# noqa` from the diagnostic itself, fix-all from the fixer.

A quick fix applies the edits the diagnostic carries; "Disable QL101 for this line" writes
or extends the `# noqa` comment on the row the engine matches suppressions against
(`noqa_row`), and only where a comment can go (not inside a multi-line string, not after a
backslash continuation). Fix-all is the one action that needs the engine: fixes are
applied to a fixpoint, re-linting between rounds, exactly as `qlint fix` does.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Callable, Sequence

from lsprotocol import types
from pygls.uris import from_fs_path

from qlint.diagnostic import Applicability, Diagnostic, Edit, Range
from qlint.lsp.convert import DocumentText, diff_edits
from qlint.lsp.verdicts import fix_title_suffix
from qlint.suppressions import parse_suppressions

FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.qlint"
QUICK_FIX_KIND = types.CodeActionKind.QuickFix.value
CODE_ACTION_KINDS = (types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL_KIND)

# Builds the WorkspaceEdit for the request's document from a list of TextEdits.
EditFor = Callable[[list[types.TextEdit]], types.WorkspaceEdit]


def kind_wanted(kind: str, only: Sequence[str] | None) -> bool:
    """LSP kinds are hierarchical: asking for `source.fixAll` (or `source`) includes ours."""
    return only is None or any(kind == k or kind.startswith(f"{k}.") for k in only)


def workspace_edit(uri: str, version: int | None, edits: list[types.TextEdit], versioned: bool) -> types.WorkspaceEdit:
    """A versioned document edit when the client supports it: it then refuses to apply the
    edit to a buffer that changed since, instead of corrupting it."""
    if versioned:
        identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=identifier, edits=edits)])
    return types.WorkspaceEdit(changes={uri: edits})


def quick_fix(
    diag: Diagnostic,
    lsp_diag: types.Diagnostic,
    doc: DocumentText,
    edit_for: EditFor,
    text_of: Callable[[str], str | None] = lambda path: None,
):
    if diag.fix is None or not diag.fixable:
        return None
    unsafe = diag.fix.applicability is Applicability.UNSAFE
    if diag.fix.foreign(diag.path):
        edit = _foreign_edit(diag, doc.encoding, text_of)
        if edit is None:
            return None
    else:
        edit = edit_for(doc.text_edits(diag.fix.edits))
    refuted = diag.runtime is not None and diag.runtime.fix_verified is False
    return types.CodeAction(
        title=diag.fix.message + (" (unsafe)" if unsafe else "") + fix_title_suffix(diag.runtime),
        kind=QUICK_FIX_KIND,
        diagnostics=[lsp_diag],
        is_preferred=not unsafe and not refuted,
        edit=edit,
    )


def _foreign_edit(diag: Diagnostic, encoding: str, text_of: Callable[[str], str | None]) -> types.WorkspaceEdit | None:
    """The fix of a packet held by another module's constant edits that module (open buffer
    or file on disk); unversioned, since that document may not be open."""
    changes: dict[str, list[types.TextEdit]] = {}
    for path in dict.fromkeys(e.path or diag.path for e in diag.fix.edits):
        text = text_of(path)
        if text is None:
            return None
        target = DocumentText(text, encoding, path)
        edits = [e for e in diag.fix.edits if (e.path or diag.path) == path]
        changes[from_fs_path(path) or path] = target.text_edits(edits)
    return types.WorkspaceEdit(changes=changes)


def disable_for_line(diag: Diagnostic, lsp_diag: types.Diagnostic, doc: DocumentText, edit_for: EditFor):
    edit = noqa_edit(doc, diag.noqa_row or diag.range.start.row, diag.code)
    if edit is None:
        return None
    return types.CodeAction(
        title=f"Disable {diag.code} for this line",
        kind=QUICK_FIX_KIND,
        diagnostics=[lsp_diag],
        edit=edit_for(doc.text_edits([edit])),
    )


def fix_all(doc: DocumentText, fixed_text: str, edit_for: EditFor) -> types.CodeAction:
    return types.CodeAction(
        title="qlint: fix all auto-fixable problems",
        kind=FIX_ALL_KIND,
        edit=edit_for(diff_edits(doc, fixed_text)),
    )


def noqa_edit(doc: DocumentText, row: int, code: str) -> Edit | None:
    """Append `  # noqa: CODE` to the row, or add the code to the row's existing `# noqa: ...`.

    None when the row's end is not a place for a comment, or a bare `# noqa` already
    suppresses everything there."""
    comment = _row_end(doc.text, row)
    if comment is None:
        return None
    if "noqa" in comment.lower():
        existing = parse_suppressions(doc.text).lines.get(row)
        if existing is not None:
            if existing.codes is None or code in existing.codes:
                return None
            merged = f"# noqa: {', '.join((*existing.codes, code))}"
            return Edit(Range.of(row, existing.col, row, existing.end_col), merged)
    line = doc.index.line(row)
    body_end, line_end = len(line.rstrip()), len(line.rstrip("\r"))
    return Edit(Range.of(row, body_end, row, line_end), f"  # noqa: {code}")


def _row_end(text: str, row: int) -> str | None:
    """The comment at the end of `row` ("" if none) when the row ends in code a comment can
    follow; None inside a multi-line string, after a `\\` continuation, or in untokenizable
    text. Tokenizes only up to the row."""
    comment = ""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.start[0] > row:
                return None
            if tok.start[0] == row:
                if tok.type == tokenize.COMMENT:
                    comment = tok.string
                elif tok.type in (tokenize.NEWLINE, tokenize.NL):
                    return comment
                elif tok.type == tokenize.ENDMARKER:
                    return None
    except (tokenize.TokenError, SyntaxError):
        return None
    return None

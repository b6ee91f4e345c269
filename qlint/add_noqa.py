"""`qlint check --add-noqa`: suppress every current finding where it stands, as ruff's flag does.

The comment goes on the row qlint's suppression matching reads (`noqa_row`, else the
finding's first row): for a multi-line statement that is the row the rule chose, never a
guess. Existing directives are merged, other tools' codes kept in their order
(`# noqa: F401` becomes `# noqa: F401, QL101`), a bare `# noqa` already covers everything,
and another comment on the row stays in front (`# type: ignore  # noqa: QL101`). A row
that ends inside a multi-line string, or with a backslash continuation, cannot carry a
comment there: such findings are reported, not forced. Running it twice adds nothing.
Files are re-parsed before they are written, atomically, in their own encoding.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field

from qlint.diagnostic import Diagnostic
from qlint.fixes import write_atomic
from qlint.source import DecodeError, decode_source

# Findings a noqa comment cannot or should not silence: a file that does not parse, and an
# unused directive (adding a directive to silence a directive helps nobody).
SKIPPED_CODES = frozenset({"QL001", "QL002"})
_DIRECTIVE = re.compile(r"#\s*noqa(?:\s*:\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)


@dataclass
class NoqaResult:
    added: int = 0  # directives written or extended
    files: list[str] = field(default_factory=list)
    unplaceable: list[str] = field(default_factory=list)  # "path:row: CODE ...: why"
    errors: list[str] = field(default_factory=list)


def _row_facts(text: str) -> tuple[dict[int, tokenize.TokenInfo], set[int]]:
    """Comments by row, and the rows whose end lies inside a token (a multi-line string)
    or that continue with a backslash: no comment can be appended to those."""
    comments: dict[int, tokenize.TokenInfo] = {}
    blocked: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok
        for row in range(tok.start[0], tok.end[0]):
            blocked.add(row)  # the token goes on past this row's end
    lines = text.split("\n")
    for row, line in enumerate(lines, start=1):
        body = line.rstrip("\r")
        if body.endswith("\\") and row not in comments:
            blocked.add(row)
    return comments, blocked


def directive_for(comment: str, codes: Iterable[str]) -> str | None:
    """The comment with `codes` merged in; None when nothing needs to change."""
    wanted = list(dict.fromkeys(c.upper() for c in codes))
    match = _DIRECTIVE.search(comment)
    if match is None:
        return f"{comment.rstrip()}  # noqa: {', '.join(wanted)}"
    if match.group("codes") is None:
        return None  # without codes (as qlint.suppressions reads it) it silences the whole row
    present = [c.upper() for c in _CODE.findall(match.group("codes"))]
    missing = [c for c in wanted if c not in present]
    if not missing:
        return None
    merged = f"# noqa: {', '.join(present + missing)}"
    return comment[: match.start()] + merged + comment[match.end() :]


def add_noqa_to_text(text: str, diagnostics: Iterable[Diagnostic]) -> tuple[str, int, list[tuple[int, str]]]:
    """(new text, directives added, [(row, code)] that could not be placed)."""
    by_row: dict[int, list[str]] = {}
    for d in diagnostics:
        if d.code in SKIPPED_CODES:
            continue
        by_row.setdefault(d.noqa_row or d.range.start.row, []).append(d.code)
    if not by_row:
        return text, 0, []
    comments, blocked = _row_facts(text)
    lines = text.split("\n")
    added = 0
    unplaced: list[tuple[int, str]] = []
    for row, codes in sorted(by_row.items()):
        codes = sorted(set(codes))
        if row in blocked or not 1 <= row <= len(lines):
            unplaced.extend((row, c) for c in codes)
            continue
        line = lines[row - 1]
        ending = "\r" if line.endswith("\r") else ""
        body = line[: len(line) - len(ending)]
        tok = comments.get(row)
        if tok is not None:
            start = tok.start[1]
            new = directive_for(tok.string, codes)
            if new is None:
                continue
            body = body[:start] + new + body[tok.end[1] :]
        else:
            body = body.rstrip() + f"  # noqa: {', '.join(codes)}"
        lines[row - 1] = body + ending
        added += 1
    return "\n".join(lines), added, unplaced


def add_noqa(diagnostics: Iterable[Diagnostic], display=str) -> NoqaResult:
    """Write directives into each file that has findings; `display` shows paths in messages."""
    result = NoqaResult()
    by_file: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        by_file.setdefault(d.path, []).append(d)
    for path, diags in sorted(by_file.items()):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            text = decode_source(data)
            new, added, unplaced = add_noqa_to_text(text, diags)
            for row, code in unplaced:
                result.unplaceable.append(
                    f"{display(path)}:{row}: {code}: no `# noqa` can go on this line "
                    "(it ends inside a multi-line string or continues with a backslash)"
                )
            if added:
                ast.parse(new, filename=path)  # a comment never breaks code; if it did, write nothing
                write_atomic(path, new, data)
                result.added += added
                result.files.append(path)
        except (OSError, DecodeError, SyntaxError, ValueError, tokenize.TokenError) as exc:
            result.errors.append(f"{display(path)}: noqa not added: {exc}")
    return result

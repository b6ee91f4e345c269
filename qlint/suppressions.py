"""`# noqa` handling, ruff-compatible: line-level codes, bare `# noqa`, file-level `# qlint: noqa`.

Comments are found with `tokenize`, so a `# noqa` inside a string never suppresses anything.
Only files that mention `noqa` at all pay for tokenizing.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from qlint.diagnostic import Applicability, Diagnostic, Edit, Fix, Range

_LINE = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_FILE = re.compile(r"#\s*qlint\s*:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_CODE = re.compile(r"[A-Z]+[0-9]+")


@dataclass
class NoqaComment:
    row: int
    col: int  # where `#` starts (code points)
    end_col: int  # end of the directive (code points)
    codes: tuple[str, ...] | None  # None: bare noqa
    comment: str
    used: set[str] = field(default_factory=set)


@dataclass
class Suppressions:
    lines: dict[int, NoqaComment] = field(default_factory=dict)
    file_codes: tuple[str, ...] | None = None
    file_all: bool = False

    def suppresses(self, diag: Diagnostic) -> bool:
        if self.file_all or (self.file_codes and diag.code in self.file_codes):
            return True
        noqa = self.lines.get(diag.noqa_row or diag.range.start.row)
        if noqa is None:
            return False
        if noqa.codes is None or diag.code in noqa.codes:
            noqa.used.add(diag.code)
            return True
        return False


def parse_suppressions(text: str) -> Suppressions:
    sup = Suppressions()
    if "noqa" not in text.lower():
        return sup
    try:
        # newline=None: read \r and \r\n as line ends too, as the interpreter does.
        tokens = list(tokenize.generate_tokens(io.StringIO(text, newline=None).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return sup
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        file_match = _FILE.search(tok.string)
        if file_match:
            codes = file_match.group("codes")
            if codes:
                sup.file_codes = (sup.file_codes or ()) + tuple(c.upper() for c in _CODE.findall(codes.upper()))
            else:
                sup.file_all = True
            continue
        match = _LINE.search(tok.string)
        if match:
            codes = match.group("codes")
            row, col = tok.start
            sup.lines[row] = NoqaComment(
                row=row,
                col=col + match.start(),
                end_col=col + match.end(),
                codes=tuple(c.upper() for c in _CODE.findall(codes.upper())) if codes else None,
                comment=tok.string,
            )
    return sup


def unused_noqa(path: str, sup: Suppressions, ran: frozenset[str], rule, lines) -> list[Diagnostic]:
    """Codes of qlint's rules (plugins included) listed in a `# noqa` that suppressed
    nothing, for rules that ran on the file (`ran`).

    Other tools' codes are left alone: qlint cannot know whether ruff needs them.
    """
    out = []
    for noqa in sup.lines.values():
        if not noqa.codes:
            continue
        unused = [c for c in noqa.codes if c in ran and c not in noqa.used]
        if not unused:
            continue
        kept = [c for c in noqa.codes if c not in unused]
        directive = Range.of(noqa.row, noqa.col, noqa.row, noqa.end_col)
        content = f"# noqa: {', '.join(kept)}" if kept else ""
        line = lines.line(noqa.row)
        if not kept and line[noqa.end_col :].strip() == "" and line[: noqa.col].strip():
            # The directive is the whole comment: drop the spaces before it too.
            start = len(line[: noqa.col].rstrip())
            directive = Range.of(noqa.row, start, noqa.row, len(line.rstrip("\r")))
        codes = ", ".join(unused)
        out.append(
            Diagnostic(
                code=rule.code,
                name=rule.name,
                message=f"Unused `noqa` directive (unused: {codes})",
                path=path,
                range=directive,
                fix=Fix(
                    Applicability.SAFE,
                    "Remove unused `noqa` directive",
                    (Edit(directive, content),),
                ),
                noqa_row=noqa.row,
            )
        )
    return out

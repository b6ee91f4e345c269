"""`# noqa` handling, ruff-compatible: line-level codes, bare `# noqa`, file-level `# qlint: noqa`.

Comments are found with `tokenize`, so a `# noqa` inside a string never suppresses anything.
Only files that mention `noqa` at all pay for tokenizing.
"""

from __future__ import annotations

import ast
import io
import re

from qlint.diagnostic import Applicability, Diagnostic, Edit, Fix, Range
from qlint.lazy_patterns import lazy
from qlint.value_classes import field, value_class

_LINE = lazy(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_FILE = lazy(r"#\s*qlint\s*:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_CODE = lazy(r"[A-Z]+[0-9]+")


@value_class
class NoqaComment:
    row: int
    col: int  # where `#` starts (code points)
    end_col: int  # end of the directive (code points)
    codes: tuple[str, ...] | None  # None: bare noqa
    comment: str
    used: set[str] = field(default_factory=set)


@value_class
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


def parse_suppressions(text: str, tree: ast.Module | None = None) -> Suppressions:
    """The file's noqa directives. With the parsed `tree`, only the lines that mention
    `noqa` are tokenized (each from a line that starts outside any string literal), which
    on a big file is two orders of magnitude less work than tokenizing all of it."""
    sup = Suppressions()
    if "noqa" not in text.lower():
        return sup
    comments = _noqa_comments(text, tree) if tree is not None else None
    if comments is None:
        import tokenize

        try:
            # newline=None: read \r and \r\n as line ends too, as the interpreter does.
            tokens = list(tokenize.generate_tokens(io.StringIO(text, newline=None).readline))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return sup
        comments = [(t.start[0], t.start[1], t.string) for t in tokens if t.type == tokenize.COMMENT]
    for row, col, comment in comments:
        # `_FILE` is compiled (3 M instructions, as `_LINE`) only for a comment that can match
        # it: an ASCII comment matches only if it spells `qlint` in some case (the pattern's
        # letters match other characters only outside ASCII).
        file_match = _FILE.search(comment) if not comment.isascii() or "qlint" in comment.lower() else None
        if file_match:
            codes = file_match.group("codes")
            if codes:
                sup.file_codes = (sup.file_codes or ()) + tuple(c.upper() for c in _CODE.findall(codes.upper()))
            else:
                sup.file_all = True
            continue
        match = _LINE.search(comment)
        if match:
            codes = match.group("codes")
            sup.lines[row] = NoqaComment(
                row=row,
                col=col + match.start(),
                end_col=col + match.end(),
                codes=tuple(c.upper() for c in _CODE.findall(codes.upper())) if codes else None,
                comment=comment,
            )
    return sup


def _noqa_comments(text: str, tree: ast.Module) -> list[tuple[int, int, str]] | None:
    """(row, col, text) of the comments on lines that mention noqa; None: tokenize it all."""
    lines = io.StringIO(text).readlines()  # the rows `tokenize` would number
    if len(lines) != text.count("\n") + (not text.endswith("\n")) or "\r" in text or "\f" in text:
        return None  # rows could disagree with the parser's: take the safe path
    found: list[tuple[int, int, str]] = []
    for row in _noqa_rows(text, lines):
        line = lines[row - 1]
        start = row
        while True:
            inside = _string_covering_line_start(tree, start)
            if inside is None:
                break
            start = inside
        if start == row:
            # A line that starts outside any string, with no quote before its first `#`: the
            # comment starts there (no string holds it), as `tokenize` would find it, without
            # its import and first-use regex compile (~5 ms of a one-file check).
            hash_at = line.find("#")
            if hash_at == -1:
                continue  # no comment: the word is code or a string's
            if "'" not in line[:hash_at] and '"' not in line[:hash_at]:
                found.append((row, hash_at, line[hash_at:-1] if line.endswith("\n") else line[hash_at:]))
                continue
        import tokenize

        fragment = "".join(lines[start - 1 : row])
        try:
            for tok in tokenize.generate_tokens(io.StringIO(fragment).readline):
                if tok.type == tokenize.COMMENT and tok.start[0] == row - start + 1:
                    found.append((row, tok.start[1], tok.string))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            pass  # the fragment ends inside brackets or a string: its comments came first
    return found


def _noqa_rows(text: str, lines: list[str]) -> list[int]:
    """The rows (of `lines`, the text's rows split at `\n` only) that mention noqa in any
    case. An ASCII text is lowered once and searched, not each of its rows (a big module has
    thousands and a handful of noqa comments); lowering may lengthen other texts' characters
    (`İ`), so their rows are asked one by one."""
    if not text.isascii():
        return [row for row, line in enumerate(lines, 1) if "noqa" in line.lower()]
    low = text.lower()
    rows: list[int] = []
    row, counted = 1, 0
    at = low.find("noqa")
    while at != -1:
        row += low.count("\n", counted, at)
        rows.append(row)
        end = low.find("\n", at)  # the next row: this one is known to mention it
        if end == -1:
            break
        row, counted = row + 1, end + 1
        at = low.find("noqa", counted)
    return rows


_STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _string_covering_line_start(tree: ast.Module, row: int) -> int | None:
    """The first row of a string literal that spans the line break before `row`, if any.

    String literals sit in the expressions of the innermost statement (or handler, or
    case) around `row`; only that one's own expressions are walked."""
    node: ast.AST = tree
    while True:
        inner = next((c for c in _statement_children(node) if _first_row(c) <= row <= c.end_lineno), None)
        if inner is None:
            break
        node = inner
    if node is tree:
        return None
    first = None
    for name, value in ast.iter_fields(node):
        if name == "cases":  # `case "..." if guard:` holds expressions too
            value = [x for case in value for x in (case.pattern, case.guard) if x is not None]
        elif name in _STATEMENT_FIELDS:
            continue
        for expr in value if isinstance(value, list) else (value,):
            if not isinstance(expr, ast.AST):
                continue
            for sub in ast.walk(expr):
                if isinstance(sub, (ast.Constant, ast.JoinedStr)) and sub.lineno < row <= sub.end_lineno:
                    first = sub.lineno if first is None else min(first, sub.lineno)
    return first


def _statement_children(node: ast.AST) -> list[ast.AST]:
    out: list[ast.AST] = []
    for name in _STATEMENT_FIELDS:
        for child in getattr(node, name, None) or ():
            # A `case` has no position of its own: its statements are the children.
            out.extend(child.body if isinstance(child, ast.match_case) else (child,))
    return out


def _first_row(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", None) or ()
    return min([node.lineno, *(d.lineno for d in decorators)])


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

"""Why a file could not be parsed, said precisely, at the position that caused it.

`ast.parse` errors are not all alike for a user: a real syntax error, syntax that only a
newer Python understands (qlint parses with the interpreter it runs on, and a `type X = int`
on 3.11 is "invalid syntax" there), NUL bytes, or nesting deeper than the parser can take.
Each becomes one QL001 message plus a help line; positions point at the cause, never at
1:1 by default.
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from dataclasses import dataclass

from qlint import lfs_pointer
from qlint.source import LineIndex

RUNNING = sys.version_info[:2]


@dataclass(frozen=True)
class ParseFailure:
    message: str
    row: int
    col: int
    help: str | None = None


_FIX_SYNTAX = "qlint checks only what Python can parse: fix the syntax, or exclude the file"


def describe(exc: BaseException, text: str, lines: LineIndex) -> ParseFailure:
    """One QL001 for an exception `ast.parse` raised on `text`."""
    if lfs_pointer.is_lfs_pointer(text):
        # Not broken Python: a checkout without Git LFS left the pointer where the module is.
        return ParseFailure(lfs_pointer.message("module"), 1, 0, lfs_pointer.HELP)
    if "\0" in text and (isinstance(exc, ValueError) or "null bytes" in str(exc)):
        row, col = _position_of(text, text.index("\0"))
        return ParseFailure("SyntaxError: source contains NUL bytes", row, col, _FIX_SYNTAX)
    if isinstance(exc, (RecursionError, MemoryError)) or "too many nested" in str(exc):
        row, col = deepest_nesting(text)
        help_ = "the parser gives up on nesting this deep (generated code?): exclude the file or flatten it"
        return ParseFailure("SyntaxError: too deeply nested to parse", row, col, help_)
    if isinstance(exc, SyntaxError):
        row = exc.lineno or 1
        col = min(max((exc.offset or 1) - 1, 0), len(lines.line(row)))
        newer = newer_syntax(exc, text, lines)
        if newer is not None:
            version, feature = newer
            message = (
                f"uses syntax of Python {version[0]}.{version[1]} ({feature}); qlint runs on Python "
                f"{RUNNING[0]}.{RUNNING[1]}: run qlint with Python >= {version[0]}.{version[1]} to check this file"
            )
            help_ = "qlint parses with the interpreter it runs on, so none of this file's findings can be known"
            return ParseFailure(message, row, col, help_)
        return ParseFailure(f"SyntaxError: {exc.msg}", row, col, _FIX_SYNTAX)
    return ParseFailure(f"SyntaxError: {exc}", 1, 0, _FIX_SYNTAX)


def _position_of(text: str, offset: int) -> tuple[int, int]:
    row = text.count("\n", 0, offset) + 1
    return row, offset - (text.rfind("\n", 0, offset) + 1)


# ----------------------------------------------------------------- deep nesting

_OPENERS, _CLOSERS = "([{", ")]}"
# Prefix operators nest like brackets in the parser: `- - - 1` or `not not x`.
_PREFIX = {"-", "+", "~", "not", "await", "lambda", "*", "**"}


def deepest_nesting(text: str) -> tuple[int, int]:
    """Where the deepest chain of brackets or prefix operators starts (tokenize does not
    recurse, so it survives what the parser could not)."""
    best, where = -1, (1, 0)
    stack: list[tuple[int, int]] = []
    run_start: tuple[int, int] | None = None
    run = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.OP and tok.string in _OPENERS:
                stack.append(tok.start)
            elif tok.type == tokenize.OP and tok.string in _CLOSERS and stack:
                stack.pop()
            if tok.string in _PREFIX and tok.type in (tokenize.OP, tokenize.NAME):
                run_start = run_start or tok.start
                run += 1
            else:
                run_start, run = None, 0
            depth = len(stack) + run
            if depth > best:
                best = depth
                where = stack[0] if stack else (run_start or tok.start)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return where


# ----------------------------------------------------------------- newer syntax

_TYPE_STMT = re.compile(r"^\s*type\s+[A-Za-z_]\w*\s*(?:\[[^\]]*\])?\s*=")
_GENERIC_DEF = re.compile(r"^\s*(?:async\s+)?def\s+[A-Za-z_]\w*\s*\[(?P<params>[^\]]*)\]\s*\(")
_GENERIC_CLASS = re.compile(r"^\s*class\s+[A-Za-z_]\w*\s*\[(?P<params>[^\]]*)\]\s*[(:]")
_EXCEPT_UNPARENTHESIZED = re.compile(r"^\s*except\s*\*?\s*[A-Za-z_][\w.]*\s*,")
_TEMPLATE_STRING = re.compile(r"(?<![\w'\"])(?:[tT][rR]?|[rR][tT])['\"]")
_EXCEPT_STAR = re.compile(r"^\s*except\s*\*")


def newer_syntax(exc: SyntaxError, text: str, lines: LineIndex) -> tuple[tuple[int, int], str] | None:
    """`((major, minor), feature)` when the failing statement uses syntax newer than the running
    interpreter; None for an ordinary syntax error. Probes the failing line only, and only claims
    features this interpreter lacks."""
    row = exc.lineno or 1
    line = lines.line(row)
    found = _probe(exc.msg or "", line, text, lines, row)
    if found is None or found[0] <= RUNNING:
        return None
    return found


def _probe(msg: str, line: str, text: str, lines: LineIndex, row: int) -> tuple[tuple[int, int], str] | None:
    if _TYPE_STMT.match(line):
        return (3, 12), "`type` statement, PEP 695"
    for pattern, what in ((_GENERIC_DEF, "function"), (_GENERIC_CLASS, "class")):
        m = pattern.match(line)
        if m:
            if "=" in m.group("params"):
                return (3, 13), f"generic {what} with type parameter defaults, PEP 696"
            return (3, 12), f"generic {what} with type parameters, PEP 695"
    if msg.startswith(("f-string", "unterminated string literal")) and _pep701_fstring(lines, row):
        return (3, 12), "f-string with a nested quote, backslash, comment or line break in a replacement field, PEP 701"
    if _EXCEPT_UNPARENTHESIZED.match(line) and "parenthesized" in msg:
        return (3, 14), "`except` with several exception types without parentheses, PEP 758"
    if _TEMPLATE_STRING.search(line):
        return (3, 14), "template string literal, PEP 750"
    if _EXCEPT_STAR.match(line):
        return (3, 11), "`except*`, PEP 654"
    return None


def _pep701_fstring(lines: LineIndex, row: int) -> bool:
    """An f-string starting on the failing line (or the few before it, for triple quotes)
    that is complete under 3.12's grammar and whose replacement field holds its own quote, a
    backslash, a `#` or, in a one-quote string, a line break: legal since 3.12 only (3.11
    calls the last an unterminated string). An f-string broken under any grammar is not."""
    start = max(row - 5, 1)
    head = "\n".join(lines.line(r) for r in range(start, row + 1))
    # A replacement field may run on over the lines after the failing one.
    chunk = "\n".join([head, *(lines.line(r) for r in range(row + 1, row + _FIELD_LINES))])
    for m in _FSTRING_START.finditer(chunk, 0, len(head)):
        end, newer = _scan_fstring(chunk, m.end(), m.group(1))
        if end is not None and newer:
            return True
    return False


_FIELD_LINES = 40
_FSTRING_START = re.compile(r"(?<![\w'\"])(?:[fF][rR]?|[rR][fF])('\'\'|\"\"\"|'|\")")
_STRING_START = re.compile(r"(?:[fFrRbBuU]{0,2})('\'\'|\"\"\"|'|\")")


def _scan_fstring(text: str, i: int, quote: str) -> tuple[int | None, bool]:
    """Scan an f-string body from `i` with PEP 701 rules: `(end, uses_pep701)`; end None when
    the literal never closes."""
    depth, newer = 0, False
    while i < len(text):
        if depth == 0:
            if text.startswith(quote, i):
                return i + len(quote), newer
            if text[i] == "\n" and len(quote) == 1:
                return None, newer
            if text.startswith("{{", i):
                i += 2
                continue
            if text[i] == "{":
                depth = 1
            elif text[i] == "\\":
                i += 1
            i += 1
            continue
        c = text[i]
        if c in "{[(":
            depth += c == "{"
        elif c == "}":
            depth -= 1
        elif c == "#":
            newer = True
            nl = text.find("\n", i)
            if nl == -1:
                return None, newer
            i = nl
        elif c == "\\" or (c == "\n" and len(quote) == 1):
            newer = True
        else:
            m = _STRING_START.match(text, i)
            if m and (c in "'\"" or m.group(0)[: -len(m.group(1))].isalpha()):
                newer = newer or m.group(1) == quote or quote in m.group(1)
                is_f = "f" in m.group(0)[: -len(m.group(1))].lower()
                end = (_scan_fstring if is_f else _scan_string)(text, m.end(), m.group(1))[0]
                if end is None:
                    return None, newer
                newer = newer or "\\" in text[m.end() : end]  # before 3.12: no backslash in `{...}`
                i = end
                continue
        i += 1
    return None, newer


def _scan_string(text: str, i: int, quote: str) -> tuple[int | None, bool]:
    while i < len(text):
        if text.startswith(quote, i):
            return i + len(quote), False
        if text[i] == "\\":
            i += 1
        elif text[i] == "\n" and len(quote) == 1:
            return None, False
        i += 1
    return None, False

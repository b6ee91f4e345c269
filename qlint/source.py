"""Decoding and position bookkeeping shared by the engine, the fixer and every reporter.

`ast` reports columns in UTF-8 bytes; editors, JSON and humans want characters. One
`LineIndex` per file converts once, so no rule has to think about encodings.

Lines are what Python's tokenizer counts as lines: `\r\n`, a lone `\r` (old Mac files,
which the interpreter runs) and `\n`. `str.splitlines` would also split at form feeds and
Unicode separators, and splitting on `\n` alone would put a whole CR-only file on one
line while `ast` numbers it line by line.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from bisect import bisect_right
from typing import TYPE_CHECKING

from qlint.diagnostic import Position, Range
from qlint.lazy_patterns import lazy
from qlint.value_classes import value_class

if TYPE_CHECKING:  # a cached run's start-up never imports `ast` (test_cli_runner)
    import ast

NEWLINE = lazy(r"\r\n?|\n")
_LF = lazy("\n")
_NEWLINE_BYTES = lazy(rb"\r\n?|\n")
_LONE_CR = lazy(r"\r(?!\n)")
_LONE_CR_BYTES = lazy(rb"\r(?!\n)")


class DecodeError(ValueError):
    """The bytes are not text in the encoding the file declares (PEP 263) or UTF-8."""

    def __init__(self, message: str, row: int = 1, col: int = 0):
        super().__init__(message)
        self.row = row
        self.col = col


def detect_encoding(data: bytes) -> str:
    """PEP 263 / BOM detection over lines as Python splits them (a cookie on line 2 of a
    CR-only file counts). Raises SyntaxError for a bad cookie."""
    import tokenize  # here: only a file with a BOM or a coding cookie needs it, not every start

    lines = iter(m.group() for m in re.finditer(rb"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$", data))
    encoding, _ = tokenize.detect_encoding(lambda: next(lines, b""))
    return encoding


def decode_source(data: bytes) -> str:
    """Decode like the interpreter does: BOM, then a PEP 263 cookie, then UTF-8."""
    if not data.startswith(codecs.BOM_UTF8) and b"coding" not in _first_two_lines(data):
        # No BOM and no cookie: UTF-8, as `tokenize` would say (it reads those two lines
        # only). Text that does not decode takes the long way for the same error.
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    try:
        encoding = detect_encoding(data)
    except SyntaxError as exc:
        raise DecodeError(f"cannot determine the file's encoding: {exc}") from None
    try:
        codecs.lookup(encoding)
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        breaks = [m.end() for m in _NEWLINE_BYTES.finditer(data, 0, exc.start)]
        row = len(breaks) + 1
        col = exc.start - (breaks[-1] if breaks else 0)
        raise DecodeError(f"invalid {encoding}: {exc.reason} at byte {exc.start}", row, col) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def read_source(path: str) -> str | None:
    """A file's text, decoded as the interpreter would (None: unreadable or undecodable)."""
    try:
        # Opened without blocking and read only when regular: a named pipe among a project's
        # modules (one the run was not asked to check) would otherwise hang the whole run.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return decode_source(fh.read())
    except (OSError, DecodeError):
        return None


def _first_two_lines(data: bytes) -> bytes:
    end = 0
    for _ in range(2):
        match = _NEWLINE_BYTES.search(data, end)
        if match is None:
            return data
        end = match.end()
    return data[:end]


@value_class
class LineIndex:
    text: str

    def __post_init__(self) -> None:
        # Most files have no CR at all: the plain pattern is three times faster.
        self._breaks = NEWLINE if "\r" in self.text else _LF
        starts = [0]
        for match in self._breaks.finditer(self.text):
            starts.append(match.end())
        self.starts = starts
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        """The lines without their line breaks."""
        if self._lines is None:
            self._lines = self._breaks.split(self.text)
        return self._lines

    def line(self, row: int) -> str:
        lines = self.lines
        return lines[row - 1] if 0 < row <= len(lines) else ""

    def char_col(self, row: int, byte_col: int) -> int:
        """Convert an `ast` UTF-8 byte column to a code-point column."""
        line = self.line(row)
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def range_of(self, node: ast.AST) -> Range:
        """The range of an `ast` node, its columns in code points."""
        return Range.of(
            node.lineno,
            self.char_col(node.lineno, node.col_offset),
            node.end_lineno,
            self.char_col(node.end_lineno, node.end_col_offset),
        )

    def offset(self, pos: Position) -> int:
        row = min(max(pos.row, 1), len(self.starts))
        return min(self.starts[row - 1] + pos.col, len(self.text))

    def position(self, offset: int) -> Position:
        row = bisect_right(self.starts, offset)
        return Position(row, offset - self.starts[row - 1])


def line_ending(text: str) -> str:
    """The file's line break (its first one; `\n` for a file without any), for inserted lines."""
    match = NEWLINE.search(text)
    return match.group() if match else "\n"


def lf_rows(text: str) -> str:
    """The text with each lone `\r` (an old Mac row's end, one for Python's tokenizer) made
    `\n`, for the text readers that find a row's ends at `\n` (`\r\n` ends a row there
    already): the same length, so an offset into it is one into the text, and the same rows.
    The text itself where it holds no `\r` (nearly every text), or none alone."""
    return _LONE_CR.sub("\n", text) if "\r" in text else text


def lf_row_bytes(data: bytes) -> bytes:
    """`lf_rows` of a module's bytes, for the readers of bytes (the wrapper index's)."""
    return _LONE_CR_BYTES.sub(b"\n", data) if b"\r" in data else data


def split_lines(text: str) -> list[str]:
    """Lines with their breaks kept, split where Python splits them (see the module doc)."""
    return [m.group() for m in re.finditer(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$", text)]

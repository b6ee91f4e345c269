"""A text as Python reads its identifiers: NFKC-normalised (PEP 3131), so `gu.insert_op`
spelled with fullwidth letters names `gu.insert_op`, and `graph.call_function(...)` so spelled
calls `call_function`. `ast` gives the normalised names; a rule's text searches (its
triggers, the rows it walks, the names a module imports) read this text to agree with it.

NFKC maps no character onto a line break, nor any line break onto another character, and
composes none with one: the normalised text has the raw text's rows, row for row (columns
differ where a character maps onto several, `…` onto `...`; positions are read in the raw
text, from the tree). Most texts are ASCII, which NFKC leaves alone: `str.isascii` is O(1),
and so is their answer. Nearly every other text is left alone too (an accent, a dash, a
quote), and is returned itself: NFKC is asked of its characters outside ASCII only
(`_changes`), which are few, not of the whole text (the wrapper index's child read
ExecuTorch's 380 such files twice, whole: +0.66% of the run's instructions).

Rows are read as Python reads them too: a lone `\r` (an old Mac file's row end) is made `\n`,
which every text reader finds a row's end at (`source.lf_rows`: the same length, the same
rows). Read raw, a `\r`-only file was one row: the import statements' names ran together
(`text_imports`) and a module importing a wrapper so was never followed.
"""

from __future__ import annotations

from qlint.lazy_patterns import lazy
from qlint.source import lf_row_bytes, lf_rows

_ASCII = bytes(range(128))
# The marks NFKC composes with a letter or sign of ASCII before them (`e` and U+0301 make
# `é`): all of them, as worked out over every character, lie in this block.
_COMPOSES_WITH_ASCII = lazy("[\u0300-\u036f]")  # only texts outside ASCII reach it


def normalised(text: str) -> str:
    """The text as the parser reads identifiers (NFKC) and rows (`source.lf_rows`: a lone
    `\r` ends a row), once per text (asked per import, by each trigger, and again of the text
    it gave)."""
    global _NFKC, _SAME
    if text.isascii() and "\r" not in text:
        return text
    if text is _SAME:
        return text
    if _NFKC is None or (_NFKC[0] is not text and _NFKC[1] is not text):
        rows = lf_rows(text)
        if rows.isascii():
            found = rows
        else:
            data = text.encode("utf-8", "surrogatepass")
            found = _normalise(rows) if _changes(data) else rows
        if found is text:
            # Kept apart: a reader asked of a text already read so (`text_imports`, of the
            # gate's `packet_text.identifiers`) keeps the raw text's answer.
            _SAME = text
            return text
        _NFKC = (text, found)
    return _NFKC[1]


def normalised_bytes(data: bytes) -> bytes:
    """A module's bytes as Python reads its identifiers (`normalised`, in UTF-8), for the
    readers of bytes (the wrapper index's, whose patterns are bytes). The bytes themselves
    where NFKC changes nothing, or they do not decode (no reader parses them either). A file
    declaring another encoding (PEP 263) is read in it by `decode_source` again: its
    characters outside ASCII are then read wrongly, and its ASCII names rightly."""
    data = lf_row_bytes(data)
    if data.isascii() or not _changes(data):
        return data
    from qlint.source import DecodeError, decode_source

    try:
        text = decode_source(data)
    except DecodeError:
        return data
    words = _normalise(text)
    return data if words == text else words.encode("utf-8", "surrogatepass")


def named_holding(data: bytes, needles: tuple[bytes, ...]) -> bool:
    """Whether a module's bytes outside ASCII hold one of `needles` only as Python reads names
    (`normalised_bytes`: `foo` with a fullwidth `f` is `foo`), for the scans that test raw bytes
    first; ASCII bytes, nearly every module's, hold what they hold."""
    if data.isascii():
        return False
    named = normalised_bytes(data)
    return named is not data and any(n in named for n in needles)


def _changes(data: bytes) -> bool:
    """Whether NFKC may change a name in the text of these UTF-8 bytes, asked of their characters
    outside ASCII alone, one after the other: ASCII characters separate them, and NFKC joins
    no two characters across one, except an ASCII letter with a combining mark after it
    (`_COMPOSES_WITH_ASCII`). Characters that would change apart never leave each other
    alone when put side by side; put side by side, some may change that would not apart
    (a mark after another run's letter): True then, and the whole text is asked. True too
    for bytes that are not UTF-8 (a PEP 263 encoding): the whole text is asked."""
    try:
        others = data.translate(None, _ASCII).decode("utf-8")
    except UnicodeDecodeError:
        return True
    import unicodedata  # not at start-up: most texts are ASCII

    if _COMPOSES_WITH_ASCII.search(others) is not None:
        return True
    if unicodedata.is_normalized("NFKC", others):
        return False
    changed = [ch for ch in set(others) if not unicodedata.is_normalized("NFKC", ch)]
    # Outside a name, Python reads a character outside ASCII only in a string or a comment,
    # which no rule reads as code: a text whose changes are all of characters no name may hold
    # (`…`, `²`, fullwidth punctuation: 19 of ExecuTorch's 22 texts NFKC changes) is read as it
    # is, not normalised whole (+0.5% of ExecuTorch's instructions when it was). A run joined
    # only (no character changes alone) is asked whole.
    return not changed or any(("a" + ch).isidentifier() for ch in changed)


def _normalise(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKC", text)


# (the text last normalised, its normal form): the triggers and the check ask of one text
_NFKC: tuple[str, str] | None = None
# The last text outside ASCII found to be its own normal form.
_SAME: str | None = None

"""Python source as the wrapper index reads it without parsing: every string literal's and
comment's characters blanked (`masked`), so that a `def` row in a docstring is none and
brackets pair as the parser pairs them, and a bracket's content cut at its top-level commas
(`top_level`). Used by `module_text` for the modules that insert and those it reads for them.
"""

from __future__ import annotations

import re

BRACKETS = re.compile(r"[()\[\]{}]")


def masked(text: str) -> str:
    """The text with every string literal's and comment's characters but line ends blanked
    (as the tokenizer ends them: a backslash escapes the next character, raw strings too)."""
    return _LITERAL.sub(_blanked, text)


def _blanked(m: re.Match) -> str:
    piece = m.group()
    blank = _NOT_A_LINE_END.sub(" ", piece) if "\n" in piece else " " * len(piece)
    # A string keeps its quotes (an argument `"x"` stays an argument that is no name), and an
    # unterminated one its last character.
    return blank if piece[0] == "#" or len(piece) < 2 else piece[0] + blank[1:-1] + piece[-1]


# A comment to its row's end, or a string to its closing quote, a backslash escaping the next
# character: a three-quote one may run to the end of the text, a one-quote one unterminated
# ends at its row's end (the parse would fail anyway). One pattern, one pass through the text
# (possessive: nothing is matched twice).
_LITERAL = re.compile(
    r"#[^\n]*+"
    r"|'''(?:[^\\']++|\\.|'(?!''))*+(?:'''|\\?\Z)"
    r'|"""(?:[^\\"]++|\\.|"(?!""))*+(?:"""|\\?\Z)'
    r"|'(?:[^\\'\n]++|\\.)*+(?:'|\\)?"
    r'|"(?:[^\\"\n]++|\\.)*+(?:"|\\)?',
    re.S,
)
_NOT_A_LINE_END = re.compile(r"[^\n]")


def top_level(inside: str) -> list[str]:
    """The comma-separated pieces of a bracket's content, not splitting nested brackets."""
    if not BRACKETS.search(inside):
        return inside.split(",")
    pieces = []
    depth = 0
    start = 0
    for m in _SPLITS.finditer(inside):  # only where a piece may end or a bracket open or close
        c = m.group()
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            pieces.append(inside[start : m.start()])
            start = m.end()
    pieces.append(inside[start:])
    return pieces


_SPLITS = re.compile(r"[()\[\]{},]")

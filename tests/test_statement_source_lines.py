"""`summary._StatementSource._source_lines`: the offsets where lines start, from the lengths of
the `\\n`-separated lines when the text has no `\\r`, as `_LINES` (the breaks `ast` counts)
finds them in any text."""

from __future__ import annotations

from array import array
from pathlib import Path

import pytest

from qlint.analysis.names.summary import _LINES, _StatementSource


def _by_regex(text: str) -> array:
    starts = array("q", [0])
    starts.extend(m.end() for m in _LINES.finditer(text))
    if starts[-1] < len(text):
        starts.append(len(text))
    return starts


def _starts(text: str) -> array:
    return _StatementSource("m.py", "m", lambda: text)._source_lines()[1]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "x = 1",  # no break at all
        "x = 1\n",
        "x = 1\ny = 2",  # a last line without a break
        "\n\n\n",
        "a\x0cb\nc\x0bd\u2028e\n",  # other characters Python calls line breaks: not `ast`'s
        "x = 'é'\ny = 2\n",  # lengths in code points
        "a\r\nb\rc\n",  # `\r` takes the regex's path
    ],
)
def test_line_starts_as_the_regex_finds_them(text: str) -> None:
    assert _starts(text) == _by_regex(text)


def test_line_starts_of_real_modules() -> None:
    root = Path(__file__).resolve().parents[1] / "qlint"
    for path in sorted(root.rglob("*.py"))[:100]:
        text = path.read_text(encoding="utf-8")
        assert _starts(text) == _by_regex(text), path

"""The text prefilter only skips work: a file it keeps from a rule holds no finding of it.

Every rule page example and every example file is checked twice, once as the engine does
and once with every rule forced past its triggers; the findings must be the same.
"""

from __future__ import annotations

import re

import pytest

from qlint.engine import check_source, mentions_noqa
from qlint.rules.base import Rule
from tests.conftest import ROOT, settings_for

_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _samples() -> list[tuple[str, str]]:
    found = []
    for page in sorted((ROOT / "rules").glob("QL*.md")):
        for i, block in enumerate(_BLOCK.findall(page.read_text())):
            found.append((f"{page.stem}-{i}", block))
    for path in sorted((ROOT / "examples").rglob("*.py")):
        found.append((str(path.relative_to(ROOT)), path.read_text()))
    return found


SAMPLES = _samples()


def _findings(text: str, path: str) -> list[tuple]:
    result = check_source(text, path, settings_for(select=("ALL",), preview=True))
    assert not result.errors, result.errors
    return sorted((d.code, d.range.start.row, d.range.start.col, d.message) for d in result.diagnostics)


@pytest.mark.parametrize("name,text", SAMPLES, ids=[n for n, _ in SAMPLES])
def test_triggers_never_hide_a_finding(name, text, tmp_path, monkeypatch):
    path = str(tmp_path / "sample.py")
    kept = _findings(text, path)
    monkeypatch.setattr(Rule, "triggered_by", lambda self, text: True)
    for cls in {type(r) for r in settings_for(select=("ALL",), preview=True).rules_for(path)}:
        if "triggered_by" in vars(cls):
            monkeypatch.setattr(cls, "triggered_by", lambda self, text: True)
    assert _findings(text, path) == kept


def test_samples_hold_findings_of_every_checking_rule():
    codes = set()
    for name, text in SAMPLES:
        codes |= {c for c, *_ in _findings(text, f"/tmp/{name}.py")}
    assert {"QL101", "QL102", "QL201", "QL202", "QL203", "QL204", "QL301", "QL401", "QL402"} <= codes


def test_noqa_precheck_is_exact_for_every_character():
    # The regexes it guards match n, o, q, a case-insensitively: no other character may
    # match them unless its lower case holds the letter too.
    letters = re.compile("[noqa]", re.IGNORECASE)
    for code in range(0x110000):
        char = chr(code)
        if letters.fullmatch(char):
            assert char.lower() in "noqa"
    assert mentions_noqa("x = 1  # NoQa: QL101") and not mentions_noqa("no qa here")


def test_noqa_precheck_of_a_text_beyond_ascii_is_the_lowered_texts_answer():
    # Lowered as UTF-8 bytes (`mentions_noqa`): no character beyond ASCII may lower to a text
    # holding one of the letters, or its lowered text could say `noqa` where its bytes do not.
    for code in range(0x80, 0x110000):
        assert not set(chr(code).lower()) & set("noqaNOQA"), hex(code)
    for text in ("é = 1  # NOQA: QL101", "é = 1  # nOqA", "x = 'ü'  # no\u0301qa", "é\ud800 # noqa", "İ = 1 # Noqa"):
        assert mentions_noqa(text) == ("noqa" in text.lower()), text
    assert not mentions_noqa("é = 1  # no qa") and not mentions_noqa("ÑOQA") and mentions_noqa("ÑNOQA")


@pytest.mark.parametrize(
    "data",
    [
        b"x = 1\n",
        b"",
        b"\xef\xbb\xbfx = 1\n",
        b"# -*- coding: latin-1 -*-\nx = '\xe9'\n",
        b"#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nx = '\x93'\n",
        b"x = 1\n# coding: latin-1\ny = '\xe9'\n",
        b"x = 1\r# coding: latin-1\ry = '\xe9'\r",
        b"x = '\xe9'\n",
        b"\n\nx = '\xff\xfe'\n",
        b"# coding: nonsense\n",
        b"encoding = 'utf-8'\nx = '\xc3\xa9'\n",
    ],
)
def test_decoding_fast_path_agrees_with_tokenize(data, monkeypatch):
    import qlint.source as source

    def decoded():
        try:
            return source.decode_source(data)
        except source.DecodeError as exc:
            return ("error", str(exc), exc.row, exc.col)

    fast = decoded()
    monkeypatch.setattr(source, "_first_two_lines", lambda data: b"coding")  # always the long way
    assert decoded() == fast

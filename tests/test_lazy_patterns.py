"""`lazy_patterns.lazy`: a pattern compiled at its first use answers as `re.compile`'s does."""

from __future__ import annotations

import re

from qlint.lazy_patterns import LazyPattern, lazy


def test_a_lazy_pattern_answers_as_the_compiled_one():
    text = "a = torch.ao.quantization\nB = 2\n"
    for source, flags in ((r"(\w+)\s*=", 0), (r"^b", re.I | re.M), (r"torch(?:ao|vision)", 0)):
        made, compiled = lazy(source, flags), re.compile(source, flags)
        found, expected = made.search(text), compiled.search(text)
        assert (found and found.span()) == (expected and expected.span())
        assert [m.span() for m in made.finditer(text)] == [m.span() for m in compiled.finditer(text)]
        assert made.findall(text, 2) == compiled.findall(text, 2)
        assert made.split(text) == compiled.split(text) and made.sub("x", text) == compiled.sub("x", text)
        assert made.pattern == compiled.pattern and made.groups == compiled.groups


def test_bytes_patterns_too():
    assert lazy(rb"\w+").findall(b"as x, y") == [b"as", b"x", b"y"]


def test_compiled_once_at_first_use(monkeypatch):
    made = lazy(r"x+")
    assert "search" not in vars(made)  # nothing compiled yet
    made.search("xx")
    calls = []
    monkeypatch.setattr(re, "compile", lambda *a: calls.append(a))
    assert made.match("xxx").group() == "xxx" and made.fullmatch("x") and calls == []


def test_special_names_are_not_delegated():
    made = LazyPattern("x")
    assert not hasattr(made, "__deepcopy_helper__")
    assert "search" not in vars(made)

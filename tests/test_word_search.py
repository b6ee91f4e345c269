"""`word_search`: the anchored search finds what `re.search` finds, and the word count what
`len(re.findall(r"\\bWORD\\b", text))` counts, on the look-alikes that make `\\b` matter."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qlint.analysis.graphs.dead_code import _SELF_MODULE
from qlint.analysis.graphs.never_called import DYNAMIC_LOOKUP
from qlint.analysis.word_search import AnchoredPattern, ascii_word_count

TEXTS = [
    "",
    "vars(x)",
    "observers(x)",  # `vars` inside a word: no `\b` before it
    "x = observer_vars (y)",  # `vars` after `_`, a word character
    "print(vars  (m))",
    "vars\n(m)",
    "m.__dict__",
    "__dict__",
    "ab__dict__cd",  # `__dict__` has no `\b`: matches inside a word
    "globalsx(1) locals(2)",  # the first anchor fails, a later one matches
    "getmembers getmembers(m)",  # the same anchor fails, then matches further on
    "sys.modules_x import_module(n) __import__ (n)",
    "mysys.modules sys.modules",
    "sys.modules.get(n)",
    "xx__import__(n) importlib.import_module(n)",
    "no lookup at all here",
    "vars" * 50 + " vars(",
]


@pytest.mark.parametrize("compiled", [DYNAMIC_LOOKUP, _SELF_MODULE], ids=["dynamic", "self_module"])
@pytest.mark.parametrize("text", TEXTS)
def test_anchored_search_is_re_search(compiled: AnchoredPattern, text: str) -> None:
    expected = re.search(compiled.pattern, text)
    found = compiled.search(text)
    assert (found and found.span()) == (expected and expected.span())


def test_anchored_search_on_real_modules() -> None:
    """qlint's own sources: modules that use `vars(`, `__dict__` and `sys.modules`, and many
    that spell the words only inside longer ones."""
    root = Path(__file__).resolve().parents[1] / "qlint"
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for compiled in (DYNAMIC_LOOKUP, _SELF_MODULE):
            expected = re.search(compiled.pattern, text)
            found = compiled.search(text)
            assert (found and found.span()) == (expected and expected.span()), path


def test_missing_anchor_is_refused() -> None:
    with pytest.raises(AssertionError):
        AnchoredPattern("x", ())


@pytest.mark.parametrize(
    "text, word",
    [
        ("def f(): pass\n", "f"),
        ("def f(): pass\nf()\n", "f"),
        ("def ff(): pass\nff_x = ff2\n", "ff"),  # longer words do not count
        ("def g(): pass\nx.g\ng", "g"),  # at the very end, after a dot
        ("_g g_ g", "g"),
        ("helper helper helper", "helper"),  # counted up to the limit
        ("", "f"),
    ],
)
def test_ascii_word_count_is_findall(text: str, word: str) -> None:
    expected = len(re.findall(rf"\b{re.escape(word)}\b", text))
    assert ascii_word_count(text, word, 2) == min(expected, 2)
    assert ascii_word_count(text, word, 100) == expected

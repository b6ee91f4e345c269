"""mentions/word_rows: a body holds a word exactly when its text does (rows, not searches)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import qlint
from qlint.analysis.mentions import mentions, word_rows
from qlint.source import LineIndex

WORDS = ("export", "prepare_pt2e", "def ", "self.", "(", "import", "zzz_absent")


def _bodies(tree: ast.Module) -> list[ast.AST]:
    return [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]


def _segment(text: str, starts: list[int], node: ast.AST) -> str:
    if isinstance(node, ast.Module):
        return text
    end = starts[node.end_lineno] if node.end_lineno < len(starts) else len(text)
    return text[starts[node.lineno - 1] : end]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_body_mentions_a_word_exactly_when_its_text_holds_it(newline):
    files = sorted(Path(qlint.__file__).parent.rglob("*.py"))[:60]
    compared = 0
    for path in files:
        text = path.read_text(encoding="utf-8").replace("\n", newline)
        tree = ast.parse(text)
        starts = LineIndex(text).starts
        for word in WORDS:
            rows = word_rows(text, starts, [word])
            for body in _bodies(tree):
                assert mentions(body, rows) == (word in _segment(text, starts, body)), (path, word, body)
                compared += 1
    assert compared > 1000


def test_decorators_above_a_def_are_not_its_text_and_the_last_row_is():
    text = "@export\ndef f():\n    return (\n        prepare_pt2e)\n\n\ndef g():\n    pass\n"
    tree = ast.parse(text)
    starts = LineIndex(text).starts
    f, g = tree.body
    assert not mentions(f, word_rows(text, starts, ["export"]))
    assert mentions(f, word_rows(text, starts, ["prepare_pt2e"]))
    assert not mentions(g, word_rows(text, starts, ["prepare_pt2e"]))
    assert mentions(tree, word_rows(text, starts, ["export"]))
    assert not mentions(tree, word_rows(text, starts, ["zzz"]))


def test_holding_answers_as_a_search_of_each_text():
    import random

    from qlint.analysis.mentions import holding

    rng = random.Random(3)
    pieces = ["a", "b", "(", "\n", "ab(", "x", "b("]
    for _ in range(5000):
        texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(0, 6))]
        drawn = ("".join(rng.choice("ab(x") for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(0, 4)))
        words = sorted(set(drawn))
        assert holding(texts, words) == [any(w in t for w in words) for t in texts], (texts, words)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_called_rows_are_the_rows_a_search_of_each_call_finds(newline):
    """`CalledRows.rows(names)` is `word_rows` of each `name(`: names that end longer ones
    (`run(` in `rerun(`), stand after a non-ASCII letter (`éfoo(`), hold one (`fé`), end the
    text uncalled, or are called past a blank (`f (`, not a call of `f` here) or a bracket
    (`(f)(`); and the empty name (every `(`), last, as it finds every row the others do."""
    import random

    from qlint.analysis.mentions import CalledRows

    extra = "def rerun(x):\n    éfoo(x)\n    fé(x)\n    f (x); (f)(x); run(run(x))\n    return x.run(1)\n#\n\nrun"
    files = sorted(Path(qlint.__file__).parent.rglob("*.py"))[:40]
    rng = random.Random(7)
    compared = 0
    for path in files:
        text = (path.read_text(encoding="utf-8") + extra).replace("\n", newline)
        starts = LineIndex(text).starts
        called = CalledRows(text, starts)
        words = sorted(set(re.findall(r"\w+", text)))
        for size in (1, 20, 60):
            names = rng.sample(words, min(size, len(words)))
            for more in (["run", "foo", "fé", "f", "un", "x.run", "self"], [""]):
                names += more
                assert called.rows(names) == word_rows(text, starts, [f"{n}(" for n in names]), (path, names)
                compared += 1
    assert compared == 240

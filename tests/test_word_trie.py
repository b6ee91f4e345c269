"""`word_trie.holds_any` answers exactly as `any(w in text for w in words)`: the import
trigger's class-name prefilter (`imported_helpers._constructed`) asks it of every file a run reads."""

from __future__ import annotations

import random

import pytest

from qlint.analysis.graphs.word_trie import alternation, holds_any

WORDS = frozenset({"AddPattern", "AddReluPattern0", "Add", "Conv1dPattern", "Conv1d", "_Adapter", "a.b", "x(y"})


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Ad",
        "AddPatter",
        "x = MyAddPatternX()",  # inside a longer word: a substring all the same
        "Conv1",
        "conv1dpattern",  # case counts
        "_Adapte",
        "a_b",  # `.` is a dot, not any character
        "a.b",
        "x(y",
        "xy",
        "AddRelu",
        "Conv1d\nPattern",
    ],
)
def test_same_answer_as_a_substring_test_per_word(text):
    assert holds_any(text, WORDS) == any(w in text for w in WORDS)


def test_no_words_hold_in_no_text():
    assert not holds_any("anything at all", frozenset())
    assert alternation([]) == ""


def test_random_words_and_texts_agree_with_substring_tests():
    rng = random.Random(7)
    alphabet = "ab_.("
    for _ in range(300):
        words = frozenset("".join(rng.choices(alphabet, k=rng.randint(1, 4))) for _ in range(rng.randint(1, 6)))
        text = "".join(rng.choices(alphabet + " \n", k=rng.randint(0, 12)))
        assert holds_any(text, words) == any(w in text for w in words), (sorted(words), text)

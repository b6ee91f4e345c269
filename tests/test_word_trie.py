"""`word_trie.holds_any` answers exactly as `any(w in text for w in words)`: the import
trigger's class-name prefilter (`imported_helpers._constructed`) asks it of every file a run reads."""

from __future__ import annotations

import random
import re

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


def test_a_run_every_word_below_shares_is_one_literal():
    """A group per character made the pattern of the import triggers' ~800 names three times
    as long as the names, and `re` took longer to parse it than the triggers took to search
    with it: a run of characters with one way on is written as it is."""
    assert alternation(["Conv1dPattern"]) == "Conv1dPattern"
    assert alternation(["Conv1d", "Conv2d"]) == "Conv(?:1d|2d)"
    assert alternation(["Add", "AddPattern", "AddRelu"]) == "Add(?:Pattern|Relu)?"
    assert alternation(["a.b", "a.c"]) == r"a\.(?:b|c)"


def _per_character(words: list[str]) -> str:
    """The alternation as it was written before: a group after every character."""
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[0], []).append(word[1:])
    out = []
    for first, rests in sorted(groups.items()):
        longer = [r for r in rests if r]
        branch = re.escape(first)
        if longer:
            branch += "(?:" + _per_character(longer) + ")" + ("?" if len(longer) < len(rests) else "")
        out.append(branch)
    return "|".join(out)


def test_same_matches_as_a_group_per_character():
    """The same branches in the same order: every match, and what it holds, is the one the
    pattern with a group after each character finds, also where a word is the start of
    another and what follows makes the longer one fail (`called_names._attribute_pattern`
    ends in a look-ahead: the shorter word is tried next)."""
    rng = random.Random(11)
    alphabet = "ab_.("
    for _ in range(400):
        words = sorted({"".join(rng.choices(alphabet, k=rng.randint(1, 5))) for _ in range(rng.randint(1, 8))})
        text = "".join(rng.choices(alphabet + " \n", k=rng.randint(0, 30)))
        for tail in ("", "(?![ab_])"):
            new = re.compile("(" + alternation(words) + ")" + tail)
            old = re.compile("(" + _per_character(words) + ")" + tail)
            found = [(m.span(), m.group(1)) for m in new.finditer(text)]
            assert found == [(m.span(), m.group(1)) for m in old.finditer(text)], (words, text, tail)

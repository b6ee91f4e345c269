"""QL101's prefilter `writes_target`: decided at each occurrence of `target`, it answers what
the multi-line pattern it replaced answers (the pattern is kept here as the reference)."""

from __future__ import annotations

import random
import re

import pytest

from qlint.analysis.graphs.sinks import may_match_here, writes_target

REFERENCE = re.compile(r"""(?:\.|^|\r)\s*target\b|["']target["']""", re.M)


@pytest.mark.parametrize(
    "text",
    [
        "n.target == aten.add",
        "n . target",
        "n.\n    target",
        "target = 1",
        "x = 1\n   target",
        "x = 1\r  target",
        'getattr(n, "target")',
        "getattr(n, 'target\")",
        "\u3000target",
        "\n\u2028target",
        ".target",
        "a.target_dtype",
        "x = target",
        "self.target1",
        "ntarget",
        "a.targeté",
        "a.target٣",
        "'target",
        "target'",
        "x.targ et",
        "",
    ],
)
def test_the_prefilter_answers_what_the_pattern_answers(text):
    assert writes_target(text) == (REFERENCE.search(text) is not None)


def test_random_texts_agree_with_the_pattern():
    rng = random.Random(13)
    pieces = ["target", "target", ".", " ", "\t", "\n", "\r", "'", '"', "x", "_", "1", "=", "é", "\u3000", "\x1c", "ta"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 9)))
        assert writes_target(text) == (REFERENCE.search(text) is not None), repr(text)


def test_a_quiet_text_only_mentions_target():
    # Prose and keywords name `target` without writing a node target: the file is not parsed.
    text = "def f(target_dtype):\n    # the target of this pass\n    return target_dtype\n"
    assert not writes_target(text)
    assert not may_match_here(text, ("checkGraphModuleNodes",))
    assert may_match_here(text + "    n.target\n", ("checkGraphModuleNodes",))

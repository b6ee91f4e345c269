"""`attribute_text.AFTER_DOT`: the text before an attribute's name ends in its dot (past blanks,
continuations and comments), not in an ellipsis. Led by the dot (so the regex engine scans for
it) it must answer as the look-behind-first spelling it replaced, at every window start."""

from __future__ import annotations

import random
import re

import pytest

from qlint.analysis.graphs.attribute_text import AFTER_DOT

# The spelling it replaced, tried at every position of the window: the reference answer.
REFERENCE = re.compile(r"(?<!\.)\.(?:\s|\\|#[^\n#]*)*\Z")


@pytest.mark.parametrize(
    "text, after_dot",
    [
        ("graph.call_function", True),
        ("graph . call_function", True),
        ("graph.\\\n    call_function", True),
        ("graph.  # why\n    call_function", True),
        ("...     call_function", False),  # an ellipsis in a doctest
        ("g..call_function", False),
        ("call_function", False),
        ("graph_call_function", False),
        ("(graph).\tcall_function", True),
    ],
)
def test_the_dot_before_the_name(text, after_dot):
    at = text.index("call_function")
    assert (AFTER_DOT.search(text, max(0, at - 200), at) is not None) == after_dot


def test_every_window_start_answers_as_the_reference():
    rng = random.Random(11)
    for _ in range(1000):
        text = "".join(rng.choices("..a #\n\\\t", k=rng.randint(0, 10))) + "name"
        at = len(text) - 4
        for start in range(at + 1):  # a window may start just past a dot: it is still seen
            got = AFTER_DOT.search(text, start, at)
            want = REFERENCE.search(text, start, at)
            assert (got and got.span()) == (want and want.span()), (text, start)

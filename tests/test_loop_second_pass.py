"""What a loop's second pass (`loop_walk.loop`) finds: what one iteration leaves is what the
next one starts from. Each finding here is gone when the body is walked once, each look-alike
quiet either way: a change to the loop's walk keeps all of them.

Stop 65 measured a stop of the second pass where it can see nothing the first did not, and left
it out: on ExecuTorch (-j1, in process) second passes took ~0.35 s of ~10 s CPU; those whose entry
names and modes were the first pass's, 0.10 s; those where, besides, the first pass changed none
of the interpreter's other state (the containers written, the parts held, the records), 0.04 s,
while comparing that state whole before and after the first pass took 0.78 s. A model appended
to a list (`models.append(net())`) changes nothing in the names and modes the next pass starts
from, only in that state."""

from __future__ import annotations

import pytest

from tests.test_loop_exits import TRAIN, findings

LOUD = {
    "`model.train()` at the end of the body": (
        """
        def main(xs, q):
            model = net().eval()
            for x in xs:
                convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
                model.train()
        """,
        13,
        "(after `model.train()` at line 14; `net().eval()` at line 11 runs on some paths only)",
    ),
    "the loop's model rebound to a fresh one": (
        """
        def main(xs, q):
            model = net().eval()
            for x in xs:
                convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
                model = net()
        """,
        13,
        "(built at line 7, and modules start in train mode; `net().eval()` at line 11 runs on some paths only)",
    ),
    "a model appended to the list the next iteration walks": (
        """
        def main(xs, q):
            models = [net().eval()]
            for x in xs:
                for m in models:
                    convert_pt2e(prepare_pt2e(export(m, (x,)).module(), q))
                models.append(net())
        """,
        14,
        "(built at line 7, and modules start in train mode; `net().eval()` at line 11 runs on some paths only)",
    ),
    "switched in an outer loop's body after the inner loop": (
        """
        def main(xs, q):
            model = net().eval()
            for epoch in range(3):
                for x in xs:
                    convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
                model.train()
        """,
        14,
        "(after `model.train()` at line 15; `net().eval()` at line 11 runs on some paths only)",
    ),
    "switched in the inner loop, evaled after it": (
        """
        def main(xs, q):
            model = net().eval()
            for epoch in range(3):
                for x in xs:
                    convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
                    model.train()
                model.eval()
        """,
        14,
        "(after `model.train()` at line 15; `net().eval()` at line 11 runs on some paths only; "
        "`model.eval()` at line 16 runs on some paths only)",
    ),
    "a `while` loop": (
        """
        def main(xs, q):
            model = net().eval()
            while xs:
                convert_pt2e(prepare_pt2e(export(model, (xs.pop(),)).module(), q))
                model.train()
        """,
        13,
        "(after `model.train()` at line 14; `net().eval()` at line 11 runs on some paths only)",
    ),
    "captured before the body's eval: the first iteration's mode, and the eval on later ones": (
        """
        def main(xs, q):
            model = net()
            for x in xs:
                convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
                model.eval()
        """,
        13,
        "(built at line 7, and modules start in train mode; `model.eval()` at line 14 runs on some paths only)",
    ),
}


@pytest.mark.parametrize(("src", "row", "why"), LOUD.values(), ids=LOUD.keys())
def test_what_an_iteration_leaves_reaches_the_next_one(src, row, why):
    (found,) = findings(src, ("QL201",))
    assert found[:2] == ("QL201", row)
    assert found[2].endswith(f"captured for PTQ in train mode {why}; {TRAIN}")


def test_a_graph_the_body_binds_is_switched_at_the_next_iteration():
    (found,) = findings(
        """
        def main(model, xs, q):
            m = model
            for x in xs:
                m.eval()
                m = prepare_pt2e(export(m, (x,)).module(), q)
        """,
        ("QL203",),
    )
    assert found == (
        "QL203",
        13,
        "`m` may be the graph from `prepare_pt2e` (line 14): on that path `.eval()` raises NotImplementedError"
        " on torch 2.13",
    )


QUIET = {
    "switched, then evaled again at the end of the body": """
        def main(xs, q):
            model = net().eval()
            for x in xs:
                convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
                model.train()
                model.eval()
        """,
    "rebound to an evaled model": """
        def main(xs, q):
            model = net().eval()
            for x in xs:
                convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
                model = net().eval()
        """,
    "an evaled model appended": """
        def main(xs, q):
            models = [net().eval()]
            for x in xs:
                for m in models:
                    convert_pt2e(prepare_pt2e(export(m, (x,)).module(), q))
                models.append(net().eval())
        """,
    "a `while` loop that evals before its capture": """
        def main(xs, q):
            model = net().eval()
            while xs:
                model.train()
                model.eval()
                convert_pt2e(prepare_pt2e(export(model, (xs.pop(),)).module(), q))
        """,
    "switched in the loop's `else`, which runs once the loop is over": """
        def main(xs, q):
            model = net().eval()
            for x in xs:
                convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
            else:
                model.train()
        """,
    "evaled before the capture in the body": """
        def main(xs, q):
            model = net()
            for x in xs:
                model.eval()
                convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
        """,
    "each iteration builds and evals its own": """
        def main(xs, q):
            for x in xs:
                model = net().eval()
                gm = convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
                gm(x)
        """,
}


@pytest.mark.parametrize("src", QUIET.values(), ids=QUIET.keys())
def test_what_an_iteration_leaves_in_eval_mode_keeps_the_next_one_quiet(src):
    assert findings(src, ("QL201", "QL203")) == []

"""A loop's `break` and `continue` (`loop_walk.loop`, `calibration_walk.Walker.loop`): a path
that `continue`s starts the next iteration, one that `break`s leaves the loop and skips its
`else`, which runs where the loop ran out.

Both walks read a loop's body twice, the second pass from what the first leaves for the next
iteration, and counted the paths that `break` among those: `if x is None: model.train(); break`
then reached the capture written after it in the body in train mode (QL201), a graph bound
before a `break` reached the body's `.eval()` (QL203) and a graph prepared before a `break` its
`convert_pt2e` (QL204), none of which a run can do. And the `else` of a loop ran on the paths that
`break`: an `else: raise` ended them too (what follows the loop was never read), an `else:
model.eval()` evaluated the model on them.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def net():
    return torch.nn.Sequential(torch.nn.Conv2d(3, 3, 3), torch.nn.BatchNorm2d(3))

"""


def findings(src: str, rules=("QL201", "QL203", "QL204")):
    return [(d.code, d.range.start.row, d.message) for d in lint(HEAD + textwrap.dedent(src), select=rules)]


TRAIN = "in `torch.nn.Sequential`, the mode changes BatchNorm2d"

QUIET = {
    "a switch before a `break` does not reach the body's next capture": """
        def main(xs, q):
            model = net().eval()
            for x in xs:
                if x is None:
                    model.train()
                    break
                convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
        """,
    "nor in a `while` loop": """
        def main(xs, q):
            model = net().eval()
            while xs:
                x = xs.pop()
                if x is None:
                    model.train()
                    break
                convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
        """,
    "the evaled path that breaks is the one reaching past an `else: raise`": """
        def main(xs, q):
            model = net()
            for x in xs:
                if x is None:
                    model.eval()
                    break
            else:
                raise ValueError("no batch")
            convert_pt2e(prepare_pt2e(export(model, (xs[0],)).module(), q))
        """,
    "an `else` of a loop with no `break` runs on every path out of it": """
        def main(xs, q):
            model = net()
            for x in xs:
                if x is None:
                    continue
            else:
                model.eval()
            convert_pt2e(prepare_pt2e(export(model, (xs[0],)).module(), q))
        """,
    "a graph bound before a `break` is not the one the body switches (QL203)": """
        def main(model, xs, q):
            m = model
            for x in xs:
                m.eval()
                if x is None:
                    m = prepare_pt2e(export(m, (x,)).module(), q)
                    break
        """,
}


@pytest.mark.parametrize("src", QUIET.values(), ids=QUIET.keys())
def test_what_a_path_that_breaks_does_is_not_read_at_the_next_iteration(src):
    assert findings(src, ("QL201", "QL203")) == []


def test_a_graph_prepared_before_a_break_is_not_converted_in_the_next_iteration():
    src = """
        def main(model, x, q, items):
            prepared = None
            for item in items:
                if item.ready:
                    prepared = prepare_pt2e(export(model.eval(), (x,)).module(), q)
                    {}
                convert_pt2e(prepared)
        """
    assert findings(textwrap.dedent(src).replace("{}", "break")) == []
    # A `continue` starts the next iteration: its graph is converted there, uncalibrated.
    (found,) = findings(textwrap.dedent(src).replace("{}", "continue"))
    assert found == ("QL204", 16, "`prepared` is converted without calibration after `prepare_pt2e` (line 14)")


def test_a_switch_before_a_continue_reaches_the_next_iteration():
    (found,) = findings(
        """
        def main(xs, q):
            model = net().eval()
            for x in xs:
                if x is None:
                    model.train()
                    continue
                convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
        """,
        ("QL201",),
    )
    assert found[:2] == ("QL201", 16) and "after `model.train()` at line 14" in found[2]


def test_a_graph_bound_before_a_continue_is_switched_at_the_next_iteration():
    (found,) = findings(
        """
        def main(model, xs, q):
            m = model
            for x in xs:
                m.eval()
                if x is None:
                    m = prepare_pt2e(export(m, (x,)).module(), q)
                    continue
        """,
        ("QL203",),
    )
    assert found[:2] == ("QL203", 13) and "`m` may be the graph from `prepare_pt2e` (line 15)" in found[2]


def test_the_path_that_breaks_reaches_what_follows_the_loop():
    (found,) = findings(
        """
        def main(xs, q):
            model = net().eval()
            for x in xs:
                if x is None:
                    model.train()
                    break
            convert_pt2e(prepare_pt2e(export(model, (xs[0],)).module(), q))
        """,
        ("QL201",),
    )
    assert found[:2] == ("QL201", 16) and "after `model.train()` at line 14" in found[2]


def test_past_an_else_that_raises_only_the_paths_that_break_go_on():
    # Read as ending every path before: what followed the loop was never read.
    (found,) = findings(
        """
        def main(xs, q):
            model = net().eval()
            for x in xs:
                if x is None:
                    model.train()
                    break
            else:
                raise ValueError("no batch")
            convert_pt2e(prepare_pt2e(export(model, (xs[0],)).module(), q))
        """,
        ("QL201",),
    )
    message = f"`model` is captured for PTQ in train mode (after `model.train()` at line 14); {TRAIN}"
    assert found == ("QL201", 18, message)


def test_an_else_skipped_by_a_break_leaves_that_path_unswitched():
    (found,) = findings(
        """
        def main(xs, q):
            model = net()
            for x in xs:
                if x is None:
                    break
            else:
                model.eval()
            convert_pt2e(prepare_pt2e(export(model, (xs[0],)).module(), q))
        """,
        ("QL201",),
    )
    assert found[:2] == ("QL201", 17)
    assert "`model.eval()` at line 16 runs on some paths only" in found[2]


def test_a_break_leaves_the_inner_loop_only():
    (found,) = findings(
        """
        def main(xs, q):
            model = net().eval()
            for batch in xs:
                for x in batch:
                    if x is None:
                        model.train()
                        break
                convert_pt2e(prepare_pt2e(export(model, (batch[0],)).module(), q))
                model.eval()
        """,
        ("QL201",),
    )
    assert found[:2] == ("QL201", 17) and "after `model.train()` at line 15" in found[2]

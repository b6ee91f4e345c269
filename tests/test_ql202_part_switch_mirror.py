"""QL201/QL202: the QAT mirror of a part switch that decides the model's mode (text72's
leftover, stop 72's closing note). `model.eval(); model.body.train()` before
`prepare_qat_pt2e`, where `body` holds all of the model's mode-dependent content, trains every
module whose mode matters: read on torch 2.13, the exported graph's batch norm and dropout
train (`Net`, `SeqNet`), under `.train()`, a `modules()` or `children()` loop of `.train()`,
and a loop setting each child's flag. It was reported as an eval-mode QAT capture.
`evaled_fields.switched_whole` now reads the switch of such a part to the mode the whole is not
in as the whole's switch, either way. Loud as on torch: another part holding a dropout
(`DropHead`), a class reading `self.training` (`ReadsFlag`), a batch norm below the children
whose flags the loop sets (`Nested`), a part that holds none of the content (`head`), and a
field that may not hold all it builds (`Walrus`, `Registers`, `Starred`)."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint
from tests.test_ql201_part_holds_the_mode import HEAD

TRAINS = {
    "train": "model.body.train()",
    "train-true": "model.body.train(True)",
    "modules-train": "for m in model.body.modules():\n        m.train()",
    "children-train": "for m in model.body.children():\n        m.train()",
    "children-flags": "for m in model.body.children():\n        m.training = True",
    "children-setattr": 'for _, m in model.body.named_children():\n        setattr(m, "training", True)',
}
EVALS = {
    "eval": "model.body.eval()",
    "modules-eval": "for m in model.body.modules():\n        m.eval()",
    "children-flags": "for m in model.body.children():\n        m.training = False",
}

RUN = """
def run(x, q):
    model = {cls}()
    model.{whole}()
    {switch}
    return {prepare}(torch.export.export(model, (x,)).module(), q)
"""


def codes(cls: str, whole: str, switch: str, prepare: str) -> list[tuple[str, int]]:
    src = HEAD + textwrap.dedent(RUN).format(cls=cls, whole=whole, switch=switch, prepare=prepare)
    row = HEAD.count("\n") + 6 + switch.count("\n")
    return [(d.code, d.range.start.row - row) for d in lint(src, select=("QL201", "QL202"))]


@pytest.mark.parametrize("cls", ["Net", "SeqNet"])
@pytest.mark.parametrize("switch", TRAINS.values(), ids=TRAINS.keys())
def test_a_part_holding_all_the_mode_trained_after_the_eval_is_a_train_capture(cls, switch):
    assert codes(cls, "eval", switch, "prepare_qat_pt2e") == []
    assert codes(cls, "eval", switch, "prepare_pt2e") == [("QL201", 0)]


@pytest.mark.parametrize("cls", ["DropHead", "ReadsFlag"])
@pytest.mark.parametrize("switch", TRAINS.values(), ids=TRAINS.keys())
def test_mode_outside_the_trained_part_stays_reported_for_qat(cls, switch):
    assert codes(cls, "eval", switch, "prepare_qat_pt2e") == [("QL202", 0)]


@pytest.mark.parametrize(
    ("cls", "switch"),
    [
        ("Nested", TRAINS["children-flags"]),  # the batch norm is Body's, inside the child
        ("SeqInner", TRAINS["children-flags"]),
        ("Starred", TRAINS["train"]),  # built outside the field's statement
        ("Registers", TRAINS["train"]),  # `self.kept` may store the dropout elsewhere too
        ("Walrus", TRAINS["train"]),  # the dropout is `self.tail` too
        ("Net", "model.head.train()"),  # the part holds none of the mode-dependent content
        ("Net", "model.body.train()\n    model.body.bn.eval()"),  # a part of it evaled again
        ("Net", "model.body.train()\n    model.eval()"),  # the whole evaled again
    ],
)
def test_parts_the_train_switch_may_not_reach_stay_reported_for_qat(cls, switch):
    assert codes(cls, "eval", switch, "prepare_qat_pt2e") == [("QL202", 0)]


@pytest.mark.parametrize("cls", ["Net", "SeqNet"])
@pytest.mark.parametrize("switch", EVALS.values(), ids=EVALS.keys())
def test_the_ptq_side_after_a_whole_train(cls, switch):
    # `model.train(); model.body.eval()`: the PTQ mirror, read as text72 read the fresh model.
    assert codes(cls, "train", switch, "prepare_pt2e") == []
    assert codes(cls, "train", switch, "prepare_qat_pt2e") == [("QL202", 0)]


@pytest.mark.parametrize("switch", EVALS.values(), ids=EVALS.keys())
def test_the_ptq_side_with_mode_outside_the_part_stays_reported(switch):
    assert codes("DropHead", "train", switch, "prepare_pt2e") == [("QL201", 0)]
    assert codes("Net", "train", "model.head.eval()", "prepare_pt2e") == [("QL201", 0)]

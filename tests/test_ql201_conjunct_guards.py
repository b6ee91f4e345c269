"""QL201: branches on `a and b` guard what they do by each of their conditions.

IPEX's trainer (`_wrap_model`) switches the model (`ipex_optimize_model`: `eval()` or
`train()` by its `training` flag) under `use_ipex and not int8`, and captures under
`inductor and not training`, then `int8`: the switch and the capture never run together. A
branch on a conjunction runs under each recognised condition of it; its other arm under
their negated conjunction, which says nothing of any one of them. A `.train()` on no path to
a prepare is no "QAT-only" switch either.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint
from tests.snippets import NET_BN2D


def _rows(body: str) -> list[int]:
    source = NET_BN2D + textwrap.dedent(body)
    return [d.range.start.row for d in lint(source, select=("QL201",))]


def _row_of(body: str, text: str) -> int:
    return (NET_BN2D + textwrap.dedent(body)).splitlines().index(text) + 1


SWITCHED = """
def run(x, use_opt, int8, ready):
    model = Net().eval()
    if SWITCH:
        model.train()
    if CAPTURE:
        captured = export(model, (x,)).module()
        return prepare_pt2e(captured, None)
"""
CAPTURE = "        captured = export(model, (x,)).module()"


def test_a_switch_under_a_conjunction_the_capture_rules_out_is_quiet():
    body = SWITCHED.replace("SWITCH", "use_opt and not int8").replace("CAPTURE", "ready and int8")
    assert _rows(body) == []
    nested = SWITCHED.replace("SWITCH", "use_opt and (ready and not int8)").replace("CAPTURE", "int8")
    assert _rows(nested) == []


def test_a_switch_a_conjunction_does_not_rule_out_is_the_finding():
    for switch, capture in (
        ("use_opt and int8", "ready and int8"),  # both can hold
        ("use_opt or not int8", "int8"),  # a disjunction: `use_opt` alone switches
        ("not (use_opt and int8)", "int8"),  # the negated conjunction says nothing of `int8`
    ):
        body = SWITCHED.replace("SWITCH", switch).replace("CAPTURE", capture)
        assert _rows(body) == [_row_of(body, CAPTURE)], (switch, capture)


RETURNS = """
def run(x, int8, ready):
    model = Net().eval()
    if not int8:
        model.train()
    if TEST:
        pass
    else:
        return None
    captured = export(model, (x,)).module()
    return prepare_pt2e(captured, None)
"""


def test_what_follows_a_conjunction_whose_other_arm_returns_runs_under_it():
    assert _rows(RETURNS.replace("TEST", "int8 and ready")) == []
    body = RETURNS.replace("TEST", "int8 or ready")
    assert _rows(body) == [_row_of(body, "    captured = export(model, (x,)).module()")]


TRAINER = """
class Trainer:
    def __init__(self, model, args):
        self.model = model
        self.args = args

    def load(self, path):
        self.model = torch.load(path)

    def optimize(self, model, training=False):
        if not training:
            model.eval()
        elif not model.training:
            model.train()
        return model

    def _wrap_model(self, model, training=True):
        if self.args.use_ipex and not self.args.int8:
            model = self.optimize(model, training)
        if self.args.inductor and not training:
            if self.args.int8:
                captured = export(model, (self.args.x,)).module()
                return prepare_pt2e(captured, None)
        return model

    def evaluate(self):
        return self._wrap_model(MODEL, training=False)
"""


def test_the_trainer_that_optimises_and_captures_on_exclusive_paths():
    # `self.model`, which `load` may replace: a model of unknown mode, as quiet as before.
    assert _rows(TRAINER.replace("MODEL", "self.model")) == []
    # The look-alike that is wrong: a train-mode batch-norm model handed to the capture.
    body = TRAINER.replace("MODEL", "Net()")
    assert _rows(body) == [_row_of(body, "                captured = export(model, (self.args.x,)).module()")]

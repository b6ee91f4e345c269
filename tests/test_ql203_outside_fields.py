"""QL203 on a graph field set from outside its class: `runner.gm = prepare_pt2e(...)` then
`runner.calibrate()`, whose `self.gm.eval()` raises on torch 2.13 (`handed_switches.handed_fields`).
Reported at the call that hands the field over, as a graph handed to a switching helper is."""

from __future__ import annotations

import textwrap

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import fix, lint

HEAD = """\
import copy
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Runner:
    def __init__(self, eager=False):
        self.gm = None
        self.eager = eager

    def calibrate(self, loader):
        self.gm.eval()
        for x in loader:
            self.gm(x)

    def run(self, loader):
        self.calibrate(loader)

    def careful(self):
        allow_exported_model_train_eval(self.gm)
        self.gm.eval()

    def copied(self):
        self.gm = copy.deepcopy(self.gm)
        self.gm.eval()

    def flagged(self):
        if self.eager:
            self.gm.eval()

"""  # `calibrate`'s switch is on line 13; the snippets start on line 32


def found(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL203",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


SET = """
def f(model, q, x, loader):
    runner = Runner()
    runner.gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
    runner.calibrate(loader)
"""


def test_a_method_switching_a_field_the_caller_set_to_a_graph():
    (d,) = found(SET)
    assert d.range.start.row == 36
    assert "`runner.gm` comes from `prepare_pt2e` (line 35)" in d.message
    assert "runs `.eval()` on `self.gm` (line 13)" in d.message
    assert d.fix.applicability is Applicability.UNSAFE
    fixed = fix(HEAD + textwrap.dedent(SET), select=("QL203",), unsafe=True)
    assert "    allow_exported_model_train_eval(runner.gm)\n    runner.calibrate(loader)" in fixed


def test_through_a_method_of_its_own():
    assert rows(
        """
        def f(model, q, x, loader):
            runner = Runner()
            runner.gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            runner.run(loader)
        """
    ) == [36]


@pytest.mark.parametrize(
    "src",
    [
        # an eager module there; the graph allowed first
        """
        def f(model, q, x, loader):
            runner = Runner()
            runner.gm = model
            runner.calibrate(loader)
            other = Runner()
            other.gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            allow_exported_model_train_eval(other.gm)
            other.calibrate(loader)
        """,
        # methods that allow the field, switch a copy of it, or switch it under a flag
        """
        def f(model, q, x, loader):
            runner = Runner()
            runner.gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            runner.careful()
            other = Runner()
            other.gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            other.copied()
            third = Runner(eager=True)
            third.gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            third.flagged()
        """,
        # the field set to a graph, then to the eager model, before the call
        """
        def f(model, q, x, loader):
            runner = Runner()
            runner.gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            runner.gm = model
            runner.calibrate(loader)
        """,
    ],
)
def test_quiet_fields(src):
    assert rows(src) == []

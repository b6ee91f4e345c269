"""QL203 on a graph a class keeps in `self.<attr>` and hands, in another method, to a helper that
switches it (`self.gm = prepare_pt2e(...)` in `__init__`, `switch_off(self.gm)` in `calibrate`):
reported at the call, as a graph handed to a switching helper is (`FunctionFlow.field_handed`,
`graph_fields`)."""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import copy
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def switch_off(g):
    g.eval()


def run(g, x, train=False):
    if train:
        g.train()
    return g(x)

"""  # `switch_off`'s switch is on line 8, `run`'s on line 13; the snippets start on line 16


def found(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL203",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


def test_a_field_handed_to_a_switching_helper_in_another_method():
    (d,) = found(
        """
        class Runner:
            def __init__(self, m, q, x):
                self.gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)

            def calibrate(self):
                switch_off(self.gm)
        """
    )
    assert d.range.start.row == 22
    assert d.message.startswith("`self.gm` comes from `prepare_pt2e` (line 19) and this call runs `.eval()`")
    assert "on it (line 8)" in d.message


def test_flags_of_the_helper_are_read_at_the_call():
    assert rows(
        """
        class Runner:
            def __init__(self, m, q, x):
                self.gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)

            def calibrate(self, x):
                run(self.gm, x)
                run(self.gm, x, train=True)
        """
    ) == [23]


def test_through_a_method_of_the_class():
    assert rows(
        """
        class Runner:
            def setup(self, m, q, x):
                self.gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)

            def calibrate(self):
                self._off()

            def _off(self):
                switch_off(self.gm)
        """
    ) == [25]


def test_allowed_copied_or_eager_fields_are_quiet():
    assert not rows(
        """
        class Allowed:
            def __init__(self, m, q, x):
                self.gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
                allow_exported_model_train_eval(self.gm)

            def calibrate(self):
                switch_off(self.gm)

        class Copies:
            def __init__(self, m, q, x):
                self.gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)

            def calibrate(self):
                switch_off(copy.deepcopy(self.gm))
                g = copy.deepcopy(self.gm)
                switch_off(g)

            def allows_here(self):
                allow_exported_model_train_eval(self.gm)
                switch_off(self.gm)

        class Eager:
            def __init__(self, m):
                self.gm = m

            def calibrate(self):
                switch_off(self.gm)

        class Sometimes:
            def __init__(self, m, q, x, export=True):
                self.gm = m
                if export:
                    self.gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)

            def calibrate(self):
                switch_off(self.gm)
        """
    )


def test_a_field_set_from_outside_and_handed_by_a_method():
    # `runner.gm = prepare_pt2e(...)`, then `runner.calibrate()` whose `switch_off(self.gm)` raises.
    (d,) = found(
        """
        class Runner:
            def __init__(self):
                self.gm = None

            def calibrate(self):
                switch_off(self.gm)

        def f(m, q, x):
            runner = Runner()
            runner.gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            runner.calibrate()
        """
    )
    assert d.range.start.row == 27
    assert "`runner.gm` comes from `prepare_pt2e` (line 26)" in d.message

"""QL203 through callbacks called from a list (`for cb in callbacks: cb(gm)`: a list written in
place, or a helper's parameter whose elements it calls) and through a local bound to a function
(`fn = to_eval; fn(gm)`)."""

from __future__ import annotations

import textwrap

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import lint

HEAD = """\
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def switch_off(model):
    model.train(False)


def log(model):
    print(model)


def allow_then_eval(model):
    allow_exported_model_train_eval(model)
    model.eval()


def run_all(callbacks, model):
    for cb in callbacks:
        cb(model)


def run_on_children(callbacks, model):
    for cb in callbacks:
        cb(list(model.children())[0])

"""  # `switch_off`'s switch is on line 7; the snippets start on line 28


def found(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL203",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


def test_a_loop_over_a_list_written_in_place():
    (d,) = found(
        """
        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            for cb in [log, switch_off]:
                cb(gm)
        """
    )
    assert d.range.start.row == 32
    assert "`gm` comes from `prepare_pt2e` (line 30)" in d.message and "(line 7)" in d.message
    assert d.fix.applicability is Applicability.UNSAFE


def test_a_helper_that_calls_each_callback_of_its_list_parameter():
    assert rows(
        """
        CALLBACKS = (log, switch_off)

        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            run_all([log, switch_off], gm)
            run_all(CALLBACKS, gm)
        """
    ) == [33, 34]


def test_a_list_parameter_handed_on_to_the_helper():
    assert rows(
        """
        def relay(callbacks, model):
            run_all(callbacks, model)

        def f(model, q, x):
            relay([switch_off], prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q))
        """
    ) == [33]


def test_a_local_bound_to_a_switching_function():
    assert rows(
        """
        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            fn = switch_off
            fn(gm)
        """
    ) == [32]


@pytest.mark.parametrize(
    "src",
    [
        # every callback of the list allows the graph first, or switches nothing
        """
        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            for cb in [log, allow_then_eval]:
                cb(gm)
            run_all([log, allow_then_eval], gm)
        """,
        # an eager module handed to the switching callbacks; the graph allowed first
        """
        def f(model, q, x):
            run_all([switch_off], model)
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            allow_exported_model_train_eval(gm)
            run_all([switch_off], gm)
            for cb in [switch_off]:
                cb(gm)
        """,
        # the helper hands its callbacks something built from the graph, not the graph
        """
        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            run_on_children([switch_off], gm)
        """,
        # a local bound to a function that switches nothing, and one rebound before the call
        """
        def f(model, q, x, flag):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            fn = log
            fn(gm)
            other = switch_off
            if flag:
                other = log
            other(gm)
        """,
    ],
)
def test_quiet_callback_lists(src):
    assert rows(src) == []

"""QL203 on a value that is the prepared graph on some paths only, handed to a helper that
switches its parameter (voyager-compiler's QA script: `model = prepare_pt2e(...)` under `if
args.pt2e:`, then the nested `calibrate(model, ...)` that starts with `model.eval()`), and on
a graph whose `eval`/`train` were replaced on the instance (its ImageNet script:
`model.eval = types.MethodType(_eval, model)` with `_eval` doing nothing)."""

from __future__ import annotations

import textwrap

from qlint.diagnostic import Applicability
from tests.conftest import lint

HEAD = """\
import types

import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def calibrate(model, data):
    model.eval()
    for batch in data:
        model(batch)

"""  # the helper's switch is on line 9; the snippets start on line 13


def found(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL203",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


def test_a_maybe_graph_handed_to_a_switching_helper_is_reported():
    diagnostics = found(
        """
        def main(model, x, q, data, pt2e):
            if pt2e:
                model = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            calibrate(model, data)
        """
    )
    assert [d.range.start.row for d in diagnostics] == [17]
    (d,) = diagnostics
    assert "may be the graph from `prepare_pt2e` (line 16)" in d.message
    assert "runs `.eval()` on it (line 9)" in d.message
    assert len(d.message) <= 160
    # The eager path needs the helper's switch: no rewrite is right for both.
    assert d.fix.applicability is Applicability.DISPLAY_ONLY


def test_a_nested_helper_and_a_keyword_argument_are_reported():
    assert rows(
        """
        def main(model, x, q, data, args):
            if args.pt2e:
                model = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            def calib(model, data):
                model.eval()
                return model(data)
            if args.steps > 0:
                calib(model, data)
            calibrate(data=data, model=model)
        """
    ) == [21, 22]


def test_the_graph_on_every_path_keeps_its_message():
    (d,) = found(
        """
        def main(model, x, q, data):
            model = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            calibrate(model, data)
        """
    )
    assert "`model` comes from `prepare_pt2e` (line 15) and this call runs" in d.message


def test_an_eager_model_on_every_path_is_quiet():
    assert (
        rows(
            """
        def main(model, x, q, data, pt2e):
            if pt2e:
                gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
                gm(x)
            calibrate(model, data)
        """
        )
        == []
    )


def test_a_helper_switching_under_a_condition_is_quiet():
    # `if not (a and b):` leaves no guard the caller could test: only an unconditional switch counts.
    assert (
        rows(
            """
        def evaluate(model, args):
            if not (args.inductor and args.int8):
                model.eval()
            return model
        def check(model, flag):
            for _ in range(2):
                model.train()
        def main(model, x, q, args):
            if args.inductor and args.int8:
                model = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            evaluate(model, args)
            check(model, True)
        """
        )
        == []
    )


def test_a_helper_asking_what_the_model_is_is_quiet():
    assert (
        rows(
            """
        def switch(model):
            model.eval()
            return isinstance(model, torch.fx.GraphModule)
        def main(model, x, q, pt2e):
            if pt2e:
                model = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            switch(model)
        """
        )
        == []
    )


def test_an_allowed_graph_a_graph_made_after_and_a_call_under_try_are_quiet():
    assert (
        rows(
            """
        def main(model, x, q, data, pt2e):
            if pt2e:
                model = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
                allow_exported_model_train_eval(model)
            calibrate(model, data)
        def later(model, x, q, data, pt2e):
            calibrate(model, data)
            if pt2e:
                model = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
        def guarded(model, x, q, data, pt2e):
            if pt2e:
                model = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            try:
                calibrate(model, data)
            except NotImplementedError:
                pass
        """
        )
        == []
    )


def test_switches_replaced_on_the_instance_by_functions_that_do_nothing_are_quiet():
    # The ImageNet script's shape: the graph's own `eval`/`train` never run after the patch.
    assert (
        rows(
            """
        def main(model, x, q, data, pt2e):
            if pt2e:
                model = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
                def _eval(self, mode=True):
                    pass
                model.eval = types.MethodType(_eval, model)
                model.train = types.MethodType(_eval, model)
            calibrate(model, data)
            model.train()
        def always(model, x, q):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            gm.eval = lambda mode=True: gm
            gm.eval()
        """
        )
        == []
    )


def test_replacements_that_may_switch_or_are_not_read_are_reported():
    assert rows(
        """
        def main(model, x, q, data, pt2e, other):
            if pt2e:
                model = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
                original = model.eval
                def _eval(self, mode=True):
                    return original()
                model.eval = types.MethodType(_eval, model)
            calibrate(model, data)
        def imported(model, x, q, other):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            gm.eval = types.MethodType(other.noop, gm)
            gm.train = lambda mode=True: torch.nn.Module.train(gm, mode)
            gm.eval()
            gm.train()
        """
    ) == [21, 26, 27]

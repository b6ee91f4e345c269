"""QL203 through a callback parameter that a helper calls with a graph it makes itself:
`def run(cb, m, q, x): gm = prepare_pt2e(...); cb(gm)` called as `run(switch_off, ...)`, where
`switch_off` runs `g.eval()` (`callbacks.CallbackCall.made`). Reported at the call that chose
the callback; a lambda written there is read with its parameter bound to the graph."""

from __future__ import annotations

import textwrap

from qlint.diagnostic import Applicability
from tests.conftest import lint, write_package

HEAD = """\
import copy
import functools
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval, move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def switch_off(g):
    g.eval()


def allow_then_off(g):
    allow_exported_model_train_eval(g)
    g.eval()


def moves(g):
    move_exported_model_to_eval(g)


def maybe_off(g, flag=False):
    if flag:
        g.eval()


def run(cb, m, q, x, calibrate=False):
    gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
    if calibrate:
        cb(gm, x)
    cb(gm)
    return gm

"""  # `switch_off`'s switch is on line 9, `run`'s prepare on line 27; the snippets start on line 33


def found(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL203",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


def test_a_switching_callback_is_reported_at_the_call_that_chose_it():
    (d,) = found(
        """
        def main(m, q, x):
            run(switch_off, m, q, x)
        """
    )
    assert d.range.start.row == 35
    assert d.message.startswith("`run` calls `switch_off` with the graph it makes from `prepare_pt2e` (line 27)")
    assert "runs `.eval()` on it (line 9)" in d.message
    # The graph is no name at the call, and the callback is right for eager modules.
    assert d.fix.applicability is Applicability.DISPLAY_ONLY


def test_through_functools_partial():
    assert rows(
        """
        from functools import partial

        def main(m, q, x):
            run(functools.partial(switch_off), m, q, x)
            run(partial(switch_off), m, q, x)
        """
    ) == [37, 38]


def test_a_partial_that_binds_the_graph_parameter_is_quiet():
    # `cb(gm)` fills `maybe_off`'s `flag`, not `g`; a keyword may bind the parameter itself.
    assert not rows(
        """
        def main(m, q, x, other):
            run(functools.partial(maybe_off, other), m, q, x)
            run(functools.partial(switch_off, g=other), m, q, x)
        """
    )


def test_a_lambda_is_reported_where_it_switches_with_a_safe_fix():
    (d,) = found(
        """
        def main(m, q, x):
            run(lambda g: g.train(), m, q, x)
        """
    )
    assert (d.range.start.row, d.range.start.col) == (35, 18)
    assert "`g` comes from `prepare_pt2e` (line 27)" in d.message
    assert d.fix.applicability is Applicability.SAFE


def test_right_callbacks_are_quiet():
    # Allowing first, or moving with the torchao helper, works on the graph; a switch under
    # a flag the helper does not pass does not run; `print` switches nothing.
    assert not rows(
        """
        def main(m, q, x):
            run(allow_then_off, m, q, x)
            run(moves, m, q, x)
            run(maybe_off, m, q, x)
            run(print, m, q, x)
            run(lambda g: move_exported_model_to_eval(g), m, q, x)
        """
    )


def test_a_helper_that_allows_or_copies_the_graph_first_is_quiet():
    assert not rows(
        """
        def allowing(cb, m, q, x):
            gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            allow_exported_model_train_eval(gm)
            cb(gm)

        def copying(cb, m, q, x):
            gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            cb(copy.deepcopy(gm))

        def expecting(cb, m, q, x):
            gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            try:
                cb(gm)
            except NotImplementedError:
                pass

        def main(m, q, x):
            allowing(switch_off, m, q, x)
            copying(switch_off, m, q, x)
            expecting(switch_off, m, q, x)
            allowing(lambda g: g.eval(), m, q, x)
        """
    )


def test_a_call_under_a_flag_the_caller_rules_out_is_quiet():
    assert rows(
        """
        def run_if(cb, m, q, x, train=False):
            gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            if train:
                cb(gm)

        def main(m, q, x):
            run_if(switch_off, m, q, x)
            run_if(switch_off, m, q, x, train=True)
        """
    ) == [41]


def test_through_helpers_of_helpers():
    # The graph made in `outer` and handed on with the callback to a relay; the callback
    # handed on to the helper that makes the graph.
    assert rows(
        """
        def relay(cb, g):
            cb(g)

        def outer(cb, m, q, x):
            gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            relay(cb, gm)

        def outer2(cb, m, q, x):
            run(cb, m, q, x)

        def main(m, q, x):
            outer(switch_off, m, q, x)
            outer2(switch_off, m, q, x)
        """
    ) == [45, 46]


def test_an_eager_model_handed_to_the_callback_is_quiet():
    assert not rows(
        """
        def run_eager(cb, m):
            cb(m)
            cb(torch.nn.Linear(2, 2))

        def main(m):
            run_eager(switch_off, m)
        """
    )


def test_helper_in_another_module(tmp_path):
    (tmp_path / ".git").mkdir()
    write_package(
        tmp_path,
        "pkg",
        helpers=(
            "import torch\n"
            "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n"
            "\n"
            "\n"
            "def run(cb, m, q, x):\n"
            "    gm = prepare_pt2e(torch.export.export(m, (x,)).module(), q)\n"
            "    cb(gm)\n"
        ),
    )
    main = tmp_path / "pkg" / "main.py"
    main.write_text(
        "from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e\n"
        "from pkg.helpers import run\n"
        "\n"
        "\n"
        "def switch_off(g):\n"
        "    g.eval()\n"
        "\n"
        "\n"
        "def main(m, q, x):\n"
        "    run(switch_off, m, q, x)\n"
        "    return convert_pt2e(m)\n"
    )
    (d,) = lint(main.read_text(), path=str(main), select=("QL203",))
    assert d.range.start.row == 10
    assert "from `prepare_pt2e` (helpers.py:6)" in d.message and "(line 6)" in d.message

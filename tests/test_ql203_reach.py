"""QL203 reaching further: graphs returned by a helper of another module (`graph_returns`),
switched by a callback a higher-order helper calls with the graph (`callbacks`), and a helper
that allows its parameter under a flag, judged call by call (`handed_switches`)."""

from __future__ import annotations

import textwrap

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import lint, write_package

HEAD = """\
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def evaluate(model, is_graph=False):
    if is_graph:
        allow_exported_model_train_eval(model)
    model.eval()


def run_with(fn, model):
    return fn(model)


def switch_off(model):
    model.train(False)

"""  # `evaluate`'s switch is on line 9, `switch_off`'s on line 17; the snippets start on line 19


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), select=("QL203",))]


# -- a helper that allows its parameter under a flag -----------------------------------------


def test_the_call_that_rules_the_allow_out_is_reported():
    assert rows(
        """
        def f(model, q, x):
            evaluate(model)
            evaluate(prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q))
            evaluate(prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q), False)
            prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            evaluate(prepared, is_graph=True)
            evaluate(prepared)  # allowed by the call before: allowing changes the graph itself
        """
    ) == [22, 23]


def test_a_flag_the_call_does_not_decide_is_quiet():
    assert (
        rows(
            """
        def f(model, q, x, flag, **kwargs):
            prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            evaluate(prepared, flag)
            evaluate(prepared, **kwargs)
        """
        )
        == []
    )


def test_a_wrapper_that_rules_the_allow_out_hands_its_parameter_on():
    assert rows(
        """
        def eager_eval(model):
            evaluate(model, is_graph=False)

        def graph_eval(model):
            evaluate(model, is_graph=True)

        def f(model, q, x):
            graph_eval(prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q))
            eager_eval(model)
            eager_eval(prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q))
        """
    ) == [29]


# -- callbacks ---------------------------------------------------------------------------


def test_a_callback_that_switches_the_graph_it_is_handed():
    (d,) = lint(
        HEAD
        + textwrap.dedent(
            """
            def f(model, q, x):
                prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
                run_with(switch_off, prepared)
            """
        ),
        select=("QL203",),
    )
    assert d.range.start.row == 22
    assert "`prepared` comes from `prepare_pt2e` (line 21)" in d.message and "(line 17)" in d.message
    assert d.fix.applicability is Applicability.UNSAFE


def test_a_callback_handed_on_through_a_wrapper():
    assert rows(
        """
        def relay(fn, model):
            return run_with(fn, model)

        def f(model, q, x):
            run_with(switch_off, model)
            relay(switch_off, convert_pt2e(prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)))
        """
    ) == [25]


def test_a_lambda_callback_that_switches_the_graph():
    # Read where it is written (`relayed_lambdas`): reported inside the lambda, once.
    assert rows(
        """
        def f(model, q, x):
            prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            run_with(lambda m: m.eval(), model)
            run_with(lambda m: print(m.eval), prepared)
            run_with(lambda m: m.train(), prepared)
        """
    ) == [24]


@pytest.mark.parametrize(
    "src",
    [
        # an eager module, an allowed graph, a callback that switches nothing
        """
        def f(model, q, x):
            run_with(switch_off, model)
            prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            run_with(print, prepared)
            allow_exported_model_train_eval(prepared)
            run_with(switch_off, prepared)
        """,
        # the helper hands the callback something built from the graph, not the graph
        """
        def on_first(fn, model):
            return fn(list(model.children())[0])

        def f(model, q, x):
            prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            on_first(switch_off, prepared)
        """,
    ],
)
def test_quiet_callbacks(src):
    assert rows(src) == []


# -- graphs returned by a helper of another module -----------------------------------------

HELPERS = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def capture(model, x):
    return torch.export.export(model, (x,)).module()


def quantize(model, q, x):
    return convert_pt2e(prepare_pt2e(capture(model, x), q))


def maybe(model, x, exported):
    if exported:
        return capture(model, x)
    return model


def wrapped(model, x):
    return torch.nn.Sequential(capture(model, x))
"""


def _project(tmp_path, main: str):
    (tmp_path / ".git").mkdir()
    write_package(tmp_path, "pkg", helpers=HELPERS)
    path = tmp_path / "pkg" / "main.py"
    path.write_text(textwrap.dedent(main))
    return path


def test_a_graph_returned_by_a_helper_of_another_module(tmp_path):
    path = _project(
        tmp_path,
        """\
        from pkg.helpers import capture
        from pkg import helpers


        def f(model, q, x):
            gm = capture(model, x)
            gm.eval()
            quantized = helpers.quantize(model, q, x)
            quantized.train()
            capture(model, x).train(False)
        """,
    )
    found = lint(path.read_text(), path=str(path), select=("QL203",))
    assert [(d.range.start.row, d.evidence["origin"]) for d in found] == [
        (7, "ExportedProgram.module()"),
        (9, "convert_pt2e"),
        (10, "ExportedProgram.module()"),
    ]
    assert {d.fix.applicability for d in found} == {Applicability.SAFE}
    # The same with every rule running, and for the engine's import trigger (no graph source here).
    assert [d.range.start.row for d in lint(path.read_text(), path=str(path)) if d.code == "QL203"] == [7, 9, 10]


def test_a_graph_another_module_returns_on_a_branch_is_reported_where_the_branch_reaches(tmp_path):
    path = _project(
        tmp_path,
        """\
        from pkg.helpers import maybe


        def f(model, x, exported):
            m = maybe(model, x, exported)
            m.eval()
            if exported:
                m.train()
            n = maybe(model, x, False)
            n.eval()
        """,
    )
    found = lint(path.read_text(), path=str(path), select=("QL203",))
    assert [d.range.start.row for d in found] == [6, 8]
    assert "may be the graph from `ExportedProgram.module()`" in found[0].message


def test_quiet_returns_of_another_module(tmp_path):
    path = _project(
        tmp_path,
        """\
        import torch
        from pkg.helpers import capture, maybe, wrapped
        from torchao.quantization.pt2e import allow_exported_model_train_eval


        def f(model, x, exported):
            m = maybe(model, x, exported)
            if not exported:  # the helper's eager branch (switched on every path: reported)
                m.eval()
            model.eval()
            w = wrapped(model, x)
            gm = capture(model, x)
            allow_exported_model_train_eval(gm)
            gm.eval()
            compiled = torch.compile(model)
            compiled.eval()
        """,
    )
    assert lint(path.read_text(), path=str(path), select=("QL203",)) == []

"""QL203 through helpers: an exported graph handed to a helper that switches its parameter's
mode. Reported at the call that hands the graph over; the helper is right for eager modules."""

from __future__ import annotations

import textwrap

from qlint.diagnostic import Applicability
from tests.conftest import fix, lint, write_package

HEAD = """\
import copy
import pytest
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def calibrate(model, loader):
    model.eval()
    for x in loader:
        model(x)

"""  # `calibrate`'s switch is on line 9; the snippet starts on line 13


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), select=("QL203",))]


def test_prepared_graph_handed_to_a_switching_helper():
    (d,) = lint(
        HEAD
        + textwrap.dedent(
            """
            def quantize(model, q, loader, x):
                prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
                calibrate(prepared, loader)
                return convert_pt2e(prepared)
            """
        ),
        select=("QL203",),
    )
    assert (d.range.start.row, d.range.start.col) == (16, 4)
    assert "`prepared` comes from `prepare_pt2e` (line 15)" in d.message
    assert "runs `.eval()` on it (line 9)" in d.message and "NotImplementedError" in d.message
    assert d.fix.applicability is Applicability.UNSAFE
    assert "allow_exported_model_train_eval(prepared)" in d.fix.message
    assert d.evidence == {"mode": "eval", "origin": "prepare_pt2e", "origin_row": 15, "allowed_fix": True}


def test_module_and_converted_graphs():
    assert rows(
        """
        def f(model, q, loader, x):
            gm = torch.export.export(model.eval(), (x,)).module()
            calibrate(gm, loader)
            calibrate(convert_pt2e(prepare_pt2e(gm, q)), loader)
        """
    ) == [16, 17]


def test_allowed_graph_is_quiet():
    assert (
        rows(
            """
        def f(model, q, loader, x):
            prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            allow_exported_model_train_eval(prepared)
            calibrate(prepared, loader)
        """
        )
        == []
    )


def test_helper_that_allows_first_is_quiet():
    assert (
        rows(
            """
        def calibrate_allowed(model, loader):
            allow_exported_model_train_eval(model)
            model.eval()

        def f(model, q, loader, x):
            prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            calibrate_allowed(prepared, loader)
        """
        )
        == []
    )


def test_copies_drop_the_override_and_are_quiet():
    # Measured on torch 2.13/torchao 0.18: `.eval()` on a deepcopy (or copy) of a graph from
    # `.module()`, `prepare_pt2e` or `convert_pt2e` raises nothing.
    assert (
        rows(
            """
        def f(model, q, loader, x):
            prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            calibrate(copy.deepcopy(prepared), loader)
            copy.deepcopy(prepared).eval()
            clone = copy.copy(prepared)
            clone.train()
        """
        )
        == []
    )


def test_helper_that_copies_its_parameter_is_quiet():
    assert (
        rows(
            """
        def evaluate(model, loader):
            model = copy.deepcopy(model)
            model.eval()

        def f(model, q, loader, x):
            prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            evaluate(prepared, loader)
        """
        )
        == []
    )


def test_eager_callers_are_quiet():
    assert (
        rows(
            """
        def f(model, loader):
            calibrate(model, loader)
            calibrate(torch.nn.Linear(2, 2), loader)
        """
        )
        == []
    )


def test_graph_or_eager_module_is_reported_on_the_graph_path():
    # Quiet until stop 48; a switch written in place on such a value was reported already
    # (`maybe_graphs`), and the helper's unconditional `.eval()` raises when `quantize` is set.
    (d,) = lint(
        HEAD
        + textwrap.dedent(
            """
        def f(model, q, loader, x, quantize):
            m = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q) if quantize else model
            calibrate(m, loader)
        """
        ),
        select=("QL203",),
    )
    assert d.range.start.row == 16
    assert "`m` may be the graph from `prepare_pt2e` (line 15): on that path this call runs" in d.message


def test_expected_error_is_quiet():
    assert (
        rows(
            """
        def test_raises(model, loader, x):
            gm = torch.export.export(model.eval(), (x,)).module()
            with pytest.raises(NotImplementedError):
                calibrate(gm, loader)
        """
        )
        == []
    )


def test_switch_under_a_flag_the_call_rules_out():
    assert rows(
        """
        def run(model, loader, train=False):
            if train:
                model.train()
            for x in loader:
                model(x)

        def f(model, loader, x):
            gm = torch.export.export(model.eval(), (x,)).module()
            run(gm, loader)
            run(gm, loader, train=True)
        """
    ) == [23]


def test_through_a_wrapper_the_caller_is_reported():
    assert rows(
        """
        def calibrate_all(model, loaders):
            for loader in loaders:
                calibrate(model, loaders)

        def f(model, q, loaders, x):
            prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            calibrate_all(prepared, loaders)
        """
    ) == [20]


def test_wrapper_that_allows_before_handing_on_is_quiet():
    assert (
        rows(
            """
        def calibrate_all(model, loaders):
            allow_exported_model_train_eval(model)
            for loader in loaders:
                calibrate(model, loaders)

        def f(model, q, loaders, x):
            prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            calibrate_all(prepared, loaders)
        """
        )
        == []
    )


def test_method_helper_and_train_flag():
    assert rows(
        """
        class Runner:
            def fit(self, model, mode):
                model.train(mode)

            def run(self, model, q, x):
                prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
                self.fit(prepared, True)
        """
    ) == [20]


def test_helper_in_another_module(tmp_path):
    (tmp_path / ".git").mkdir()
    write_package(tmp_path, "pkg", utils="def calibrate(model, loader):\n    model.eval()\n    model(loader)\n")
    main = tmp_path / "pkg" / "main.py"
    main.write_text(
        "import torch\n"
        "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n"
        "from pkg.utils import calibrate\n\n\n"
        "def f(model, q, loader, x):\n"
        "    with torch.no_grad():\n"  # no `.eval()` in this file: `prepare_pt2e` triggers the rule
        "        prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"
        "    calibrate(prepared, loader)\n"
    )
    (d,) = lint(main.read_text(), path=str(main), select=("QL203",))
    assert d.range.start.row == 9
    assert "(utils.py:2)" in d.message
    # The same with every rule running (the flows QL201 computed are reused).
    assert [x.range.start.row for x in lint(main.read_text(), path=str(main)) if x.code == "QL203"] == [9]


UTILS = """\
def _settle(model):
    model.eval()


def _keep(model):
    return model


class Runner:
    def settle(self, model):
        _settle(model)

    def keep(self, model):
        return _keep(model)
"""


def test_a_method_of_another_module_that_switches_through_a_module_helper(tmp_path):
    # `Runner.settle` names no switch itself: its module's `_settle` does.
    (tmp_path / ".git").mkdir()
    write_package(tmp_path, "pkg", utils=UTILS)
    main = tmp_path / "pkg" / "main.py"
    main.write_text(
        "import torch\n"
        "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n"
        "from pkg.utils import Runner\n\n\n"
        "def f(model, q, x):\n"
        "    prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)\n"
        "    Runner().keep(prepared)\n"
        "    Runner().settle(model)\n"
        "    Runner().settle(prepared)\n"
    )
    (d,) = lint(main.read_text(), path=str(main), select=("QL203",))
    assert d.range.start.row == 10
    assert "(utils.py:2)" in d.message


def test_module_with_arguments_is_a_graph_source():
    assert rows(
        """
        def f(model, loader, x):
            ep = torch.export.export(model.eval(), (x,))
            module = ep.module(check_guards=False)
            calibrate(module, loader)
        """
    ) == [17]


def test_helper_that_catches_the_error_is_quiet():
    assert (
        rows(
            """
        def evaluate(model, loader):
            if hasattr(model, "eval"):
                try:
                    model.eval()
                except NotImplementedError:
                    pass

        def f(model, loader, x):
            module = torch.export.export(model.eval(), (x,)).module(check_guards=False)
            evaluate(module, loader)
        """
        )
        == []
    )


def test_the_helper_itself_is_quiet():
    # Its switch is right for the eager modules; the finding is the caller's.
    assert rows(
        """
        def f(model, q, loader, x):
            prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            calibrate(prepared, loader)
        """
    ) == [16]


def test_the_fix_allows_the_graph_before_the_call():
    src = textwrap.dedent(
        """\
        import torch
        from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


        def calibrate(model, loader):
            model.eval()


        def f(model, q, loader, x):
            prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            if loader:
                calibrate(prepared, loader)  # note
        """
    )
    fixed = fix(src, select=("QL203",), unsafe=True)
    assert fixed == src.replace(
        "prepare_pt2e\n", "prepare_pt2e\nfrom torchao.quantization.pt2e import allow_exported_model_train_eval\n"
    ).replace(
        "        calibrate(prepared, loader)  # note",
        "        allow_exported_model_train_eval(prepared)\n        calibrate(prepared, loader)  # note",
    )
    assert lint(fixed, select=("QL203",)) == []
    assert fix(src, select=("QL203",)) == src  # unsafe only


def test_the_fix_is_display_only_without_a_name_or_a_line_of_its_own():
    diagnostics = lint(
        HEAD
        + textwrap.dedent(
            """
            def f(model, q, loader, x):
                prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
                calibrate(convert_pt2e(prepared), loader)
                x = 1; calibrate(prepared, loader)
            """
        ),
        select=("QL203",),
    )
    assert [d.range.start.row for d in diagnostics] == [16, 17]
    assert {d.fix.applicability for d in diagnostics} == {Applicability.DISPLAY_ONLY}


MAKERS = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg.deeper import exported


def make_graph(model, q, x):
    return prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)


def make_exported(model, x):
    return exported(model, x)
"""

DEEPER = """\
import torch


def exported(model, x):
    return torch.export.export(model.eval(), (x,)).module()
"""


def test_a_graph_made_in_another_module_is_named_where_it_was_made(tmp_path):
    (tmp_path / ".git").mkdir()
    write_package(tmp_path, "pkg", makers=MAKERS, deeper=DEEPER)
    main = tmp_path / "pkg" / "main.py"
    main.write_text(
        "from pkg.makers import make_exported, make_graph\n\n\n"
        "def f(model, q, x):\n"
        "    gm = make_graph(model, q, x)\n"
        "    gm.eval()\n"
        "    make_exported(model, x).train()\n"
    )
    found = lint(main.read_text(), path=str(main), select=("QL203",))
    assert [d.range.start.row for d in found] == [6, 7]
    assert "comes from `prepare_pt2e` (makers.py:8, returned by the call at line 5):" in found[0].message
    # Two modules away: where the graph was made, not the module in between.
    assert "(deeper.py:5, returned by the call at line 7)" in found[1].message
    # The evidence keeps the row of the call here, as before.
    assert found[0].evidence["origin_row"] == 5

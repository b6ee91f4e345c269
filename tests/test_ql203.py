"""QL203 mode-switch-on-exported-graph: `.eval()`/`.train()` on exported GraphModules."""

from __future__ import annotations

import textwrap

import pytest

from qlint.diagnostic import Applicability
from qlint.rules.ql203_mode_switch_on_exported_graph import ModeSwitchOnExportedGraph
from tests.conftest import fix, lint

HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e
"""


def ql203(src: str, head: str = HEAD):
    return lint(head + textwrap.dedent(src), select=("QL203",))


def fixed(src: str, head: str = HEAD) -> str:
    return fix(head + textwrap.dedent(src), select=("QL203",))


@pytest.mark.parametrize(
    ("line", "origin"),
    [
        ("gm = torch.export.export(model, (x,)).module()", "ExportedProgram.module()"),
        ("gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)", "prepare_pt2e"),
        ("gm = prepare_qat_pt2e(torch.export.export(model, (x,)).module(), q)", "prepare_qat_pt2e"),
        ("gm = convert_pt2e(prepare_pt2e(torch.export.export(model, (x,)).module(), q))", "convert_pt2e"),
    ],
)
def test_each_graph_producer(line, origin):
    (d,) = ql203(
        f"""
        def f(model, q, x):
            {line}
            gm.eval()
        """
    )
    assert d.code == "QL203" and d.name == "mode-switch-on-exported-graph"
    assert d.range.start.row == 6 and d.range.start.col == 4
    assert f"`gm` comes from `{origin}` (line 5)" in d.message
    assert "NotImplementedError on torch 2.13" in d.message
    assert d.fix.applicability is Applicability.SAFE
    assert d.evidence == {"mode": "eval", "origin": origin, "origin_row": 5, "allowed_fix": False}


def test_graph_returned_by_a_helper_and_train_false():
    (d,) = ql203(
        """
        def capture(model, x):
            ep = torch.export.export(model, (x,))
            return ep.module()

        def main(model, x):
            gm = capture(model, x)
            gm.train(False)
        """
    )
    assert d.evidence["mode"] == "eval" and "`.train(False)`" in d.message


@pytest.mark.parametrize(
    "src",
    [
        # the eager model, before capture
        """
        def f(model, q, x):
            model.eval()
            gm = torch.export.export(model, (x,)).module()
        """,
        # a parameter: this function cannot know it is a graph
        """
        def f(gm):
            gm.eval()
        """,
        # allowed explicitly
        """
        from torchao.quantization.pt2e import allow_exported_model_train_eval

        def f(model, x):
            gm = torch.export.export(model, (x,)).module()
            allow_exported_model_train_eval(gm)
            gm.eval()
            gm.train()
        """,
        # tests that expect the error
        """
        import pytest

        def test(model, x):
            gm = torch.export.export(model, (x,)).module()
            with pytest.raises(NotImplementedError):
                gm.eval()
        """,
        # one branch eager, one exported, switched only where it is the eager one
        # (switched on every path, it is reported: tests/test_ql203_maybe_graphs.py)
        """
        def f(model, x, exported):
            m = torch.export.export(model, (x,)).module() if exported else model
            if not exported:
                m.eval()
        """,
    ],
)
def test_quiet(src):
    assert ql203(src) == []


def test_trigger_needs_a_graph_source_too():
    rule = ModeSwitchOnExportedGraph()
    assert not rule.triggered_by("model.eval()\nloss.backward()\n")
    assert rule.triggered_by("gm = ep.module()\ngm.eval()\n")


def test_fix_adds_one_import_after_the_imports_and_is_idempotent():
    src = """
    def f(model, q, x):
        gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)
        gm.eval()
        gm(x)
        gm.train()
        convert_pt2e(gm).eval()
    """
    once = fixed(src)
    # The second round merges the train helper into the import the first round added.
    assert once.startswith(
        HEAD + "from torchao.quantization.pt2e import move_exported_model_to_eval, move_exported_model_to_train\n\n"
    )
    assert once.count("import move_exported_model_to_eval") == 1
    assert "    move_exported_model_to_eval(gm)\n    gm(x)\n    move_exported_model_to_train(gm)\n" in once
    assert "    move_exported_model_to_eval(convert_pt2e(gm))\n" in once
    assert fix(once, select=("QL203",)) == once
    assert ql203(once, head="") == []


def test_fix_merges_into_an_existing_import_in_its_style():
    single = fixed(
        """
        from torchao.quantization.pt2e import allow_exported_model_train_eval  # noqa: F401

        def f(model, x):
            torch.export.export(model, (x,)).module().eval()
        """
    )
    assert (
        "from torchao.quantization.pt2e import allow_exported_model_train_eval, move_exported_model_to_eval"
        "  # noqa: F401\n" in single
    )
    multi = fixed(
        """
        from torchao.quantization.pt2e import (
            MinMaxObserver,
            allow_exported_model_train_eval,  # keep
        )

        def f(model, x):
            torch.export.export(model, (x,)).module().train()
        """
    )
    assert "    allow_exported_model_train_eval,  # keep\n    move_exported_model_to_train,\n)\n" in multi


def test_fix_reuses_existing_names_and_backs_off_on_a_clash():
    aliased = fixed(
        """
        import torchao.quantization.pt2e as pt2e

        def f(model, x):
            torch.export.export(model, (x,)).module().eval()
        """
    )
    assert "pt2e.move_exported_model_to_eval(torch.export.export(model, (x,)).module())" in aliased
    assert "from torchao" not in aliased.split("import torchao.quantization.pt2e as pt2e")[1]
    (d,) = ql203(
        """
        def move_exported_model_to_eval(m):
            return m

        def f(model, x, flag):
            gm = torch.export.export(model, (x,)).module()
            gm.eval()
            gm.train(flag)
        """
    )[:1]
    assert d.fix.applicability is Applicability.DISPLAY_ONLY


def test_module_without_imports_gets_the_import_at_the_top():
    src = textwrap.dedent(
        '''\
        """Doc."""


        @decorator
        def f(model, x):
            import torch

            torch.export.export(model, (x,)).module().eval()
        '''
    )
    out = fix(src, select=("QL203",))
    expected = '"""Doc."""\nfrom torchao.quantization.pt2e import move_exported_model_to_eval\n\n\n@decorator'
    assert out.startswith(expected)

"""QL203 and `isinstance` tests: a helper that switches a module's mode only when it is not a
`torch.fx.GraphModule` (ExecuTorch's Cadence `export_program` of mid-2024) raises nothing for
the graphs `prepare_pt2e`/`convert_pt2e`/`.module()` return, which are GraphModules. Tests
on classes whose verdict for such a graph is not known leave the switch reported."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint, write_package

HEAD = """\
import torch
import torch.fx
from torch.fx import GraphModule
from torch.export import ExportedProgram
from torchao.quantization.pt2e import move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


class Wrapper(torch.nn.Module):
    pass

"""  # the snippet starts on line 12


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), select=("QL203",))]


def row_of(src: str, line: str, nth: int = 0) -> int:
    """The 1-based row of the `nth` line of HEAD + snippet that reads `line` (stripped)."""
    lines = [n for n, text in enumerate((HEAD + textwrap.dedent(src)).splitlines(), 1) if text.strip() == line]
    return lines[nth]


CALLER = """
def f(model, q, loader, x):
    gm = convert_pt2e(prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q))
    settle(gm)
"""  # `settle(gm)` is on the snippet's last line


@pytest.mark.parametrize(
    "helper",
    [
        # the ExecuTorch shape: the graph takes the first arm
        "def settle(m):\n    if isinstance(m, torch.fx.GraphModule):\n        move_exported_model_to_eval(m)\n"
        "    else:\n        m.eval()\n",
        "def settle(m):\n    if not isinstance(m, GraphModule):\n        m.eval()\n",
        "def settle(m):\n    if isinstance(m, torch.fx.graph_module.GraphModule):\n        return m\n    m.eval()\n",
        # a graph is no ExportedProgram: the arm for one never runs for it
        "def settle(m):\n    if isinstance(m, ExportedProgram):\n        m.module().eval()\n        m.eval()\n",
        # a tuple with one class a graph is: true for it
        "def settle(m):\n    if isinstance(m, (Wrapper, GraphModule)):\n        return\n    m.eval()\n",
        "def settle(m):\n    if isinstance(m, GraphModule):\n        pass\n"
        "    elif hasattr(m, 'eval'):\n        m.eval()\n",
    ],
)
def test_arm_a_graph_never_takes_is_quiet(helper):
    assert rows(helper + CALLER) == []


@pytest.mark.parametrize(
    "helper",
    [
        # the arm a graph takes switches it
        "def settle(m):\n    if isinstance(m, GraphModule):\n        m.eval()\n",
        "def settle(m):\n    if isinstance(m, torch.nn.Module):\n        m.eval()\n",
        "def settle(m):\n    if not isinstance(m, ExportedProgram):\n        m.eval()\n",
        # a class whose verdict for a graph is unknown, alone or in a tuple with only unknowns/falses
        "def settle(m):\n    if isinstance(m, Wrapper):\n        return\n    m.eval()\n",
        "def settle(m):\n    if isinstance(m, (Wrapper, ExportedProgram)):\n        return\n    m.eval()\n",
        # `type(m) is GraphModule` is false for the generated subclass: not read
        "def settle(m):\n    if type(m) is GraphModule:\n        return\n    m.eval()\n",
    ],
)
def test_arm_a_graph_takes_or_an_unknown_test_is_reported(helper):
    assert rows(helper + CALLER) == [row_of(helper + CALLER, "settle(gm)")]


def test_the_test_on_another_parameter_decides_nothing():
    src = """
        def settle(m, other):
            if isinstance(other, GraphModule):
                return
            m.eval()

        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            settle(gm, gm)
            settle(gm, model)
        """
    assert rows(src) == [row_of(src, "settle(gm, gm)"), row_of(src, "settle(gm, model)")]


def test_a_switch_in_the_arm_a_graph_takes_is_not_hidden_by_one_it_skips():
    src = """
        def settle(m):
            if not isinstance(m, GraphModule):
                m.eval()
            if isinstance(m, torch.nn.Module):
                m.train()

        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            settle(gm)
        """
    (d,) = lint(HEAD + textwrap.dedent(src), select=("QL203",))
    assert d.range.start.row == row_of(src, "settle(gm)")
    assert f"(line {row_of(src, 'm.train()')})" in d.message


def test_a_container_holding_the_graph_is_no_graph_module():
    # `nn.Sequential(gm)` is no GraphModule: the `else` arm runs and switches the graph inside.
    src = """
        def settle(m):
            if isinstance(m, GraphModule):
                move_exported_model_to_eval(m)
            else:
                m.eval()

        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            settle(torch.nn.Sequential(gm))
        """
    assert rows(src) == [row_of(src, "settle(torch.nn.Sequential(gm))")]


def test_through_a_forwarding_helper_the_test_goes_with_the_parameter():
    # `unguarded` switches its parameter itself before handing it on: that switch stands.
    src = """
        def export_program(m, x):
            if isinstance(m, GraphModule):
                move_exported_model_to_eval(m)
            else:
                m.eval()
            return torch.export.export(m, (x,))

        def export_to_edge(model, x):
            return export_program(model, x)

        def unguarded(model, x):
            model.eval()
            return export_program(model, x)

        def f(model, q, x):
            gm = convert_pt2e(prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q))
            export_to_edge(gm, x)
            unguarded(gm, x)
        """
    assert rows(src) == [row_of(src, "unguarded(gm, x)")]


def test_a_local_graph_tested_in_place():
    src = """
        def f(model, q, x):
            gm = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)
            if isinstance(gm, GraphModule):
                move_exported_model_to_eval(gm)
            else:
                gm.eval()
            if not isinstance(gm, torch.nn.Module):
                gm.train()
            if isinstance(gm, torch.fx.GraphModule):
                gm.eval()
        """
    assert rows(src) == [row_of(src, "gm.eval()", nth=1)]


def test_a_local_that_may_be_a_graph_under_an_unknown_class_stays_reported():
    # A test on a class whose verdict for a graph is unknown decides nothing: the graph path
    # may reach the switch.
    src = """
        def f(model, q, x, quantize):
            m = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q) if quantize else model
            if isinstance(m, Wrapper):
                m.eval()
        """
    assert rows(src) == [row_of(src, "m.eval()")]


def test_helper_in_another_module(tmp_path):
    (tmp_path / ".git").mkdir()
    write_package(
        tmp_path,
        "pkg",
        compiler=(
            "import torch\n\n\n"
            "def export_program(model, inputs):\n"
            "    if isinstance(model, torch.fx.GraphModule):\n"
            "        torch.ao.quantization.move_exported_model_to_eval(model)\n"
            "    else:\n"
            "        model.eval()\n"
            "    return torch.export.export(model, inputs)\n\n\n"
            "def export_eager(model, inputs):\n"
            "    model.eval()\n"
            "    return torch.export.export(model, inputs)\n"
        ),
    )
    main = tmp_path / "pkg" / "main.py"
    main.write_text(
        "import torch\n"
        "from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e\n"
        "from pkg.compiler import export_eager, export_program\n\n\n"
        "def f(model, q, x):\n"
        "    gm = convert_pt2e(prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q))\n"
        "    export_program(gm, (x,))\n"
        "    export_eager(gm, (x,))\n"
    )
    assert [d.range.start.row for d in lint(main.read_text(), path=str(main), select=("QL203",))] == [9]

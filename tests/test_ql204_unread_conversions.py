"""QL204 stays quiet on a `convert_pt2e` whose converted model nothing can read: a statement of
a function, of a graph captured and prepared in that function, with no local read after it
(dgcnz/edge's `scripts/mre/vit_vs_dinov2_quantize.py`, a reproduction that only checks that
prepare and convert go through). Everything that may still reach the converted graph keeps
the finding: `prepare_pt2e` and `convert_pt2e` rewrite the graph they are given in place
(measured on torch 2.13 / torchao 0.18: the pre-prepare module's graph holds the quantize
ops after convert), so a name that held the captured module counts as well as the result."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torch._export import capture_pre_autograd_graph
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


"""
ROWS = HEAD.count("\n")


def rows(src: str) -> list[int]:
    return [d.range.start.row - ROWS for d in lint(HEAD + textwrap.dedent(src), select=("QL204",))]


@pytest.mark.parametrize(
    "src",
    [
        # the reproduction's shape: rebinding one name from capture to convert, nothing after
        """
        def export_and_quantize(model, x, quantizer):
            program: torch.export.ExportedProgram = torch.export.export(model, (x,))
            m = program.module()
            m = prepare_pt2e(m, quantizer)
            m = convert_pt2e(m)
        """,
        # a bare statement, then only builtins and constants
        """
        def smoke(model, x, quantizer):
            convert_pt2e(prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer))
            print("SUCCESS")
        """,
        # a GraphModule capture, separate names
        """
        def smoke(model, x, quantizer):
            gm = capture_pre_autograd_graph(model, (x,))
            prepared = prepare_pt2e(gm, quantizer)
            converted = convert_pt2e(prepared)
            print("converted")
        """,
        # a program loaded from a file is as fresh as a captured one
        """
        def smoke(path, quantizer):
            program = torch.export.load(path)
            quantized = convert_pt2e(prepare_pt2e(program.module(), quantizer))
        """,
    ],
)
def test_a_conversion_nothing_reads_is_quiet(src):
    assert rows(src) == []


@pytest.mark.parametrize(
    ("src", "row"),
    [
        # the result is run, returned, exported or printed afterwards
        (
            "def f(model, x, q):\n    m = prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"
            "    m = convert_pt2e(m)\n    m(x)\n",
            3,
        ),
        (
            "def f(model, x, q):\n    m = prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"
            "    m = convert_pt2e(m)\n    return m\n",
            3,
        ),
        (
            "def f(model, x, q):\n    m = prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"
            "    c = convert_pt2e(m)\n    torch.export.export(c, (x,))\n",
            3,
        ),
        # the captured module is the converted graph too: read after the convert
        (
            "def f(model, x, q):\n    gm = torch.export.export(model, (x,)).module()\n"
            "    p = prepare_pt2e(gm, q)\n    convert_pt2e(p)\n    gm(x)\n",
            4,
        ),
        # ... also through an alias made by unpacking
        (
            "def f(model, x, q):\n    gm = torch.export.export(model, (x,)).module()\n    a, b = gm, 1\n"
            "    convert_pt2e(prepare_pt2e(gm, q))\n    a(x)\n",
            4,
        ),
        # the graph came from the caller, who may run it after
        ("def f(gm, q):\n    p = prepare_pt2e(gm, q)\n    convert_pt2e(p)\n", 3),
        # ... or from a call qlint cannot tell makes a new graph
        ("def f(holder, q):\n    gm = holder.graph_module()\n    convert_pt2e(prepare_pt2e(gm, q))\n", 3),
        # a loop: the next pass reads what this one converted
        (
            "def f(model, x, q):\n    m = None\n    for i in range(2):\n        if m is not None:\n"
            "            print(m(x))\n        m = prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"
            "        m = convert_pt2e(m)\n",
            7,
        ),
        # a global, and module level, where other code can read the name
        (
            "m = None\ndef f(model, x, q):\n    global m\n"
            "    m = prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"
            "    m = convert_pt2e(m)\n",
            5,
        ),
        (
            "model = torch.nn.Linear(2, 2).eval()\nq = None\nx = torch.ones(1, 2)\n"
            "m = prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"
            "m = convert_pt2e(m)\n",
            5,
        ),
    ],
)
def test_a_conversion_something_may_read_keeps_the_finding(src, row):
    assert rows(src) == [row]

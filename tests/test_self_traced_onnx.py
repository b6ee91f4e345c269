"""QL102 on a graph the project traces itself and writes to ONNX (`self_traced_graphs`; issue
14, traininglib at bc3595a1): `make_fx` traces a training step, a pass takes the graph module
and hands `gm.graph` (through a local, or as it is) to a helper that inserts `aten.transpose`
and `aten.sum` packets, the step runs, `torch.onnx.export` writes it to a buffer, and the
function returns the bytes. The exporter runs the graph module under `torch.jit.trace` or
re-exports it before translating, so a packet node makes the same ONNX node as its overload,
and no caller can get the graph back. Each loud case below is the quiet one changed in one
place: the graph returned (alone, in a list, in a closure), exported by `torch.export` or by a
bare `export` (which may be `torch.export`'s), or a graph `torch.export` made."""

from __future__ import annotations

import pytest

from tests.conftest import lint, write_package

ONNXLIB = """\
import io
import time

import torch
from torch.fx.experimental.proxy_tensor import make_fx


def export_step(model, x):
    def step(x):
        return model(x).sum()

    start = time.time()
    {origin}
    replace_all_conv_backwards(gm)
    gm(x)
    buf = io.BytesIO()
    {write}
    {ret}


def replace_all_conv_backwards(gm):
    {handed}
    for node in gm.graph.nodes:
        if node.target == torch.ops.aten.convolution_backward.default:
            replace_node({handed_on}, node)
    gm.graph.lint()
    gm.recompile()


def replace_node(graph, node):
    with graph.inserting_before(node):
        grad_t = graph.call_function(torch.ops.aten.transpose, (node.args[0], 0, 1))
        bias_grad = graph.call_function(torch.ops.aten.sum, (grad_t,), kwargs={{"dim": [0, 2]}})
    node.replace_all_uses_with(bias_grad)
    graph.erase_node(node)
"""

QUIET = {
    "origin": "gm = make_fx(step)(x)",
    "write": "torch.onnx.export(gm, (x,), buf, do_constant_folding=False)",
    "ret": "return buf.getvalue()",
    "handed": "graph: torch.fx.Graph = gm.graph",
    "handed_on": "graph",
}


def _rows(tmp_path, **change) -> list[int]:
    parts = {**QUIET, **change}
    pkg = write_package(tmp_path, "pkg", onnxlib=ONNXLIB.format(**parts))
    path = pkg / "onnxlib.py"
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=("QL102",))]


def _insertions(tmp_path) -> list[int]:
    text = (tmp_path / "pkg" / "onnxlib.py").read_text().splitlines()
    return [i for i, line in enumerate(text, 1) if "aten.transpose," in line or "aten.sum," in line]


def test_graph_written_to_onnx_and_bytes_returned_is_quiet(tmp_path):
    assert _rows(tmp_path) == []


@pytest.mark.parametrize(
    "change",
    [
        # The helper handed the graph module's graph as it is, not through a local.
        {"handed": "pass", "handed_on": "gm.graph", "write": "pass", "ret": "pass"},
        # Written to ONNX, nothing returned: the export alone.
        {"ret": "pass"},
        # What it returns names no local the graph reaches (the step's outputs would: taken
        # conservatively as possibly holding it).
        {"write": "pass", "ret": "return time.time() - start"},
    ],
)
def test_each_part_alone_is_quiet(tmp_path, change):
    assert _rows(tmp_path, **change) == []


@pytest.mark.parametrize(
    "change",
    [
        {"ret": "return gm"},
        {"ret": "kept = [gm]\n    return kept"},
        {"ret": "box = []\n    box.append(gm)\n    return box"},
        {"ret": "def run(x):\n        return gm(x)\n\n    return run"},
        {"write": "torch.export.export(gm, (x,))"},
        {"write": "from torch.onnx import export\n\n    export(gm, (x,), buf)"},
        {"origin": "gm = torch.export.export(model, (x,)).module()"},
    ],
)
def test_graph_handed_back_exported_or_not_traced_is_loud(tmp_path, change):
    rows = _rows(tmp_path, **change)
    assert rows == _insertions(tmp_path)

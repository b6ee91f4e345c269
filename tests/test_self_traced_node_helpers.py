"""QL101 on a helper a pass of a `torch.compile` backend hands the nodes of its graph
(`self_traced_graphs.node_helper_callers`, `param_graph_nodes`; issue 14, pytorch-shir's
`isel_utils`): the backend rewrites its graph (inserting `aten.pad` packets), then its
instruction selector walks the graph and hands `n`, `n.args[0]` to a helper of another module
that matches the pad by the packet. The helper sees only nodes of the backend's graph, where
every pad the rewrite put is the packet. Loud again when a caller hands it a node from
elsewhere, when another caller's graph is unknown (a selector no backend runs), or when the
helper is named other than by calls."""

from __future__ import annotations

import pytest

from tests.conftest import lint, package_repository
from tests.test_self_traced_compile_backend import EMIT, REGISTERED
from tests.test_self_traced_compile_backend import RUN as _RUN

REWRITE = """\
import torch


def rewrite_ops(gm):
    for n in list(gm.graph.nodes):
        if n.target == torch.ops.aten.pad.default:
            continue  # a pad the exported model had: left as it is
        if n.op == "call_function" and n.target == torch.ops.aten.max_pool2d.default:
            with gm.graph.inserting_before(n):
                padded = gm.graph.call_function(torch.ops.aten.pad, (n.args[0], [0, 1, 0, 1]))
            n.replace_input_with(n.args[0], padded)
    gm.recompile()
"""

HELPERS = """\
import torch


def padded_input(n):
    if n.op == "call_function" and n.target == torch.ops.aten.pad and n.args[1] == [0, 1, 0, 1]:
        return n.args[0]
    return None
"""

SELECT = """\
import torch

from pkg import rewrites
from pkg.helpers import padded_input


def select(gm):
    graph = gm.graph
    for n in reversed(graph.nodes):
        if n.op == "call_function" and n.target == torch.ops.aten.max_pool2d.default:
            x = padded_input({node})
            if x is not None:
                n.replace_input_with(n.args[0], x)
    {extra}
    gm.recompile()
"""

BACKEND = (
    """\
import torch

from pkg.rewrites import rewrite_ops
from pkg.select import select


"""
    + EMIT
    + """

def compiler(gm, example_inputs):
    rewrite_ops(gm)
    select(gm)
    emit(gm)
    return gm.forward
"""
)

RUN = _RUN.replace("{registration}", REGISTERED)

# A selector nothing imports, as pytorch-shir's LeNet-5 and VGG ones: its graph is unknown.
UNWIRED = """\
from pkg import rewrites
from pkg.helpers import padded_input


def select(gm):
    for n in gm.graph.nodes:
        padded_input(n)
"""


def _repo(tmp_path, node="n.args[0]", extra="pass", **modules):
    select = SELECT.replace("{node}", node).replace("{extra}", extra)
    root = package_repository(tmp_path, rewrites=REWRITE, helpers=HELPERS, select=select, backend=BACKEND, **modules)
    (root / "scripts").mkdir()
    (root / "scripts" / "run.py").write_text(RUN)
    return root


def _rows(root) -> list[int]:
    path = root / "pkg" / "helpers.py"
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=("QL101",))]


@pytest.mark.parametrize("node", ["n.args[0]", "n", "n.args[0].args[0]"])
def test_quiet_on_nodes_of_the_backends_graph(tmp_path, node):
    assert _rows(_repo(tmp_path, node=node)) == []


@pytest.mark.parametrize(
    "variant",
    [
        {"node": "gm.meta['other']"},
        {"node": "m", "extra": "for m in gm.meta['other'].graph.nodes:\n        padded_input(m)"},
        {"extra": "gm = gm.copy()"},
        {"select_unwired": UNWIRED},
        {"extra": "HANDED = [padded_input]"},
    ],
    ids=["another-value", "another-graphs-node", "graph-rebound", "a-selector-no-backend-runs", "named-otherwise"],
)
def test_loud_when_a_node_may_come_from_elsewhere(tmp_path, variant):
    root = _repo(tmp_path, **variant)
    assert _rows(root) == [5]  # the pad matcher


# The rewrite inserts the pad through a tuple's item (`item_targets`), as pytorch-shir's
# rewriter inserts `sra_leaky_relu` through `relu_op[0]`.
ITEM_REWRITE = REWRITE.replace(
    "padded = gm.graph.call_function(torch.ops.aten.pad, (n.args[0], [0, 1, 0, 1]))",
    "pad = (torch.ops.aten.pad, [0, 1, 0, 1])\n{rebind}"
    "                padded = gm.graph.call_function(pad[0], (n.args[0], pad[1]))",
)


@pytest.mark.parametrize(
    ("rebind", "rows"),
    [("", []), ("                pad = (torch.ops.aten.pad.default, [0, 1, 0, 1])\n", [5])],
    ids=["the-item-inserted", "the-tuple-bound-again"],
)
def test_a_pad_inserted_through_a_tuple_item(tmp_path, rebind, rows):
    assert "pad[0]" in ITEM_REWRITE
    root = _repo(tmp_path)
    (root / "pkg" / "rewrites.py").write_text(ITEM_REWRITE.replace("{rebind}", rebind))
    assert _rows(root) == rows

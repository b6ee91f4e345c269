"""QL101 on a matcher that walks from a node of the project's own op to its argument
(`own_op_arguments`; issue 14 item 15, pytorch-shir's `isel_utils`): the project defines a
`requantize` op, its rewrite (run by its own `torch.compile` backend) inserts
`requantize(relu(int_addmm(...)))` with every node a packet, and a helper nothing in the
project calls checks a node to be the `requantize` packet, steps to `n.args[0]` and compares it
with the `aten.relu` packet. Only the project's insertions make `requantize` packet nodes, and
each hands as that argument a node it inserted as a packet: quiet. Loud for the near misses:
no guard, a guard on an op torch defines, the op called eagerly (a symbolic trace records its
packet with any argument) or retargeted onto nodes, an argument some insertion takes from the
graph it was handed or inserts as an overload, a packet never inserted there, the guarded
node rebound first, and a rewrite QL102 reports (its graph is exported next)."""

from __future__ import annotations

import pytest

from tests.conftest import lint, package_repository
from tests.test_self_traced_compile_backend import EMIT, REGISTERED
from tests.test_self_traced_compile_backend import RUN as _RUN

OPS = """\
from torch.library import Library

lib = Library("myops", "DEF")
lib.define("requantize(Tensor self, float s) -> Tensor")
lib.define("int_addmm(Tensor a, Tensor b) -> Tensor")
"""

REWRITES = """\
import torch

aten = torch.ops.aten
myops = torch.ops.myops


def rewrite_ops(gm):
    graph = gm.graph
    for n in list(graph.nodes):
        if n.op != "call_function" or n.target != aten.addmm.default:
            continue
        relu = len(n.users) == 1 and next(iter(n.users)).target == aten.relu.default
        {pick}
        with graph.inserting_before(n):
            m = graph.call_function(myops.int_addmm, (n.args[1], n.args[2]))
            if relu:
                m = graph.call_function({relu}, (m,))
            r = graph.call_function(myops.requantize, ({handed}, 0.5))
        n.replace_all_uses_with(r)
        graph.erase_node(n)
    {extra}
    gm.recompile()
"""

# The helper, as pytorch-shir's `extract_qaddmm_relu`: nothing in the project calls it.
HELPERS = """\
import torch


def extract_qaddmm_relu(n):
    relu = None
    if n.op != "call_function" or n.target != {guard} or len(n.args[0].users) != 1:
        return None
    {step}
    if n.op == "call_function" and n.target == {compared}:
        relu, n = n, n.args[0]
    if n.op != "call_function" or n.target != torch.ops.myops.int_addmm:
        return None
    return requant, relu, n
"""

BACKEND = (
    """\
import torch

from pkg import ops
from pkg.rewrites import rewrite_ops


"""
    + EMIT
    + """

def compiler(gm, example_inputs):
    rewrite_ops(gm)
    emit(gm)
    {after}
    return gm.forward
"""
)

RUN = _RUN.replace("{registration}", REGISTERED)


def _reported(
    tmp_path,
    guard="torch.ops.myops.requantize",
    step="requant, n = n, n.args[0]",
    compared="torch.ops.aten.relu",
    relu="aten.relu",
    handed="m",
    extra="pass",
    after="pass",
    pick="pass",
    **modules,
) -> list[str]:
    """The helper's lines QL101 reports."""
    helpers = HELPERS.replace("{guard}", guard).replace("{step}", step).replace("{compared}", compared)
    rewrites = (
        REWRITES.replace("{relu}", relu).replace("{handed}", handed).replace("{extra}", extra).replace("{pick}", pick)
    )
    modules = {"ops": OPS, "rewrites": rewrites, "helpers": helpers, **modules}
    root = package_repository(tmp_path, backend=BACKEND.replace("{after}", after), **modules)
    (root / "scripts").mkdir()
    (root / "scripts" / "run.py").write_text(RUN)
    path = root / "pkg" / "helpers.py"
    lines = path.read_text().splitlines()
    return [lines[d.range.start.row - 1].strip() for d in lint(path.read_text(), path=str(path), select=("QL101",))]


RELU = 'if n.op == "call_function" and n.target == torch.ops.aten.relu:'


@pytest.mark.parametrize(
    "step",
    ["requant, n = n, n.args[0]", "requant = n\n    n = n.args[0]", "requant = n\n    n = requant.args[0]"],
    ids=["tuple-rebinding", "plain-rebinding", "another-name"],
)
def test_quiet_on_the_argument_the_project_inserted(tmp_path, step):
    assert _reported(tmp_path, step=step) == []


def test_quiet_when_the_argument_is_read_in_place(tmp_path):
    helpers = """\
import torch


def relu_before_requantize(n):
    if n.op != "call_function" or n.target != torch.ops.myops.requantize:
        return False
    return n.args[0].op == "call_function" and n.args[0].target == torch.ops.aten.relu
"""
    assert _reported(tmp_path, helpers=helpers) == []


@pytest.mark.parametrize(
    ("pick", "rows"),
    [("act = (aten.relu, ())", []), ("act = (aten.relu.default, ())", [RELU])],
    ids=["packet-item", "overload-item"],
)
def test_the_relu_inserted_through_a_tuple_item(tmp_path, pick, rows):
    # pytorch-shir picks the activation as `relu_op = (aten.relu, (), {})`, inserting `relu_op[0]`.
    assert _reported(tmp_path, relu="act[0]", pick=pick) == rows


@pytest.mark.parametrize(
    "variant",
    [
        {"step": "requant = n"},  # no step: the guarded node itself, compared with the relu
        {"step": "requant, n = n, n.args[1]"},  # the scale: no node the rewrite inserted
        {"guard": "torch.ops.aten.addmm"},  # an op torch defines: anyone's graph holds it
        {"guard": "torch.ops.myops.requantize.default"},  # an overload: no packet guard
        {"compared": "torch.ops.aten.sigmoid"},  # a packet the rewrite never puts there
        {"handed": "n.args[0]"},  # the argument is a node of the graph the rewrite was handed
        {"relu": "aten.relu.default"},  # the relu inserted as its overload
        {"step": "requant, n = n, n.args[0]\n    n = requant.args[0].args[0]"},  # rebound after
        {"after": "torch.export.export(gm, tuple(example_inputs))"},  # QL102 reports the rewrite
        {"extra": "gm.graph.call_function(myops.requantize, (gm.graph.find_nodes(op='placeholder')[0], 1.0))"},
        {"extra": "next(iter(graph.nodes)).target = myops.requantize"},  # retargeted onto a node
        # Lowering keyed on the overload: some graphs are re-traced, and the guard's own packet
        # is reported (nothing links the helper to the rewrite), so the relu's stays reported.
        {"lowering": "import torch\n\nLOWERINGS = {torch.ops.myops.requantize.default: None}\n"},
    ],
    ids=[
        "no-step",
        "another-argument",
        "torch-op-guard",
        "overload-guard",
        "packet-never-inserted-there",
        "argument-from-the-handed-graph",
        "relu-inserted-as-overload",
        "rebound-before-the-comparison",
        "rewrite-reported-by-ql102",
        "another-insertion-of-a-graph-node",
        "retargeted",
        "guard-reported-beside-a-re-traced-lowering",
    ],
)
def test_loud_on_the_near_misses(tmp_path, variant):
    compared = variant.get("compared", "torch.ops.aten.relu")
    assert [line for line in _reported(tmp_path, **variant) if compared in line] == [
        RELU.replace("torch.ops.aten.relu", compared)
    ]


MODEL = "import torch\n\n\ndef forward(x):\n    return torch.ops.myops.requantize(x, 0.5)\n"


@pytest.mark.parametrize(("model", "reported"), [({}, []), ({"model": MODEL}, [RELU])], ids=["not-called", "called"])
def test_loud_when_the_project_calls_the_op(tmp_path, model, reported):
    # The helper imports the rewrite, so the guard's packet is accepted as that pass's consumer
    # (`consumes_linked_insertion`) even with a call of the op in the project; a symbolic trace
    # of that call records the packet with any argument.
    helpers = (
        HELPERS.replace("import torch\n", "import torch\n\nfrom pkg import rewrites\n", 1)
        .replace("{guard}", "torch.ops.myops.requantize")
        .replace("{step}", "requant, n = n, n.args[0]")
        .replace("{compared}", "torch.ops.aten.relu")
    )
    assert _reported(tmp_path, helpers=helpers, **model) == reported

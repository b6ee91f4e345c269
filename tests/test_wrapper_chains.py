"""QL101/QL102 through the project's own insertion wrappers reached along longer chains (issue
14.15): chains through several modules that insert nothing (c -> b -> mid -> graph_utils),
classes as links (`GraphBuilder(graph).insert(op)`, `self.builder.insert(op)` where the
class's method calls `graph.call_function(op, ...)`), and methods mid-chain (a method of a
module that inserts nothing, handing its parameter to another module's wrapper). Each case
is checked alone (the exact search) and in a run over the package (QL102's import trigger
answered from the wrapper-name index)."""

from __future__ import annotations

import pytest

from tests.conftest import old_file
from tests.test_wrapper_module_calls import _alone, _both, _package

RELU = "torch.ops.aten.relu"

# -- chains through several modules that insert nothing ----------------------------------

# b -> mid -> graph_utils.insert_op, each link by name or as a function of the module.
B = "from pkg import mid\n\n\ndef add_op(graph, op):\n    return mid.put(graph, op)\n"
MID = "from pkg.graph_utils import insert_op\n\n\ndef put(graph, op):\n    return insert_op(graph, op, ())\n"
MID_TO_MID2 = "from pkg.mid2 import put2\n\n\ndef put(graph, target):\n    return put2(graph, target)\n"
MID2 = "import pkg.graph_utils as gu\n\n\ndef put2(g, o):\n    return gu.insert_op(g, o)\n"


@pytest.mark.parametrize(
    "modules",
    [
        {"b": B, "mid": MID},  # two modules that insert nothing
        {"b": B, "mid": MID_TO_MID2, "mid2": MID2},  # three
    ],
    ids=["two-deep", "three-deep"],
)
@pytest.mark.parametrize("imports, call", [("from pkg.b import add_op", "add_op"), ("from pkg import b", "b.add_op")])
def test_packet_passed_along_a_deep_chain_is_reported(tmp_path, modules, imports, call):
    found = _both(tmp_path, imports, f"{call}(gm.graph, {RELU})", **modules)
    assert [(c, row) for c, row, _ in found] == [("QL102", 8)]
    assert _both(tmp_path, imports, f"{call}(gm.graph, {RELU}.default)", **modules) == []


DEEP_QUIET = {
    # The last link hands the op to the look-alike that prints it.
    "look-alike-end": {
        "b": B,
        "mid": "from pkg import log_utils\n\n\ndef put(graph, op):\n    log_utils.insert_op(graph, op)\n",
    },
    # A link in the middle rebinds the parameter (normalises it to an overload) first.
    "rebound-mid": {
        "b": B,
        "mid": (
            "from pkg.graph_utils import insert_op\n\n\n"
            "def put(graph, op):\n    op = getattr(op, 'default', op)\n    return insert_op(graph, op, ())\n"
        ),
    },
    # A link passes a fixed overload, not its parameter.
    "fixed-mid": {
        "b": B,
        "mid": (
            "import torch\nfrom pkg.graph_utils import insert_op\n\n\n"
            "def put(graph, op):\n    return insert_op(graph, torch.ops.aten.relu.default, (op,))\n"
        ),
    },
    # A cycle of modules that never reaches an insertion.
    "cycle": {"b": B, "mid": "from pkg import b\n\n\ndef put(graph, op):\n    return b.add_op(graph, op)\n"},
}


@pytest.mark.parametrize("modules", DEEP_QUIET.values(), ids=DEEP_QUIET.keys())
def test_deep_chains_that_insert_no_parameter_stay_quiet(tmp_path, modules):
    assert _both(tmp_path, "from pkg import b", f"b.add_op(gm.graph, {RELU})", **modules) == []


def test_a_cycle_with_an_exit_reaches_the_insertion(tmp_path):
    # b -> mid -> b is a cycle, but mid also hands the op on to the wrapper.
    mid = (
        "from pkg import b\nfrom pkg.graph_utils import insert_op\n\n\n"
        "def put(graph, op, again=False):\n    if again:\n        return b.add_op(graph, op)\n"
        "    return insert_op(graph, op, ())\n"
    )
    found = _both(tmp_path, "from pkg import b", f"b.add_op(gm.graph, {RELU})", b=B, mid=mid)
    assert [(c, row) for c, row, _ in found] == [("QL102", 8)]


def test_deep_chain_edited_to_stop_forwarding_is_followed(tmp_path):
    pkg = _package(tmp_path, "from pkg import b", f"b.add_op(gm.graph, {RELU})", b=B, mid=MID_TO_MID2, mid2=MID2)
    assert [row for _, row, _ in _alone(pkg)] == [8]
    old_file(pkg / "mid2.py", MID2.replace("gu.insert_op(g, o)", "gu.insert_op(g, print)"))
    assert _alone(pkg) == []

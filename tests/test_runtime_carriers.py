"""QL101's runtime check of packets of ops no probe flow meets, on the real torch.

FlatFlow's serializer (9rum/flatflow at 3d716be, `flatflow/ops/ops.py`) keys 13 packets
whose ops neither the aten zoo nor the op table's call forms call; their verdicts were
"skipped". `qlint.runtime.call_forms.CARRIERS` calls each in the pattern that puts it in a
real graph, and each flow carries only some of them (torch 2.13): `_unsafe_view` only the
ATen IR of `run_decompositions({})` (FlatFlow's own flow), `alias` and `mm` only core ATen
(`detach`, `matmul` before it), `t`/`tril`/`triu` every flow but core ATen.
"""

from __future__ import annotations

import re

import pytest

from qlint.diagnostic import Applicability
from qlint.runtime.call_forms import CARRIERS, carried_ops, covered_ops
from tests.conftest import lint
from tests.runtime_support import finding, shared_checker

pytest.importorskip("torchao")

SKIPPED_AT_STOP_63 = (
    "_unsafe_view",
    "alias",
    "bitwise_not",
    "copy",
    "cos",
    "cumsum",
    "mm",
    "scalar_tensor",
    "sin",
    "slice_scatter",
    "t",
    "tril",
    "triu",
)

FLATFLOW = (
    """
import torch

aten = torch._ops.ops.aten

_OPS_TABLE = {
"""
    + "".join(f"    aten.{op}: {i},\n" for i, op in enumerate(SKIPPED_AT_STOP_63))
    + """}


def serialize(graph):
    for node in graph.nodes:
        if node.target not in _OPS_TABLE:
            continue
        yield _OPS_TABLE[node.target]
"""
)


@pytest.fixture(scope="module")
def checker():
    return shared_checker()


@pytest.fixture(scope="module")
def flatflow(checker):
    """op -> (finding, verdict with the fix verified), each packet checked once."""
    found = {}
    for diag in lint(FLATFLOW, select=("QL101",)):
        op = diag.evidence["ops"][0]["op"]
        found[op] = (diag, checker.verdict(diag, verify_fix=True))
    return found


def test_every_packet_flatflow_keys_is_confirmed_on_graphs_that_carry_it(flatflow):
    assert sorted(flatflow) == sorted(SKIPPED_AT_STOP_63)
    for op, (diag, v) in flatflow.items():
        assert v.verdict == "confirmed", (op, v.evidence)
        m = re.search(rf"matches 0 of (\d+) `{op}` nodes", v.evidence)
        assert m and int(m[1]) > 0, v.evidence
        if diag.fix.applicability is Applicability.DISPLAY_ONLY:  # mm: `.default` or `.dtype`
            assert op == "mm" and v.fix_verified is None, v.evidence
        else:
            assert v.evidence.endswith(f"With the fix (`.default`): {m[1]} of {m[1]}"), v.evidence
            assert v.fix_verified is True


def test_each_op_is_carried_by_the_flows_that_keep_it(flatflow):
    def evidence(op):
        return flatflow[op][1].evidence

    assert "in 1 reference graph: _unsafe_view carrier forms ATen IR 0/1 (`.default`)" in evidence("_unsafe_view")
    assert "in 1 reference graph: alias carrier forms core ATen 0/1 (`.default`)" in evidence("alias")
    assert "in 1 reference graph: mm carrier forms core ATen 0/1 (`.default`)" in evidence("mm")
    # `.dtype` has no CPU kernel: the graphs show `.default` alone, the fix stays display-only.
    assert "`.dtype`" not in evidence("mm")
    for op in ("t", "tril", "triu"):
        assert f"in 4 reference graphs: {op} carrier forms export (eval) 0/1" in evidence(op)
        assert "core ATen" not in evidence(op)
    assert "copy carrier forms core ATen 0/2" in evidence("copy")  # `copy_` and slice assignment
    assert "slice_scatter carrier forms ATen IR 0/1" in evidence("slice_scatter")
    assert "cos carrier forms export (dynamic size) 0/1" in evidence("cos")
    # `where(x > 0, x, 0.0)`, one of the probe's own forms, is where core ATen makes one.
    assert "in 1 reference graph: scalar_tensor call forms core ATen 0/1" in evidence("scalar_tensor")


def test_an_overload_of_a_carried_op_is_refuted(checker):
    """The look-alike that is right: `aten.t.default` matches every `t` node."""
    v = checker.verdict(finding("aten", "t", overload="default"), verify_fix=False)
    assert v.verdict == "refuted", v.evidence
    assert "is an OpOverload, not a packet; it matches 4 of 4 `t` nodes" in v.evidence


def test_edge_ops_see_the_carriers_through_to_edge(checker):
    pytest.importorskip("executorch")
    v = checker.verdict(finding("aten", "cumsum", dialect="edge", fix=".default"), verify_fix=True)
    assert v.verdict == "confirmed", v.evidence
    assert "cumsum carrier forms to_edge 0/1 (`.default`)" in v.evidence
    assert v.fix_verified is True


def test_carriers_are_the_ops_the_probe_forms_leave_out():
    """Each op is in one list: a carrier the probe also called would change the op table's
    evidence for it, which `scripts/generate_op_table.py --check` guards."""
    assert not carried_ops() & covered_ops()
    assert carried_ops() == {op for forms in CARRIERS.values() for form in forms for op in form.ops}


def test_an_edge_op_to_edge_decomposes_is_skipped_with_the_reason(checker):
    """`x.t()` is `t` before core ATen only: the edge graph has `permute_copy` in its place."""
    pytest.importorskip("executorch")
    v = checker.verdict(finding("aten", "t", dialect="edge", fix=".default"), verify_fix=True)
    assert v.verdict == "skipped" and v.fix_verified is None, v.evidence
    assert v.evidence.startswith("no reference graph carries `exir_ops.edge.aten.t` (checked: aten zoo to_edge, ")
    assert "t carrier forms to_edge)" in v.evidence
    assert v.evidence.endswith(
        ": to_edge decomposes `aten.t.default` (ExecuTorch's default decomposition table), so an edge graph "
        "carries it only where a partitioner keeps it from decomposition (`to_edge_transform_and_lower`)"
    )
    # An op to_edge keeps is skipped for want of a graph, without that reason.
    kept = checker.verdict(finding("aten", "bitwise_and", dialect="edge"), verify_fix=False)
    assert kept.verdict == "skipped" and "decomposes" not in kept.evidence, kept.evidence

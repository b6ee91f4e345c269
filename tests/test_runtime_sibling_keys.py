"""QL101's runtime check of a packet keyed beside overloads of its own op, on the real torch.

The findings come from the rule itself (FlatFlow's serializer table at 3d716be, the
`aten.sum` table of the rule's tests) or, where the rule is rightly quiet, are built the way
the rule builds them. The graphs are the op table's call forms of the op
(`qlint.runtime.call_forms`) exported in eval and train mode, as core ATen and with a
dynamic size: `arange(n)` gives `.default`, `arange(a, b)` `.start`, `arange(a, b, s)`
`.start_step`, and core ATen has only `.start_step` (3 nodes in each of 4 graphs).
"""

from __future__ import annotations

import re

import pytest

from qlint.diagnostic import Applicability, Fix
from qlint.value_classes import replace
from tests.conftest import lint
from tests.runtime_support import finding, shared_checker

pytest.importorskip("torchao")

FLATFLOW = """
import torch

aten = torch._ops.ops.aten

OPS = {
    aten._to_copy.default: 1,
    aten.arange: 2,
    aten.arange.start: 3,
    aten.add.Tensor: 4,
}


def serialize(graph):
    return [OPS[n.target] for n in graph.nodes if n.target in OPS]
"""

SUM = """
import torch

aten = torch.ops.aten

REDUCTIONS = {aten.sum: "sum", aten.sum.dim_IntList: "sum_dim"}


def code(node):
    return REDUCTIONS.get(node.target)
"""


@pytest.fixture(scope="module")
def checker():
    return shared_checker()


def ql101(source: str):
    (diag,) = lint(source, select=("QL101",))
    return diag


def beside(op: str, siblings: tuple[str, ...], missed: tuple[str, ...], fix: str | None = None):
    """A finding as the rule builds one for a table key (`kind` comparison) beside `siblings`."""
    diag = finding("aten", op, fix=fix, spelled=f"aten.{op}")
    return replace(diag, evidence={**diag.evidence, "siblings": list(siblings), "missed": list(missed)})


def test_flatflow_arange_is_confirmed_and_its_display_only_fix_checked(checker):
    diag = ql101(FLATFLOW)
    assert diag.fix.applicability is Applicability.DISPLAY_ONLY
    v = checker.verdict(diag, verify_fix=True)
    assert v.verdict == "confirmed", v.evidence
    assert v.evidence.startswith("`torch.ops.aten.arange` (packet) keyed beside `.start`: 4 reference graphs carry")
    assert "arange call forms export (eval) `.default` x1, `.start` x1, `.start_step` x1" in v.evidence
    assert "arange call forms core ATen `.start_step`;" in v.evidence
    assert "the keys match 3 of 12 `arange` nodes" in v.evidence
    assert "the 9 nodes of `.default`, `.start_step` are the ones the packet's entry stands for" in v.evidence
    # The fix as its message says: `.default` and `.start_step` to ARANGE, `.start` kept.
    assert "With the fix (keys `.default`, `.start_step` to the packet's value, `.start` to its own): 12 of 12" in (
        v.evidence
    )
    assert v.evidence.endswith(
        ": 12 of 12. The fix is display-only: an entry per overload it names, which `qlint fix` does not write"
    )
    assert v.fix_verified is True
    # Without verifying fixes, the fix is not judged.
    plain = checker.verdict(diag, verify_fix=False)
    assert plain.verdict == "confirmed" and plain.fix_verified is None and "With the fix" not in plain.evidence


def test_an_appended_overload_is_verified_beside_the_key_it_keeps(checker):
    """Judged alone, `.default` misses the `.dim_IntList` nodes the other key handles: the
    packet-only check called this fix not verified."""
    diag = ql101(SUM)
    assert diag.fix.applicability is Applicability.UNSAFE and diag.evidence["missed"] == ["default"]
    v = checker.verdict(diag, verify_fix=True)
    assert v.verdict == "confirmed", v.evidence
    m = re.search(r"the keys match (\d+) of (\d+) `sum` nodes; the (\d+) nodes of `\.default`", v.evidence)
    assert m and int(m[1]) + int(m[3]) == int(m[2]), v.evidence
    assert v.evidence.endswith(f"`.dim_IntList` to its own): {m[2]} of {m[2]}")
    assert "display-only" not in v.evidence
    assert v.fix_verified is True


def test_a_fix_leaving_an_overload_graphs_carry_is_not_verified(checker):
    """An op table that knew of `.default` alone: the fix would leave `.start_step`."""
    v = checker.verdict(beside("arange", ("start",), ("default",), fix=".default"), verify_fix=True)
    assert v.verdict == "confirmed"
    assert "12 of 12" not in v.evidence and "missing the 6 nodes of `.start_step`" in v.evidence
    assert v.fix_verified is False


def test_a_fix_keying_a_sibling_again_is_not_verified(checker):
    diag = replace(beside("arange", ("start",), ("default", "start_step")), fix=Fix(Applicability.DISPLAY_ONLY, "x"))
    wrong = replace(diag, evidence={**diag.evidence, "missed": ["default", "start", "start_step"]})
    v = checker.verdict(wrong, verify_fix=True)
    assert "it keys `.start` again, which the table maps to another value" in v.evidence
    assert v.fix_verified is False


def test_siblings_that_already_match_every_carried_overload_are_refuted(checker):
    """`.dim_DimnameList` is a real overload no graph carries: a table keying the two that
    graphs do carry leaves the packet's entry nothing to stand for."""
    v = checker.verdict(beside("sum", ("default", "dim_IntList"), ("dim_DimnameList",)), verify_fix=True)
    assert v.verdict == "refuted", v.evidence
    assert "already match every node graphs carry, the packet's entry stands for none" in v.evidence


def test_skipped_with_the_graphs_looked_at_or_the_unknown_op(checker):
    # No call form and no zoo graph calls bitwise_and.
    v = checker.verdict(beside("bitwise_and", ("Tensor",), ("Scalar",)), verify_fix=True)
    assert v.verdict == "skipped" and v.fix_verified is None
    assert v.evidence.startswith("no reference graph carries `torch.ops.aten.bitwise_and` (checked: aten zoo export")
    unknown = checker.verdict(beside("arangee", ("start",), ("default",)), verify_fix=True)
    assert unknown.verdict == "skipped" and unknown.evidence.startswith("op unknown to the installed registry")


def test_edge_ops_see_the_call_forms_through_to_edge(checker):
    """`to_edge` makes core ATen: `sum()` becomes `.dim_IntList` there, as the zoo's sums."""
    pytest.importorskip("executorch")
    diag = finding("aten", "sum", dialect="edge", fix=".dim_IntList")
    v = checker.verdict(diag, verify_fix=True)
    assert v.verdict == "confirmed", v.evidence
    assert "sum call forms to_edge 0/3 (`.dim_IntList`)" in v.evidence
    assert v.fix_verified is True

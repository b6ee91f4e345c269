"""QL102 and insertions behind a node match that never holds on the graph the pass sees
(`target_guards`, `guarded_insertions`): torchao's `_duplicate_dequantize_node` and
`_remove_extra_dequantize` key on the `dequantize_per_tensor` packet (QL101 reports the match)
and insert it only inside; ExecuTorch's LoRA export rewrites `empty_permuted.out`, an out variant
the exported joint graph never carries. The guard's QL101 finding stays; the insertion goes
quiet. Loud look-alikes: a guard that matches, an `or` with a test that may hold, an insertion
after the `if` or in its `else:`, an insertion of another op than the guard's (a rewrite needs
both edits: both reports stay), an out variant in a graph nothing exports, an in-place
overload (exported graphs keep those)."""

from __future__ import annotations

from tests.conftest import lint

DQ = "torch.ops.quantized_decomposed.dequantize_per_tensor"


def _found(src: str) -> list[tuple[int, str]]:
    return sorted((d.range.start.row, d.code) for d in lint(src, select=("QL101", "QL102")))


def _pass(guard: str) -> str:
    """A public pass: `guard` heads the loop body, the insertion sits two rows below its last row."""
    return (
        "import torch\n\n\n"
        "def rewrite(gm):\n"
        f"    dq = {DQ}\n"
        "    for n in gm.graph.nodes:\n"
        f"        {guard}\n"
        "            with gm.graph.inserting_before(n):\n"
        '                new = gm.graph.create_node("call_function", dq, n.args, n.kwargs)\n'
    )


# -- quiet: the branch holding the insertion never runs ------------------------------------------


def test_insertion_inside_packet_equality_guard_is_quiet():
    assert _found(_pass("if n.target == dq:")) == [(7, "QL101")]


def test_insertion_inside_packet_membership_guard_is_quiet():
    assert _found(_pass("if n.op == 'call_function' and n.target in (dq,):")) == [(7, "QL101")]


def test_insertion_after_continue_guard_is_quiet():
    guard = "if n.op != 'call_function' or n.target != dq or len(n.users) == 1:"
    src = _pass(f"{guard}\n            continue\n        if n.users:")
    assert _found(src) == [(7, "QL101")]


def test_insertion_after_negated_continue_guard_is_quiet():
    src = _pass("if not n.target == dq:\n            continue\n        if n.users:")
    assert _found(src) == [(7, "QL101")]


def test_insertion_when_a_list_filtered_on_the_packet_is_not_empty_is_quiet():
    src = _pass(
        "users = [u for u in n.users if u.op == 'call_function' and u.target == dq]\n        if len(users) > 1:"
    )
    assert _found(src) == [(7, "QL101")]


EXPORTED = """\
import torch


def export_lora(model, args):
    ep = torch.export.export(model, args)
    for node in ep.graph.nodes:
        if node.op == "call_function" and node.target == torch.ops.aten.empty_permuted.{overload}:
            with ep.graph.inserting_before(node):
                permute = ep.graph.create_node("call_function", torch.ops.aten.permute, (node.args[0],))
    return ep
"""


def test_insertion_behind_out_variant_on_exported_graph_is_quiet():
    assert _found(EXPORTED.format(overload="out")) == []


# -- loud: the branch can run --------------------------------------------------------------------


def test_insertion_behind_matching_overload_guard_is_reported():
    assert _found(_pass("if n.target == dq.default:")) == [(9, "QL102")]


def test_insertion_behind_packet_guard_qlint_takes_as_matching_is_reported():
    # torchao inserts its affine ops as packets: QL101 takes a fresh graph, where the match holds.
    src = (
        "import torch\n\n\n"
        "def rewrite(gm):\n"
        "    for n in gm.graph.nodes:\n"
        "        if n.target == torch.ops.torchao.quantize_affine:\n"
        "            gm.graph.call_function(torch.ops.torchao.dequantize_affine, (n,))\n"
    )
    assert _found(src) == [(7, "QL102")]


def test_insertion_of_another_op_behind_a_never_holding_guard_is_reported():
    # A rewrite of one op into another: fixing the guard leaves the inserted packet to fix.
    src = _pass("if n.target == torch.ops.prims.div:").replace(", dq, n.args", ", torch.ops.aten.div, n.args")
    assert _found(src) == [(7, "QL101"), (9, "QL102")]


def test_insertion_behind_or_with_a_matching_test_is_reported():
    assert _found(_pass("if n.target == dq or n.target == dq.default:")) == [(9, "QL102")]


def test_insertion_behind_or_with_a_test_of_something_else_is_reported():
    assert _found(_pass("if n.target == dq or n.name == 'dq':")) == [(7, "QL101"), (9, "QL102")]


def test_insertion_after_the_guarded_if_is_reported():
    src = _pass("if n.target == dq:\n            pass\n        if n.users:")
    assert _found(src) == [(7, "QL101"), (11, "QL102")]


def test_insertion_in_the_else_branch_is_reported():
    src = _pass("if n.target == dq:\n            pass\n        else:")
    assert _found(src) == [(7, "QL101"), (11, "QL102")]


def test_continue_guard_that_needs_another_test_too_is_reported():
    src = _pass("if n.users and n.target != dq:\n            continue\n        if n.users:")
    assert _found(src) == [(7, "QL101"), (11, "QL102")]


def test_list_rebound_before_the_test_is_reported():
    src = _pass(
        "users = [u for u in n.users if u.target == dq]\n        users = users or list(n.users)\n        if users:"
    )
    assert _found(src) == [(7, "QL101"), (11, "QL102")]


def test_insertion_behind_out_variant_in_a_pass_nothing_exports_is_reported():
    src = EXPORTED.format(overload="out").replace("ep = torch.export.export(model, args)", "ep = model")
    assert _found(src) == [(9, "QL102")]


def test_insertion_behind_inplace_overload_on_exported_graph_is_reported():
    # torch.export keeps in-place overloads (`aten.mul_.Tensor`): such a guard may hold.
    src = EXPORTED.replace("empty_permuted.{overload}", "relu_.default")
    assert _found(src) == [(9, "QL102")]


# -- QL102 reads QL101's verdict from the run's own QL101 check --------------------------------


def _counted_matcher_checks(monkeypatch) -> list[int]:
    from qlint.rules.ql101_packet_matcher import PacketMatcher

    runs = [0]
    check = PacketMatcher.check

    def counted(self, ctx):
        runs[0] += 1
        return check(self, ctx)

    monkeypatch.setattr(PacketMatcher, "check", counted)
    return runs


def test_guard_verdict_reuses_the_run_s_packet_matcher_check(monkeypatch):
    runs = _counted_matcher_checks(monkeypatch)
    assert _found(_pass("if n.target == dq:")) == [(7, "QL101")]
    assert runs[0] == 1  # the engine's QL101 check, not a second one for QL102's guard


def test_guard_verdict_without_qlint_s_packet_matcher_in_the_run(monkeypatch):
    runs = _counted_matcher_checks(monkeypatch)
    found = [(d.range.start.row, d.code) for d in lint(_pass("if n.target == dq:"), select=("QL102",))]
    assert found == [] and runs[0] == 1  # QL102's own run of QL101's check, with its defaults


def test_guard_verdict_when_the_run_s_packet_matcher_has_other_options(monkeypatch):
    runs = _counted_matcher_checks(monkeypatch)
    src = _pass("if n.target == dq:")
    diagnostics = lint(src, select=("QL101", "QL102"), QL101={"fix-style": "both"})
    found = sorted((d.range.start.row, d.code) for d in diagnostics)
    assert found == [(7, "QL101")] and runs[0] == 2  # the defaults' verdict is QL102's, run apart

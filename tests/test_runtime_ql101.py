"""QL101/QL102 runtime checks on the real torch, torchao and executorch (CPU, no network).

Every test goes through the session's one worker process, so the reference graphs are
built once. The numbers asserted come from real graphs: the XNNPACK static family has 4
`dequantize_per_tensor.default` nodes per form, the dynamic one `.tensor` nodes, torchao
0.18's convert_pt2e carries `*_affine` packets that a re-export turns into `.default`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qlint.config import load_settings
from qlint.runner import run_check
from tests.runtime_support import finding, shared_checker

pytest.importorskip("torchao")


@pytest.fixture(scope="module")
def checker():
    return shared_checker()


def counts(evidence: str) -> tuple[int, int]:
    m = re.search(r"matches (\d+) of (\d+)", evidence)
    assert m, evidence
    return int(m[1]), int(m[2])


def fixed_counts(evidence: str) -> tuple[int, int]:
    m = re.search(r"With the fix \([^)]*\): (\d+) of (\d+)", evidence)
    assert m, evidence
    return int(m[1]), int(m[2])


def test_quantized_decomposed_packet_is_confirmed_and_the_overload_list_verified(checker):
    diag = finding(
        "quantized_decomposed",
        "dequantize_per_tensor",
        kind="collection",
        spelled="qd.dequantize_per_tensor",
        fix="qd.dequantize_per_tensor.default, qd.dequantize_per_tensor.tensor",
    )
    v = checker.verdict(diag, verify_fix=True)
    assert v.verdict == "confirmed", v.evidence
    matched, total = counts(v.evidence)
    assert matched == 0 and total >= 8
    assert fixed_counts(v.evidence) == (total, total)
    assert v.fix_verified is True
    # Both quantizer flavours and both histories of the graph were looked at.
    for label in ("XNNPACK static convert_pt2e", "XNNPACK static re-exported", "XNNPACK dynamic convert_pt2e"):
        assert label in v.evidence
    assert "(`.tensor`)" in v.evidence and "(`.default`)" in v.evidence


def test_a_fix_naming_one_overload_misses_the_other_graphs(checker):
    diag = finding("quantized_decomposed", "dequantize_per_tensor", fix=".default")
    v = checker.verdict(diag, verify_fix=True)
    assert v.verdict == "confirmed"
    assert v.fix_verified is False
    fixed, total = fixed_counts(v.evidence)
    assert 0 < fixed < total
    assert "missing XNNPACK dynamic convert_pt2e 0/" in v.evidence


def test_an_overload_is_refuted(checker):
    """A fine construct fed to the checker: it is not a packet, so QL101's claim is wrong."""
    v = checker.verdict(finding("aten", "relu", overload="default"), verify_fix=True)
    assert v.verdict == "refuted", v.evidence
    assert "is an OpOverload, not a packet" in v.evidence
    matched, total = counts(v.evidence)
    assert matched == total > 0


def test_torchao_packets_match_convert_output_but_not_its_re_export(checker):
    v = checker.verdict(finding("torchao", "dequantize_affine", kind="collection", fix=".default"), verify_fix=True)
    assert v.verdict == "confirmed"
    assert re.search(r"torchao affine static convert_pt2e (\d+)/\1 \(packets\)", v.evidence), v.evidence
    assert re.search(r"torchao affine static re-exported 0/\d+ \(`\.default`\)", v.evidence), v.evidence
    # `.default` alone misses what the installed torchao's convert_pt2e emits.
    assert v.fix_verified is False
    assert 'fix-style "both"' in v.evidence


def test_fix_style_both_matches_both_forms(checker):
    both = "torch.ops.torchao.dequantize_affine, torch.ops.torchao.dequantize_affine.default"
    v = checker.verdict(finding("torchao", "dequantize_affine", kind="collection", fix=both), verify_fix=True)
    assert v.verdict == "confirmed"
    assert "the packet and `.default`" in v.evidence
    _, total = counts(v.evidence)
    assert fixed_counts(v.evidence) == (total, total)
    assert v.fix_verified is True


def test_without_verify_the_fix_is_not_judged(checker):
    v = checker.verdict(finding("aten", "relu", fix=".default"), verify_fix=False)
    assert v.verdict == "confirmed"
    assert v.fix_verified is None
    assert "With the fix" not in v.evidence
    assert "aten zoo export (eval) 0/1 (`.default`)" in v.evidence


def test_aten_op_whose_graphs_carry_a_named_overload(checker):
    v = checker.verdict(finding("aten", "add", kind="collection", fix=".Tensor"), verify_fix=True)
    assert v.verdict == "confirmed" and v.fix_verified is True
    assert "(`.Tensor`)" in v.evidence
    # `.default` is aten.add's Scalar+Scalar overload: no exported graph carries it.
    wrong = checker.verdict(finding("aten", "add", kind="collection", fix=".default"), verify_fix=True)
    assert wrong.fix_verified is False
    assert fixed_counts(wrong.evidence)[0] == 0


def test_sym_size_needs_a_graph_with_symbolic_shapes(checker):
    v = checker.verdict(finding("aten", "sym_size", fix=".int"), verify_fix=True)
    assert v.verdict == "confirmed" and v.fix_verified is True
    assert "dynamic batch" in v.evidence


def test_insertion_of_a_torchao_packet(checker):
    v = checker.verdict(
        finding("torchao", "quantize_affine", kind="insertion", fix=".default", code="QL102"), verify_fix=True
    )
    assert v.verdict == "confirmed", v.evidence
    assert "they still run with the same outputs" in v.evidence
    assert re.search(r"a matcher keyed on `\.default` finds 0 of (\d+)", v.evidence)
    assert "torch.export of such a graph turns the packets into `.default`" in v.evidence
    assert v.fix_verified is True
    assert re.search(r"With the fix \(`\.default`\): same outputs, matched (\d+) of \1", v.evidence)


def test_insertion_fix_naming_an_overload_the_op_does_not_have(checker):
    ok = checker.verdict(
        finding("quantized_decomposed", "choose_qparams", kind="insertion", fix=".tensor"), verify_fix=True
    )
    assert ok.verdict == "confirmed" and ok.fix_verified is True
    bad = checker.verdict(
        finding("quantized_decomposed", "choose_qparams", kind="insertion", fix=".default"), verify_fix=True
    )
    assert bad.verdict == "confirmed"
    assert bad.fix_verified is False
    assert "which the installed registry does not have" in bad.evidence


def test_unknown_ops_are_skipped_with_the_reason(checker):
    v = checker.verdict(finding("mybackend", "fused_linear", fix=".default"), verify_fix=True)
    assert v.verdict == "skipped"
    assert v.evidence.startswith("op unknown to the installed registry: torch.ops.mybackend.fused_linear")
    typo = checker.verdict(finding("quantized_decomposed", "dequantize_per_tensr"), verify_fix=True)
    assert typo.verdict == "skipped" and "op unknown" in typo.evidence


def test_edge_dialect(checker):
    pytest.importorskip("executorch")
    diag = finding("quantized_decomposed", "dequantize_per_tensor", fix=".default", dialect="edge")
    v = checker.verdict(diag, verify_fix=True)
    assert v.verdict == "confirmed", v.evidence
    assert v.evidence.startswith("`exir_ops.edge.quantized_decomposed.dequantize_per_tensor` (packet) matches 0 of")
    assert "XNNPACK static to_edge 0/" in v.evidence


def test_fifty_findings_on_the_same_ops_reuse_the_graphs(checker):
    checker.verdict(finding("quantized_decomposed", "quantize_per_tensor"), verify_fix=False)  # graphs built
    seconds = []
    for i in range(50):
        # Different spellings, different requests: every one is a real check in the worker.
        spelled = f"qd{i}.quantize_per_tensor"
        fix = f"{spelled}.default, {spelled}.tensor"
        diag = finding("quantized_decomposed", "quantize_per_tensor", kind="collection", spelled=spelled, fix=fix)
        v = checker.verdict(diag, verify_fix=True)
        assert v.verdict == "confirmed" and v.fix_verified is True
        seconds.append(v.seconds)
    assert sum(seconds) / len(seconds) < 0.5


def test_examples_findings_end_to_end(checker):
    root = Path(__file__).resolve().parents[1] / "examples"
    settings = load_settings([str(root)])
    run = run_check([str(root)], settings, use_cache=False, jobs=1)
    diagnostics = [d for r in run.results for d in r.diagnostics]
    assert diagnostics
    verdicts = checker.attach(diagnostics, verify_fixes=True)
    for d in verdicts:
        assert d.runtime.verdict == "confirmed", (d.code, d.message, d.runtime.evidence)
        if not d.fixable:
            assert d.runtime.fix_verified is None
        else:  # torchao ops too: their fix keeps the packet the installed torchao inserts
            assert d.runtime.fix_verified is True, (d.code, d.message, d.runtime.evidence)

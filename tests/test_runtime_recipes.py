"""QL301 and QL401 runtime checks on findings the real rules produce.

QL301 runs ExecuTorch's QuantizeStage, so these tests need executorch; the findings come
from the real rule on `examples/recipes` and on a pass that keeps `aten.linear`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from qlint.config import load_settings
from qlint.runner import run_check
from tests.conftest import lint
from tests.runtime_support import shared_checker

pytest.importorskip("torchao")

ROOT = Path(__file__).resolve().parents[1]

IMPORTS = """\
from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e
"""

KEEP_LINEAR = """\
import torch
from torch._decomp import core_aten_decompositions
from executorch.export import QuantizationRecipe

EXAMPLE = (torch.randn(2, 3, 8, 8),)


def decompose_all_but_linear(gm):
    table = core_aten_decompositions()
    table.pop(torch.ops.aten.linear.default)
    return torch.export.export(gm, EXAMPLE).run_decompositions(table).module()


def recipe(quantizer):
    return QuantizationRecipe(quantizers=[quantizer], pre_prepare_passes=[decompose_all_but_linear])
"""


@pytest.fixture(scope="module")
def checker():
    return shared_checker()


def only(src: str, code: str, **options):
    (diag,) = lint(src, select=(code,), **options)
    return diag


def qdq(label: str, text: str) -> int:
    m = re.search(re.escape(label) + r"[^:]*: (\d+) q/dq nodes", text)
    assert m, (label, text)
    return int(m[1])


def test_decomposition_in_a_pre_prepare_pass(checker):
    pytest.importorskip("executorch")
    settings = load_settings([str(ROOT / "examples")])
    run = run_check([str(ROOT / "examples" / "recipes")], settings, use_cache=False, jobs=1)
    (diag,) = [d for r in run.results for d in r.diagnostics if d.code == "QL301"]
    v = checker.verdict(diag, verify_fix=True)
    assert v.verdict == "confirmed", v.evidence
    assert "through ExecuTorch's QuantizeStage" in v.evidence
    # Core ATen has no aten.linear/conv2d left for the XNNPACK quantizer to annotate.
    assert qdq("with a pre-prepare pass", v.evidence) < qdq("without the pass", v.evidence)
    assert v.fix_verified is None  # display-only advice: nothing to verify


def test_preserve_ops_fix_quantizes_what_the_pass_did(checker):
    pytest.importorskip("executorch")
    diag = only(KEEP_LINEAR, "QL301", QL301={"executorch-has-preserve-ops": True})
    assert diag.evidence["preserve_ops"] == ["torch.ops.aten.linear.default"]
    v = checker.verdict(diag, verify_fix=True)
    assert v.verdict == "confirmed", v.evidence
    assert "keeping `aten.linear.default`" in v.evidence
    assert qdq("with preserve_ops", v.evidence) == qdq("with a pre-prepare pass", v.evidence) > 0
    assert "kept in the graph: aten.linear.default x2" in v.evidence
    assert v.fix_verified is True


def test_old_pt2e_imports(checker):
    v = checker.verdict(only(IMPORTS, "QL401"), verify_fix=True)
    assert v.verdict == "confirmed"
    assert "`torch.ao.quantization` has no submodule or attribute `quantize_pt2e`" in v.evidence
    assert "`torchao.quantization.pt2e.quantize_pt2e.prepare_pt2e` imports (function)" in v.evidence
    assert v.fix_verified is True


def test_a_name_torch_still_ships_is_refuted(checker):
    """A fine construct fed to the checker: eager `MinMaxObserver` did not move."""
    diag = only(IMPORTS, "QL401")
    fine = diag.__class__(
        diag.code,
        diag.name,
        diag.message,
        diag.path,
        diag.range,
        None,
        evidence={"kind": "moved-import", "moves": [{"old": "torch.ao.quantization.MinMaxObserver", "new": None}]},
    )
    v = checker.verdict(fine, verify_fix=True)
    assert v.verdict == "refuted"
    assert v.evidence.startswith("`torch.ao.quantization.MinMaxObserver` still imports on the installed torch (class)")

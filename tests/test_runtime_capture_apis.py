"""QL402 and QL103 runtime checks on findings the real rules produce (worker imports torch)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import lint
from tests.runtime_support import shared_checker

pytest.importorskip("torchao")

CAPTURE = "from torch._export import capture_pre_autograd_graph\ngm = capture_pre_autograd_graph(m, args)\n"
TRAINING = "import torch\nep = torch.export.export_for_training(m, args)\n"
MATCHER = """\
import torch

Q = torch.ops.quantized_decomposed.quantize_per_channel.default


def weights(gm):
    return [n for n in gm.graph.nodes if n.target == Q and n.args[0].op == "get_attr"]
"""


@pytest.fixture(scope="module")
def checker():
    return shared_checker()


def only(src: str, code: str, tmp_path):
    (diag,) = lint(src, path=str(tmp_path / "snippet.py"), select=(code,), preview=True)
    return diag


@pytest.mark.parametrize(("src", "kind"), [(CAPTURE, "GraphModule"), (TRAINING, "ExportedProgram")])
def test_removed_api_is_confirmed_and_the_rewrite_quantizes(checker, tmp_path, src, kind):
    verdict = checker.verdict(only(src, "QL402", tmp_path), verify_fix=True)
    assert verdict.verdict == "confirmed", verdict.evidence
    assert "does not resolve" in verdict.evidence
    assert f"gave a{'n' if kind[0] == 'E' else ''} {kind}" in verdict.evidence
    assert verdict.fix_verified is True, verdict.evidence
    err = float(re.search(r"max error ([0-9.e-]+)", verdict.evidence)[1])
    assert err < 0.5


def test_weight_fold_counts_quantize_nodes_on_weights_both_ways(checker, tmp_path):
    verdict = checker.verdict(only(MATCHER, "QL103", tmp_path))
    assert verdict.verdict == "confirmed", verdict.evidence
    folded = re.search(r"fold_quantize=True\): (\d+) quantize nodes on a weight, (\d+) dequantize", verdict.evidence)
    kept = re.search(r"fold_quantize=False: (\d+) quantize nodes on a weight, (\d+) dequantize", verdict.evidence)
    assert int(folded[1]) == 0 and int(folded[2]) > 0
    assert int(kept[1]) > 0 and int(kept[2]) == 0

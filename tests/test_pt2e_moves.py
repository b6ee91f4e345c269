"""qlint/data/pt2e_moves.json must be what the installed torch, torchao and executorch say.

The generator imports them; this test runs it in a subprocess (the test process itself
stays free of torch) and fails when the bundled table has drifted.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from qlint.analysis.edits.pt2e_moves import DEFAULT_PATH, OLD_PACKAGE, load_moves
from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "generate_pt2e_moves.py"


def _installed(*modules: str) -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in modules)


@pytest.mark.skipif(not _installed("torch", "torchao", "executorch"), reason="needs torch, torchao and executorch")
def test_table_matches_the_installed_packages(tmp_path):
    out = tmp_path / "pt2e_moves.json"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert out.read_text() == DEFAULT_PATH.read_text(), "stale: run python scripts/generate_pt2e_moves.py"


def test_fix_levels_follow_from_the_entries():
    data = json.loads(DEFAULT_PATH.read_text())
    for old, entry in data["names"].items():
        module = old.rpartition(".")[0]
        status = data["modules"].get(module, {}).get("status", "moved")
        short = old.rpartition(".")[2]
        if entry["module"] is None or status == "prerelease":
            assert entry["fix"] == "display", old
        elif short.startswith("_") or entry["name"].startswith("_") or entry["name"] != short:
            assert entry["fix"] == "unsafe", old
        else:
            assert entry["fix"] == "safe", old
    for module in data["modules"]:
        assert module.startswith(OLD_PACKAGE + "."), module


def test_the_issue_s_names_are_covered():
    moves = load_moves()
    for name in ("move_exported_model_to_eval", "move_exported_model_to_train", "allow_exported_model_train_eval"):
        move = moves.exact(f"{OLD_PACKAGE}.{name}")
        assert move.new == f"torchao.quantization.pt2e.{name}" and move.fix == "safe"
    assert moves.exact(f"{OLD_PACKAGE}.quantize_pt2e.prepare_pt2e").module == "torchao.quantization.pt2e.quantize_pt2e"
    xnn = moves.exact(f"{OLD_PACKAGE}.quantizer.xnnpack_quantizer.XNNPACKQuantizer")
    assert xnn.module.startswith("executorch.backends.xnnpack.quantizer")
    for prefix in ("_quantize_pt2e", "_pt2e", "pt2e", "quantizer"):
        assert moves.removed_module(f"{OLD_PACKAGE}.{prefix}.anything") is not None
    # Eager-mode API torch 2.13 still ships is not in the table.
    for eager in ("MinMaxObserver", "prepare", "convert", "QConfig", "observer", "quantize_fx"):
        assert moves.find(f"{OLD_PACKAGE}.{eager}") is None

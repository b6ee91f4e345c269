"""`qlint check --runtime` and `qlint fix --verify`, end to end as a user runs them.

Both run on a copy of `examples/mybackend` with one cache directory, so the second command
answers from the verdict cache what the first one checked.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("torchao")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("runtime-cli")
    shutil.copytree(ROOT / "examples" / "mybackend", root / "mybackend")
    # `fix-style = "overload"` asks for `.default` alone even for the torchao ops the installed
    # torchao inserts as packets: the checker must refute that fix.
    (root / "pyproject.toml").write_text("[tool.qlint]\nselect = ['QL1']\n[tool.qlint.QL101]\nfix-style = 'overload'\n")
    # A `torch/` directory where qlint runs (a torch source checkout, say) must not be what
    # the worker imports.
    (root / "torch").mkdir()
    (root / "torch" / "__init__.py").write_text("raise ImportError('the checkout, not the installed torch')\n")
    return root


def qlint(project: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "qlint", *args, "--cache-dir", str(project / "cache"), "mybackend"]
    return subprocess.run(cmd, cwd=project, capture_output=True, text=True, timeout=600)


def test_check_runtime_json(project):
    out = qlint(project, "check", "--runtime", "--output-format", "json")
    assert out.returncode == 1, out.stderr
    findings = json.loads(out.stdout)
    assert findings
    by_place = {(Path(f["filename"]).name, f["location"]["row"]): f for f in findings}
    for f in findings:
        runtime = f["runtime"]
        assert set(runtime) == {"verdict", "evidence", "fix_verified", "seconds"}
        assert runtime["verdict"] == "confirmed", runtime
    assert by_place[("qdq_utils.py", 15)]["runtime"]["fix_verified"] is True
    assert by_place[("fold_pass.py", 28)]["runtime"]["fix_verified"] is False  # torchao inserts packets
    # The same packet in a constant of qdq_utils.py, compared in fold_pass.py: its fix edits
    # qdq_utils.py and is checked all the same.
    assert by_place[("fold_pass.py", 19)]["runtime"]["fix_verified"] is False
    text = qlint(project, "check", "--runtime")
    assert "  runtime: confirmed — `torch.ops.aten.relu` (packet) matches 0 of" in text.stdout


def test_fix_verify_holds_back_a_file_with_a_refuted_fix(project):
    before = (project / "mybackend" / "fold_pass.py").read_text()
    # Dropping a packet the installed torchao inserts is never a safe fix (issue 14.13), so only
    # `--unsafe-fixes` offers it, and the runtime checker must then refute it.
    out = qlint(project, "fix", "--verify", "--unsafe-fixes")
    assert f"qlint: not fixing {project / 'mybackend' / 'fold_pass.py'}" in out.stderr
    assert (project / "mybackend" / "fold_pass.py").read_text() == before
    assert (
        "torch.ops.quantized_decomposed.dequantize_per_channel.default,"
        in (project / "mybackend" / "qdq_utils.py").read_text()
    )
    assert "torch.ops.torchao.quantize_affine.default," in (project / "mybackend" / "affine_observer.py").read_text()
    # The findings left, held back or not fixable, are reported with their verdicts.
    assert "fold_pass.py:28:22: QL101 [*]" in out.stdout
    assert "fix NOT verified" in out.stdout
    assert out.returncode == 1


def test_runtime_verdicts_in_the_repository_summary(project):
    out = qlint(project, "check", "--runtime", "--summary-json", "summary.json", "--repo-summary")
    assert out.returncode == 1, out.stderr
    (repo,) = json.loads((project / "summary.json").read_text())["repositories"]
    verdicts = sum(n for per_rule in repo["runtime"].values() for n in per_rule.values())
    assert repo["runtime"] and verdicts == sum(repo["remaining"].values())
    assert "runtime QL101 confirmed" in out.stdout

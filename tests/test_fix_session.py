"""The fix session: every later step uses the texts the per-file pass produced (no re-read,
no re-fix), fixing never touches the caller's ProjectIndex, and the re-parse of a fix is
the engine's own."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import qlint.cross_file_fixes
import qlint.fix_session
import qlint.fixes
import qlint.runner
from qlint.analysis.names.project import ProjectIndex
from qlint.fixes import fix_text
from qlint.reporters import ReportOptions, render
from qlint.runner import run_fix
from qlint.settings import Settings
from tests.conftest import settings_for, write_package
from tests.snippets import PACKET_MATCHER as PACKET
from tests.snippets import QDQ_USER as USER
from tests.snippets import QDQ_UTILS as UTILS

OLD_IMPORT = "from torch.ao.quantization.quantize_pt2e import prepare_pt2e\n"


@pytest.fixture
def counted(monkeypatch):
    """Which files were fixed during the run, and which were read from disk by the
    cross-file step (module resolution reads other modules anyway; this is the fixer's own)."""
    fixes: list[str] = []
    reads: list[str] = []
    stage = {"cross": False}
    real_fix, real_open, real_cross = qlint.fixes.fix_text, open, qlint.cross_file_fixes.apply_cross_file_fixes

    def fix_text(text, path, *args, **kwargs):
        fixes.append(os.path.basename(path))
        return real_fix(text, path, *args, **kwargs)

    def spy_open(file, mode="r", *args, **kwargs):
        if stage["cross"] and str(file).endswith(".py") and "r" in mode:
            reads.append(os.path.basename(str(file)))
        return real_open(file, mode, *args, **kwargs)

    def cross(*args, **kwargs):
        stage["cross"] = True
        try:
            return real_cross(*args, **kwargs)
        finally:
            stage["cross"] = False

    monkeypatch.setattr(qlint.fixes, "fix_text", fix_text)
    monkeypatch.setattr("builtins.open", spy_open)
    # The runner imports it when a fix run starts.
    monkeypatch.setattr(qlint.cross_file_fixes, "apply_cross_file_fixes", cross)
    return fixes, reads


@pytest.mark.parametrize("diff_only", [True, False], ids=["diff", "write"])
def test_cross_file_fix_uses_the_per_file_results(tmp_path, counted, diff_only):
    pkg = write_package(tmp_path, "pkg", qdq_utils=UTILS + OLD_IMPORT, passes=USER)
    fixes, reads = counted
    run = run_fix([str(pkg)], Settings(root=tmp_path), unsafe=False, diff_only=diff_only, jobs=1, use_cache=False)
    assert run.all_errors == []
    # Each file is fixed once, and the file fixed per file is not read again across files.
    assert sorted(fixes) == ["__init__.py", "passes.py", "qdq_utils.py"]
    assert "qdq_utils.py" not in reads and reads.count("passes.py") <= 1
    if diff_only:
        # The per-file QL401 fix and the cross-file QL101 fix land in one diff of qdq_utils.py.
        diff = "".join(r.diff or "" for r in run.reports)
        assert "+DQ_OPS = [torch.ops.quantized_decomposed.dequantize_per_channel.default]" in diff
        assert "+from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e" in diff
        assert (pkg / "qdq_utils.py").read_text() == UTILS + OLD_IMPORT  # a diff writes nothing
    else:
        text = (pkg / "qdq_utils.py").read_text()
        assert "dequantize_per_channel.default]" in text and "torchao.quantization.pt2e.quantize_pt2e" in text


def test_a_fix_runs_patches_come_from_its_session(tmp_path, monkeypatch):
    path = tmp_path / "m.py"
    path.write_text(PACKET)
    run = run_fix([str(path)], Settings(root=tmp_path), unsafe=False, diff_only=True, jobs=1, use_cache=False)
    monkeypatch.setattr(qlint.fixes, "fix_file", lambda *a, **k: pytest.fail("re-fixed a file"))
    assert run.session.patch(str(path)) == (PACKET, PACKET.replace("relu\n", "relu.default\n"))


def test_lintrunner_output_of_a_check_fixes_each_file_once(tmp_path, monkeypatch):
    from qlint.engine import check_source

    path = tmp_path / "m.py"
    path.write_text(PACKET + "\n\ndef g(n):\n    return n.target == torch.ops.aten.relu\n")
    s = Settings(root=tmp_path)
    diagnostics = check_source(path.read_bytes(), str(path), s).diagnostics
    assert len(diagnostics) == 2
    calls = []
    real = qlint.fixes.fix_file
    monkeypatch.setattr(qlint.fixes, "fix_file", lambda *a, **k: calls.append(a) or real(*a, **k))
    lines = render("lintrunner", diagnostics, ReportOptions(settings=s)).splitlines()
    assert len(calls) == 1
    assert [json.loads(line)["replacement"] is not None for line in lines] == [True, False]


def test_fixing_never_changes_the_callers_overlay(tmp_path):
    path = os.path.abspath(tmp_path / "m.py")
    other = os.path.abspath(tmp_path / "other.py")
    overlay = {path: PACKET, other: "X = 1\n"}
    project = ProjectIndex(overlay)
    before = dict(project.overlay)
    outcome = fix_text(PACKET, path, settings_for(), False, project)
    assert outcome.applied == 1
    assert project.overlay == before  # the caller's buffers are the caller's
    assert overlay == {path: PACKET, other: "X = 1\n"}


def test_fix_re_parses_with_the_checks_recursion_budget():
    # Deep enough for the engine (it raises the limit for parsing), too deep for ast.parse
    # at the default limit: the fix must not be refused as "would not re-parse".
    src = OLD_IMPORT + "x = " + "1 + " * 5000 + "1\n"
    outcome = fix_text(src, os.path.abspath("deep.py"), settings_for(("QL401",)), False)
    assert outcome.error is None
    assert outcome.applied == 1 and outcome.fixed.startswith("from torchao.quantization.pt2e.quantize_pt2e import")


def test_session_patch_is_none_once_the_fix_is_written(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(PACKET)
    session = qlint.fix_session.FixSession(Settings(root=tmp_path), unsafe=False)
    assert session.patch(str(path)) == (PACKET, PACKET.replace("relu\n", "relu.default\n"))
    assert session.write(str(path)) is None
    assert Path(path).read_text() == PACKET.replace("relu\n", "relu.default\n")
    assert session.patch(str(path)) is None

"""A command-line index sets aside the modules no check used for a while (`set_asides`):
their texts, parsed statements and flows go, their summaries stay, and a module used again is
rebuilt from its summary (not parsed whole again) with the same answers."""

from __future__ import annotations

import ast

from qlint.analysis.names import module_entries, set_asides
from qlint.analysis.names.project import ProjectIndex

_OPS = "import torch\nDQ = torch.ops.quantized_decomposed.dequantize_per_tensor\n\ndef helper(x):\n    return x\n"


def _checks(project: ProjectIndex, n: int) -> None:
    for _ in range(n):
        project.begin_check()


def _parses(monkeypatch) -> list[str]:
    """The paths `module_entries.summarise` summarises from their whole tree."""
    seen: list[str] = []
    real = module_entries.summarise

    def counting(path, *args, **kwargs):
        seen.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(module_entries, "summarise", counting)
    return seen


def test_a_module_unused_for_a_while_is_set_aside_and_rebuilt_from_its_summary(tmp_path, monkeypatch):
    (tmp_path / "ops.py").write_text(_OPS)
    user = str(tmp_path / "user.py")
    parses = _parses(monkeypatch)
    project = ProjectIndex(track_dependents=False)
    project.begin_check()
    first = project.module_scope("ops", user)
    assert isinstance(first.assigns["DQ"][0], ast.Attribute)
    assert parses == [str(tmp_path / "ops.py")]
    _checks(project, set_asides.UNUSED_CHECKS + set_asides.EVERY)
    assert str(tmp_path / "ops.py") not in project.entries
    again = project.module_scope("ops", user)
    assert again is not first
    assert parses == [str(tmp_path / "ops.py")]  # its summary, not a second parse
    assert ast.dump(again.assigns["DQ"][0]) == ast.dump(first.assigns["DQ"][0])
    assert ast.dump(again.functions["helper"]) == ast.dump(first.functions["helper"])


def test_a_module_in_use_stays(tmp_path):
    (tmp_path / "ops.py").write_text(_OPS)
    user = str(tmp_path / "user.py")
    project = ProjectIndex(track_dependents=False)
    project.begin_check()
    first = project.module_scope("ops", user)
    for _ in range(3 * set_asides.UNUSED_CHECKS):
        project.begin_check()
        assert project.module_scope("ops", user) is first


def test_an_editor_index_sets_nothing_aside(tmp_path):
    (tmp_path / "ops.py").write_text(_OPS)
    project = ProjectIndex()
    project.begin_check()
    first = project.module_scope("ops", str(tmp_path / "user.py"))
    _checks(project, 3 * set_asides.UNUSED_CHECKS)
    assert project.module_scope("ops", str(tmp_path / "user.py")) is first


def test_a_summary_set_aside_is_not_used_for_another_content(tmp_path, monkeypatch):
    ops = tmp_path / "ops.py"
    ops.write_text(_OPS)
    user = str(tmp_path / "user.py")
    parses = _parses(monkeypatch)
    project = ProjectIndex(track_dependents=False)
    project.begin_check()
    assert "DQ" in project.module_scope("ops", user).assigns
    _checks(project, set_asides.UNUSED_CHECKS + set_asides.EVERY)
    ops.write_text("import torch\nQ = torch.ops.quantized_decomposed.quantize_per_tensor\n")
    scope = project.module_scope("ops", user)
    assert "Q" in scope.assigns and "DQ" not in scope.assigns
    assert parses == [str(ops), str(ops)]

"""A check run that holds files still lists and stats the project once for every check that
scans it (`project_files.project_keys`); each check still depends on every other module, and
the language server (files may appear at any time) lists again at every check."""

from __future__ import annotations

import ast

from qlint.analysis import project_files
from qlint.analysis.context import FileContext
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.source import LineIndex


def _ctx(path, project) -> FileContext:
    text = path.read_text()
    return FileContext(str(path), text, ast.parse(text), LineIndex(text), None, project, module_name_for(str(path)))


def _tree(tmp_path):
    (tmp_path / ".git").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.py").write_text(f"def {name}():\n    return 1\n")
    return tmp_path


def _listings(monkeypatch) -> list[str]:
    listed: list[str] = []
    real = project_files.python_files
    monkeypatch.setattr(project_files, "python_files", lambda root, *a: listed.append(root) or real(root, *a))
    return listed


def test_a_check_run_lists_the_project_once(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    listed = _listings(monkeypatch)
    project = ProjectIndex(track_dependents=False)
    ProjectIndex.fix_layout(True)
    try:
        with ProjectIndex.contents_fixed():
            first = project_files.project_keys(_ctx(root / "a.py", project), str(root))
            second = project_files.project_keys(_ctx(root / "b.py", project), str(root))
            assert second is first and len(listed) == 1
            # Each check depends on the others' contents, not on its own.
            deps = project.dependencies_of(str(root / "b.py"))
            assert set(deps) == {str(root / "a.py"), str(root / "c.py")} and all(deps.values())
            assert set(project.dependencies_of(str(root / "a.py"))) == {str(root / "b.py"), str(root / "c.py")}
        # The next run lists again: a file may have appeared between two runs.
        (root / "d.py").write_text("x = 1\n")
        with ProjectIndex.contents_fixed():
            third = project_files.project_keys(_ctx(root / "a.py", project), str(root))
        assert str(root / "d.py") in third and len(listed) == 2
    finally:
        ProjectIndex.fix_layout(False)


def test_the_language_server_lists_at_every_check(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    listed = _listings(monkeypatch)
    project = ProjectIndex()
    project_files.project_keys(_ctx(root / "a.py", project), str(root))
    (root / "d.py").write_text("x = 1\n")
    keys = project_files.project_keys(_ctx(root / "b.py", project), str(root))
    assert str(root / "d.py") in keys and len(listed) == 2
    # Files held still, but an unsaved buffer open: its content may change between checks.
    ProjectIndex.fix_layout(True)
    try:
        with ProjectIndex.contents_fixed():
            buffered = ProjectIndex({str(root / "c.py"): "y = 2\n"})
            project_files.project_keys(_ctx(root / "a.py", buffered), str(root))
            project_files.project_keys(_ctx(root / "b.py", buffered), str(root))
    finally:
        ProjectIndex.fix_layout(False)
    assert len(listed) == 4

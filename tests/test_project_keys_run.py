"""A check run that holds files still lists and stats the project once for every check that
scans it (`module_keys.project_keys`); each check still depends on every other module, and
the language server (files may appear at any time) lists again at every check."""

from __future__ import annotations

import ast

from qlint.analysis import module_keys
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
    real = module_keys.python_files
    monkeypatch.setattr(module_keys, "python_files", lambda root, *a: listed.append(root) or real(root, *a))
    return listed


def test_a_check_run_lists_the_project_once(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    listed = _listings(monkeypatch)
    project = ProjectIndex(track_dependents=False)
    ProjectIndex.fix_layout(True)
    try:
        with ProjectIndex.contents_fixed():
            first = module_keys.project_keys(_ctx(root / "a.py", project), str(root))
            second = module_keys.project_keys(_ctx(root / "b.py", project), str(root))
            assert second is first and len(listed) == 1
            # Each check depends on the others' contents, not on its own.
            deps = project.dependencies_of(str(root / "b.py"))
            assert set(deps) == {str(root / "a.py"), str(root / "c.py")} and all(deps.values())
            assert set(project.dependencies_of(str(root / "a.py"))) == {str(root / "b.py"), str(root / "c.py")}
        # The next run lists again: a file may have appeared between two runs.
        (root / "d.py").write_text("x = 1\n")
        with ProjectIndex.contents_fixed():
            third = module_keys.project_keys(_ctx(root / "a.py", project), str(root))
        assert str(root / "d.py") in third and len(listed) == 2
    finally:
        ProjectIndex.fix_layout(False)


def test_the_language_server_lists_at_every_check(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    listed = _listings(monkeypatch)
    project = ProjectIndex()
    module_keys.project_keys(_ctx(root / "a.py", project), str(root))
    (root / "d.py").write_text("x = 1\n")
    keys = module_keys.project_keys(_ctx(root / "b.py", project), str(root))
    assert str(root / "d.py") in keys and len(listed) == 2
    # Files held still, but an unsaved buffer open: its content may change between checks.
    ProjectIndex.fix_layout(True)
    try:
        with ProjectIndex.contents_fixed():
            buffered = ProjectIndex({str(root / "c.py"): "y = 2\n"})
            module_keys.project_keys(_ctx(root / "a.py", buffered), str(root))
            module_keys.project_keys(_ctx(root / "b.py", buffered), str(root))
    finally:
        ProjectIndex.fix_layout(False)
    assert len(listed) == 4


def test_a_run_that_keeps_no_dependencies_hashes_no_module(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    hashed: list[str] = []
    real = ProjectIndex.digest
    monkeypatch.setattr(
        ProjectIndex, "digest", lambda self, path, key=None: hashed.append(path) or real(self, path, key)
    )
    project = ProjectIndex(track_dependents=False)
    ProjectIndex.fix_layout(True)
    try:
        with ProjectIndex.contents_fixed(), ProjectIndex.dependencies_unwanted():
            keys = module_keys.project_keys(_ctx(root / "a.py", project), str(root))
            module_keys.project_keys(_ctx(root / "b.py", project), str(root))
            assert not ProjectIndex.wants_dependencies
        assert ProjectIndex.wants_dependencies
        # The same listing and keys, no module hashed, and no dependency recorded.
        assert set(keys) == {str(root / n) for n in ("a.py", "b.py", "c.py")} and all(keys.values())
        assert hashed == [] and project.dependencies_of(str(root / "b.py")) == {}
        # With dependencies wanted (the results cache), every other module is hashed.
        with ProjectIndex.contents_fixed():
            module_keys.project_keys(_ctx(root / "c.py", project), str(root))
        assert sorted(hashed)[:2] == [str(root / "a.py"), str(root / "b.py")]
    finally:
        ProjectIndex.fix_layout(False)


def test_only_a_run_without_cache_leaves_dependencies_unrecorded(tmp_path, monkeypatch):
    from qlint import file_checks, runner
    from qlint.settings import Settings

    root = _tree(tmp_path)
    seen: list[bool] = []
    for name in ("check_one", "check_one_uncached"):
        real = getattr(file_checks, name)
        monkeypatch.setattr(
            file_checks, name, lambda p, s, real=real: seen.append(ProjectIndex.wants_dependencies) or real(p, s)
        )
    runner.run_check([str(root)], Settings(), use_cache=False, jobs=1)
    assert seen and not any(seen)
    seen.clear()
    runner.run_check([str(root)], Settings(cache_dir=tmp_path / "cache"), use_cache=True, jobs=1)
    assert seen and all(seen) and ProjectIndex.wants_dependencies


def test_keys_a_search_records_no_dependency_for_are_listed_once_a_run_too(tmp_path, monkeypatch):
    # `unrecorded_keys` (a search one module may decide) shares the run's one listing with
    # `project_keys`, in either order, and records nothing until a check asks `project_keys`.
    root = _tree(tmp_path)
    listed = _listings(monkeypatch)
    project = ProjectIndex(track_dependents=False)
    ProjectIndex.fix_layout(True)
    try:
        with ProjectIndex.contents_fixed():
            first = module_keys.unrecorded_keys(_ctx(root / "a.py", project), str(root))
            assert project.dependencies_of(str(root / "a.py")) == {}
            second = module_keys.unrecorded_keys(_ctx(root / "b.py", project), str(root))
            recorded = module_keys.project_keys(_ctx(root / "c.py", project), str(root))
            assert second is first and recorded is first and len(listed) == 1
            assert set(project.dependencies_of(str(root / "c.py"))) == {str(root / "a.py"), str(root / "b.py")}
    finally:
        ProjectIndex.fix_layout(False)

"""`ProjectIndex.find_module` during a run (layout fixed): a candidate path its directory does
not list is absent without a `stat`; what is listed is still `stat`ed (a directory named
`x.py` is no module), and the next run lists again."""

from __future__ import annotations

import os

import pytest

from qlint.analysis.names.project import ProjectIndex


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "stub.pyi").write_text("y: int\n")
    (tmp_path / "pkg" / "fake.py").mkdir()  # a directory, not a module
    (tmp_path / "pkg" / "user.py").write_text("from pkg import mod\n")
    return tmp_path


def _stats(monkeypatch) -> list[str]:
    asked: list[str] = []
    real = os.path.isfile
    monkeypatch.setattr(os.path, "isfile", lambda p: asked.append(p) or real(p))
    return asked


@pytest.mark.parametrize("fixed", [False, True])
def test_modules_are_found_as_before(tree, fixed):
    requester = str(tree / "pkg" / "user.py")
    ProjectIndex.fix_layout(fixed)
    try:
        index = ProjectIndex(track_dependents=False)
        assert index.find_module("pkg.mod", requester) == str(tree / "pkg" / "mod.py")
        assert index.find_module("pkg.sub", requester) == str(tree / "pkg" / "sub" / "__init__.py")
        assert index.find_module("pkg.stub", requester) == str(tree / "pkg" / "stub.pyi")
        assert index.find_module("pkg.fake", requester) is None
        assert index.find_module("pkg.absent", requester) is None
        assert index.find_module("torch.fx", requester) is None
    finally:
        ProjectIndex.fix_layout(False)


def test_absent_candidates_cost_no_stat_while_the_layout_is_fixed(tree, monkeypatch):
    requester = str(tree / "pkg" / "user.py")
    ProjectIndex.fix_layout(True)
    try:
        index = ProjectIndex(track_dependents=False)
        index.find_module("pkg.user", requester)  # where the requester's imports resolve from: known now
        asked = _stats(monkeypatch)
        assert index.find_module("torch.fx.graph", requester) is None
        assert index.find_module("pkg.absent", requester) is None
        assert asked == []
        assert index.find_module("pkg.mod", requester) == str(tree / "pkg" / "mod.py")
        assert asked == [str(tree / "pkg" / "mod.py")]
    finally:
        ProjectIndex.fix_layout(False)


def test_the_next_run_lists_again(tree):
    requester = str(tree / "pkg" / "user.py")
    ProjectIndex.fix_layout(True)
    try:
        assert ProjectIndex(track_dependents=False).find_module("pkg.new", requester) is None
    finally:
        ProjectIndex.fix_layout(False)
    (tree / "pkg" / "new.py").write_text("z = 3\n")
    ProjectIndex.fix_layout(True)
    try:
        assert ProjectIndex(track_dependents=False).find_module("pkg.new", requester) == str(tree / "pkg" / "new.py")
    finally:
        ProjectIndex.fix_layout(False)

"""Module names and import roots from the chain of `__init__.py` above a file."""

from __future__ import annotations

import os

from qlint.analysis.names import modules
from qlint.analysis.names.modules import import_root, module_name_for


def _package(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").touch()
    (tmp_path / "pkg" / "sub" / "__init__.py").touch()
    (tmp_path / "loose").mkdir()
    return tmp_path


def test_the_import_root_is_above_the_top_package(tmp_path):
    root = _package(tmp_path)
    assert import_root(str(root / "pkg" / "sub" / "a.py")) == str(root)
    assert import_root(str(root / "pkg" / "a.py")) == str(root)
    assert import_root(str(root / "loose" / "a.py")) == str(root / "loose")  # no package: its own directory
    assert module_name_for(str(root / "pkg" / "sub" / "a.py")) == "pkg.sub.a"


def test_files_of_one_directory_share_one_answer(tmp_path, monkeypatch):
    # The helper search asks for the import root of every file it meets, tens of thousands of
    # times per run: a directory's answer is worked out once.
    root = _package(tmp_path)
    import_root(str(root / "pkg" / "sub" / "a.py"))
    asked: list[str] = []
    real = modules._is_package_dir
    monkeypatch.setattr(modules, "_is_package_dir", lambda d: asked.append(d) or real(d))
    assert import_root(str(root / "pkg" / "sub" / "b.py")) == str(root)
    assert import_root(str(root / "pkg" / "sub" / "c.py")) == str(root)
    assert asked == []


def test_an_absolute_path_is_normalised_once(tmp_path, monkeypatch):
    # The helper search asks the import root of the same files tens of thousands of times per
    # run (the installed torch: ~34,000 asks): an absolute path's directory is worked out once.
    root = _package(tmp_path)
    path = str(root / "pkg" / "sub" / "once.py")
    assert import_root(path) == str(root)
    normalised: list[str] = []
    real = os.path.abspath
    monkeypatch.setattr(os.path, "abspath", lambda p: normalised.append(p) or real(p))
    assert import_root(path) == str(root)
    assert import_root(path) == str(root)
    assert normalised == []


def test_a_relative_path_follows_the_working_directory(tmp_path, monkeypatch):
    # A relative path names another file once the working directory changes: never kept.
    first, second = tmp_path / "first", tmp_path / "second"
    for base in (first, second):
        base.mkdir()
        _package(base)
    (second / "pkg" / "__init__.py").unlink()  # here `pkg/sub` imports from `pkg`
    monkeypatch.chdir(first)
    assert import_root(os.path.join("pkg", "sub", "a.py")) == str(first)
    monkeypatch.chdir(second)
    assert import_root(os.path.join("pkg", "sub", "a.py")) == str(second / "pkg")

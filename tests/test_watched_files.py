"""What an editor's file watcher vouches for between checks (`ProjectIndex.watch`): the keys,
listings and module lookups of the files under the watched folders are taken once and kept
until an event names them; everything else is stat'ed at every check, as without a watcher.

Counted, not timed: the stats a check makes of the project's files.
"""

from __future__ import annotations

import os
import shutil

import pytest

from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.watched_files import CHANGED, CREATED, DELETED, WatchedFiles
from tests.test_edited_rechecks import OVERLOAD_ONLY, _codes, _package
from tests.test_ql102_consumers import REMOVE


@pytest.fixture
def stats(monkeypatch):
    """The paths `os.stat`/`os.lstat` were asked about (directories and files alike)."""
    asked: list[str] = []
    real_stat, real_lstat = os.stat, os.lstat

    def stat(path, *args, **kwargs):
        asked.append(os.fspath(path))
        return real_stat(path, *args, **kwargs)

    def lstat(path, *args, **kwargs):
        asked.append(os.fspath(path))
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(os, "lstat", lstat)
    return asked


def _under(asked: list[str], root) -> list[str]:
    return [p for p in asked if p.startswith(str(root) + os.sep)]


def test_a_watched_project_is_stated_once_not_at_each_check(tmp_path, stats):
    pkg = _package(tmp_path, remove=REMOVE)
    add = str(pkg / "add.py")
    project = ProjectIndex()
    project.watch([str(tmp_path)])
    assert _codes(add, project) == []
    assert str(pkg / "remove.py") in _under(stats, tmp_path)
    stats.clear()
    assert _codes(add, project, (pkg / "add.py").read_text() + "\nX = 1\n") == []
    assert _under(stats, tmp_path) == []


def test_without_a_watcher_each_check_stats_the_project(tmp_path, stats):
    pkg = _package(tmp_path, remove=REMOVE)
    add = str(pkg / "add.py")
    project = ProjectIndex()
    assert _codes(add, project) == []
    stats.clear()
    assert _codes(add, project) == []
    assert str(pkg / "remove.py") in stats and str(pkg) in stats  # the file and its directory


def test_an_event_drops_the_key_of_the_file_it_names_and_no_other(tmp_path):
    pkg = _package(tmp_path, remove=REMOVE)
    add = str(pkg / "add.py")
    project = ProjectIndex()
    project.watch([str(tmp_path)])
    assert _codes(add, project) == []
    kept = set(project.watched.keys)
    assert {str(pkg / "remove.py"), str(pkg / "pipeline.py")} <= kept
    (pkg / "remove.py").write_text(OVERLOAD_ONLY)
    assert _codes(add, project) == []  # nothing said so: the kept key holds
    project.files_changed([(str(pkg / "remove.py"), CHANGED)])
    assert set(project.watched.keys) == kept - {str(pkg / "remove.py")}
    assert project.watched.listings  # a file's content changed: the listing holds
    assert _codes(add, project) == ["QL102"]


def test_a_rewrite_its_stat_cannot_tell_is_seen_once_the_watcher_reports_it(tmp_path):
    # Same size, same mtime: a stat-keyed cache takes the old content for the new one.
    padded = REMOVE + "#" * (len(OVERLOAD_ONLY) - len(REMOVE) - 1) + "\n"
    pkg = _package(tmp_path, remove=padded)
    remove = pkg / "remove.py"
    before = os.stat(remove)
    add = str(pkg / "add.py")
    project = ProjectIndex()
    project.watch([str(tmp_path)])
    assert _codes(add, project) == []
    remove.write_text(OVERLOAD_ONLY)
    os.utime(remove, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(remove).st_size == before.st_size
    project.files_changed([(str(remove), CHANGED)])
    assert _codes(add, project) == ["QL102"]


def test_a_file_put_back_with_its_old_mtime_and_size_is_read_again(tmp_path):
    padded = REMOVE + "#" * (len(OVERLOAD_ONLY) - len(REMOVE) - 1) + "\n"
    pkg = _package(tmp_path, remove=padded)
    remove = pkg / "remove.py"
    before = os.stat(remove)
    add = str(pkg / "add.py")
    project = ProjectIndex()
    project.watch([str(tmp_path)])
    assert _codes(add, project) == []
    remove.unlink()
    project.files_changed([(str(remove), DELETED)])
    assert _codes(add, project) == ["QL102"]
    remove.write_text(OVERLOAD_ONLY)  # as `rsync -a` puts a file back: the mtime it had
    os.utime(remove, ns=(before.st_atime_ns, before.st_mtime_ns))
    project.files_changed([(str(remove), CREATED)])
    assert _codes(add, project) == ["QL102"]
    remove.write_text(padded)
    os.utime(remove, ns=(before.st_atime_ns, before.st_mtime_ns))
    project.files_changed([(str(remove), CHANGED)])
    assert _codes(add, project) == []


def test_files_created_and_deleted_are_listed_again(tmp_path):
    pkg = _package(tmp_path)
    add = str(pkg / "add.py")
    project = ProjectIndex()
    project.watch([str(tmp_path)])
    assert _codes(add, project) == ["QL102"]
    (pkg / "remove.py").write_text(REMOVE)
    project.files_changed([(str(pkg / "remove.py"), CREATED)])
    assert _codes(add, project) == []
    (pkg / "remove.py").unlink()
    project.files_changed([(str(pkg / "remove.py"), DELETED)])
    assert _codes(add, project) == ["QL102"]


def test_a_directory_moved_in_or_deleted_is_one_event_for_all_it_holds(tmp_path):
    pipeline = "from pkg.passes.remove import RemovePass\n"
    pkg = _package(tmp_path, pipeline=_pipeline_from("pkg.passes.remove"))
    staged = tmp_path.parent / (tmp_path.name + "-staged") / "passes"
    staged.mkdir(parents=True)
    (staged / "__init__.py").touch()
    (staged / "remove.py").write_text(REMOVE)
    add = str(pkg / "add.py")
    project = ProjectIndex()
    project.watch([str(tmp_path)])
    assert _codes(add, project) == ["QL102"]
    os.rename(staged, pkg / "passes")
    project.files_changed([(str(pkg / "passes"), CREATED)])
    assert _codes(add, project) == []
    assert pipeline.strip() in (pkg / "pipeline.py").read_text()
    kept = [p for p in project.watched.keys if p.startswith(str(pkg / "passes"))]
    assert kept
    shutil.rmtree(pkg / "passes")
    project.files_changed([(str(pkg / "passes"), DELETED)])
    assert not [p for p in project.watched.keys if p.startswith(str(pkg / "passes"))]
    assert _codes(add, project) == ["QL102"]


def _pipeline_from(module: str) -> str:
    from tests.test_ql102_consumers import PIPELINE

    return PIPELINE.format(between="pass").replace("from pkg.remove import", f"from {module} import")


def test_files_outside_the_watched_folders_are_stated_at_each_ask(tmp_path, stats):
    inside, outside = tmp_path / "ws", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    (inside / "a.py").write_text("A = 1\n")
    (outside / "b.py").write_text("B = 1\n")
    watched = WatchedFiles([str(inside)])
    for _ in range(2):
        assert watched.key(str(inside / "a.py")) is not None
        assert watched.key(str(outside / "b.py")) is not None
    assert stats.count(str(inside / "a.py")) == 1
    assert stats.count(str(outside / "b.py")) == 2
    assert not watched.covers(str(tmp_path / "ws-sibling" / "c.py"))  # a prefix of the name is not a folder


def test_what_lies_behind_a_symbolic_link_is_never_kept(tmp_path):
    inside, outside = tmp_path / "ws", tmp_path / "elsewhere"
    inside.mkdir()
    outside.mkdir()
    (outside / "b.py").write_text("B = 1\n")
    os.symlink(outside / "b.py", inside / "linked.py")
    os.symlink(outside, inside / "linked_dir")
    (inside / "own.py").write_text("A = 1\n")
    watched = WatchedFiles([str(inside)])
    for path in (inside / "linked.py", inside / "linked_dir" / "b.py", inside / "own.py"):
        assert watched.key(str(path)) is not None
    assert set(watched.keys) == {str(inside / "own.py")}
    (outside / "b.py").write_text("B = 22\n")  # the watcher of `ws` would not see this
    assert watched.key(str(inside / "linked.py")) == watched.key(str(inside / "linked_dir" / "b.py"))
    assert watched.key(str(inside / "linked.py"))[1] == len("B = 22\n")


def test_events_in_git_and_bytecode_directories_leave_the_listings(tmp_path):
    pkg = _package(tmp_path, remove=REMOVE)
    project = ProjectIndex()
    project.watch([str(tmp_path)])
    assert _codes(str(pkg / "add.py"), project) == []
    listings, found = dict(project.watched.listings), dict(project.watched.found)
    assert listings and found
    project.files_changed(
        [(str(tmp_path / ".git" / "index.lock"), CREATED), (str(pkg / "__pycache__" / "add.cpython-311.pyc"), CREATED)]
    )
    assert project.watched.listings == listings and project.watched.found == found
    project.files_changed([(str(pkg / "new_dir"), CREATED)])
    assert project.watched.listings == {} and project.watched.found == {}


def test_a_buffer_opened_or_closed_for_a_file_not_on_disk_is_found_again(tmp_path):
    pkg = _package(tmp_path, pipeline=_pipeline_from("pkg.extra"))
    project = ProjectIndex()
    project.watch([str(tmp_path)])
    add = str(pkg / "add.py")
    assert _codes(add, project) == ["QL102"]
    project.update(str(pkg / "extra.py"), REMOVE)  # an unsaved new module
    assert _codes(add, project) == []
    project.update(str(pkg / "extra.py"), None)
    assert _codes(add, project) == ["QL102"]

"""The wrapper record's snapshot of the tree (`tree_snapshot`): a warm `qlint check FILE` after a
run over the tree checks the record by comparing stats, without listing a directory, and
still sees every change that could change a result: each one-file check here is compared with
a check without any cache."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from qlint.analysis import project_files, tree_snapshot, wrapper_record
from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import old_file
from tests.test_wrapper_index import _project

QUIET_UTILS = "def insert_op(graph, op, args):\n    return graph.call_function(print, args)\n"
INSERTING = "def wrap_it(graph, op, args):\n    return graph.call_function(op, args)\n"
USER = "import torch\n\nfrom {module} import wrap_it\n\n\ndef rewrite(gm):\n"
USER += "    wrap_it(gm.graph, torch.ops.aten.relu, ())\n"


@pytest.fixture
def listed_from_now(monkeypatch):
    """Directories made by the test count as older than this process's listings (their
    ctime cannot be set back): a snapshot can be taken of a tree made a moment ago. The
    cache directory is made first (making it moves its parent's stamp)."""
    monkeypatch.setattr(tree_snapshot, "RACY_NS", 0)

    def start_now(root: Path):
        (root / ".qlint_cache").mkdir(exist_ok=True)
        monkeypatch.setattr(project_files, "STARTED", time.time_ns())

    return start_now


def _settings(tmp_path: Path) -> Settings:
    return Settings(select=("QL102",), root=tmp_path, cache_dir=tmp_path / ".qlint_cache")


def _rows(tmp_path: Path, paths: list[Path], use_cache: bool = True) -> dict[str, list[int]]:
    run = run_check([str(p) for p in paths], _settings(tmp_path), use_cache=use_cache, jobs=1)
    return {os.path.basename(r.path): [d.range.start.row for d in r.diagnostics] for r in run.results}


def _one_file(tmp_path: Path, path: Path) -> list[int]:
    """The warm check of `path` alone, which must find what a check without cache finds."""
    warm = _rows(tmp_path, [path])
    assert warm == _rows(tmp_path, [path], use_cache=False)
    return warm[path.name]


def _record(tmp_path: Path) -> wrapper_record.Record:
    from qlint.cache import Cache

    record = Cache.for_settings(_settings(tmp_path)).wrappers.load(str(tmp_path))
    assert record is not None
    return record


def test_a_warm_one_file_check_lists_nothing_for_the_wrapper_names(tmp_path, monkeypatch, listed_from_now):
    pkg = _project(tmp_path)
    (tmp_path / ".git").mkdir()  # a repository: the one-file check shares the run's layout
    listed_from_now(tmp_path)
    assert _rows(tmp_path, [pkg])["passes.py"] == [7]  # over the tree: the index is made
    assert _record(tmp_path).snapshot is not None
    monkeypatch.setattr(wrapper_record, "disk_files", lambda *a: pytest.fail(f"listed: {a[0]}"))
    run = run_check([str(pkg / "passes.py")], _settings(tmp_path), jobs=1)
    assert run.cached == 1 and [d.range.start.row for d in run.results[0].diagnostics] == [7]


def test_an_edited_wrapper_is_seen_by_a_one_file_check(tmp_path, listed_from_now):
    pkg = _project(tmp_path, wrapper=QUIET_UTILS)
    listed_from_now(tmp_path)
    assert _rows(tmp_path, [pkg])["passes.py"] == []
    assert _one_file(tmp_path, pkg / "passes.py") == []
    old_file(pkg / "graph_utils.py", QUIET_UTILS.replace("print", "op "))  # same size, inserts now
    assert _one_file(tmp_path, pkg / "passes.py") == [7]


def test_a_new_wrapper_module_is_seen_by_a_one_file_check(tmp_path, listed_from_now):
    pkg = _project(tmp_path)
    old_file(pkg / "late.py", USER.format(module="pkg.made_later"))
    listed_from_now(tmp_path)
    assert _rows(tmp_path, [pkg])["late.py"] == []
    old_file(pkg / "made_later.py", INSERTING)
    assert _one_file(tmp_path, pkg / "late.py") == [7]


def test_a_deleted_wrapper_module_is_seen_by_a_one_file_check(tmp_path, listed_from_now):
    pkg = _project(tmp_path)
    listed_from_now(tmp_path)
    assert _rows(tmp_path, [pkg])["passes.py"] == [7]
    (pkg / "graph_utils.py").unlink()
    assert _one_file(tmp_path, pkg / "passes.py") == []


def test_a_new_module_shadowing_an_import_is_seen_by_a_one_file_check(tmp_path, listed_from_now):
    """`from helpers import wrap_it` in `lib/pkg/user.py` finds the repository's `helpers.py`
    until `lib/helpers.py`, in the file's own import root, is made."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    old_file(tmp_path / "helpers.py", QUIET_UTILS.replace("insert_op", "wrap_it"))
    (tmp_path / "lib").mkdir()
    pkg = _project(tmp_path / "lib")
    old_file(pkg / "user.py", USER.format(module="helpers"))
    listed_from_now(tmp_path)
    assert _rows(tmp_path, [tmp_path])["user.py"] == []
    old_file(tmp_path / "lib" / "helpers.py", INSERTING)
    assert _one_file(tmp_path, pkg / "user.py") == [7]


def test_an_edit_elsewhere_keeps_the_record_and_takes_a_new_snapshot(tmp_path, monkeypatch, listed_from_now):
    pkg = _project(tmp_path)
    (tmp_path / ".git").mkdir()  # a repository: the one-file check shares the run's layout
    listed_from_now(tmp_path)
    _rows(tmp_path, [pkg])
    before = _record(tmp_path)
    old_file(pkg / "m3.py", "import os\n\n\ndef f3(x):\n    return os.sep\n")
    listed_from_now(tmp_path)
    stamped = []
    real = tree_snapshot.dir_stamps
    monkeypatch.setattr(tree_snapshot, "dir_stamps", lambda dirs: stamped.append(len(dirs)) or real(dirs))
    from qlint.cache import Cache

    cache = Cache.for_settings(_settings(tmp_path))
    assert cache.derived.wrapper_digest(wrapper_record.dependency(str(tmp_path))) == before.digest
    assert len(stamped) == 2  # the snapshot that no longer holds, the one taken after the long check
    assert _one_file(tmp_path, pkg / "passes.py") == [7]
    after = _record(tmp_path)
    assert after.digest == before.digest
    assert after.snapshot is not None and after.snapshot.file_stats != before.snapshot.file_stats
    assert after.unchanged()


def _tree(tmp_path: Path) -> tuple[list[str], dict[str, tuple[int, int]]]:
    (tmp_path / "sub").mkdir()
    stats = {}
    for path in (tmp_path / "a.py", tmp_path / "sub" / "b.py"):
        old_file(path, "x = 1\n")
        st = os.stat(path)
        stats[str(path)] = (st.st_size, st.st_mtime_ns)
    return [str(tmp_path), str(tmp_path / "sub")], stats


def _taken(tmp_path: Path, listed_from_now) -> tree_snapshot.Snapshot:
    dirs, stats = _tree(tmp_path)
    listed_from_now(tmp_path)
    snapshot = tree_snapshot.take(dirs, stats, time.time_ns())
    assert snapshot is not None and snapshot.holds()
    return snapshot


@pytest.mark.parametrize(
    "change",
    [
        lambda root: old_file(root / "a.py", "x = 2\n"),  # same size, another mtime
        lambda root: (root / "sub" / "c.py").write_text(""),  # a new file
        lambda root: (root / "sub" / "b.py").unlink(),
        lambda root: (root / "sub" / "b.py").rename(root / "sub" / "d.py"),
        lambda root: (root / "sub" / "deeper").mkdir(),
        lambda root: os.symlink(root.parent, root / "sub" / "link"),
    ],
)
def test_a_snapshot_no_longer_holds_after_any_change(tmp_path, listed_from_now, change):
    snapshot = _taken(tmp_path, listed_from_now)
    change(tmp_path)
    assert not snapshot.holds()


def test_a_snapshot_is_taken_only_where_stats_vouch(tmp_path, monkeypatch):
    dirs, stats = _tree(tmp_path)
    now = time.time_ns()
    monkeypatch.setattr(project_files, "STARTED", now)
    # The directories were changed a moment ago: a listing may have been made before.
    assert tree_snapshot.take(dirs, stats, now) is None
    monkeypatch.setattr(tree_snapshot, "RACY_NS", 0)
    assert tree_snapshot.take(dirs, stats, now) is not None
    assert tree_snapshot.take(dirs, {**stats, str(tmp_path / "a.py"): (-1, -1)}, now) is None  # untrusted
    assert tree_snapshot.take(dirs, {**stats, str(tmp_path / "a.py"): None}, now) is None  # unreadable
    assert tree_snapshot.take([*dirs, str(tmp_path / "gone")], stats, now) is None
    assert wrapper_record.take_snapshot(dirs, stats, [str(tmp_path / "link")], now) is None


def test_a_record_keeps_its_snapshot_and_rejects_a_damaged_one(tmp_path, listed_from_now):
    snapshot = _taken(tmp_path, listed_from_now)
    record = wrapper_record.Record(str(tmp_path), {"f"}, {"C"}, None, {"s"}, set(), snapshot)
    data = record.to_data()
    assert data["stats"] is None  # kept once, as the snapshot keeps them
    again = wrapper_record.from_data(data, str(tmp_path))
    assert again is not None and again.digest == record.digest and again.unchanged()
    assert again.stats == {p: tuple(s) for p, s in _tree_stats(snapshot).items()}
    damaged = {**data, "snapshot": {**data["snapshot"], "file_stats": data["snapshot"]["file_stats"][1:]}}
    assert wrapper_record.from_data(damaged, str(tmp_path)) is None
    plain = wrapper_record.from_data({**data, "stats": {"/x.py": [1, 2]}, "snapshot": None}, str(tmp_path))
    assert plain is not None and plain.snapshot is None and not plain.unchanged()


def test_a_record_read_back_takes_the_digest_it_kept(tmp_path, listed_from_now, monkeypatch):
    """The names' digest is kept with them and read back, not worked out again at each read
    (800 names sorted and hashed on ExecuTorch); a record without one is no record."""
    snapshot = _taken(tmp_path, listed_from_now)
    record = wrapper_record.Record(str(tmp_path), {"f", "g"}, {"C"}, None, {"s"}, set(), snapshot)
    assert record.digest == wrapper_record.digest_of({"f", "g"}, {"C"}, {"s"}, set())
    data = record.to_data()
    monkeypatch.setattr(wrapper_record, "digest_of", lambda *a: pytest.fail("worked out again"))
    again = wrapper_record.from_data(data, str(tmp_path))
    assert again is not None and again.digest == record.digest
    for bad in ({k: v for k, v in data.items() if k != "digest"}, {**data, "digest": 3}):
        assert wrapper_record.from_data(bad, str(tmp_path)) is None


def _tree_stats(snapshot: tree_snapshot.Snapshot) -> dict[str, tuple[int, int]]:
    values = snapshot.file_stats
    return {p: (values[2 * i], values[2 * i + 1]) for i, p in enumerate(snapshot.files)}


@pytest.mark.parametrize(
    "field, bad",
    [("dirs", 3), ("files", b"/x.py"), ("dir_stamps", True), ("file_stats", 1.5), ("file_stats", "7")],
)
def test_a_snapshot_of_other_types_is_not_read_back(tmp_path, listed_from_now, field, bad):
    """Its items' types are checked all at once (as a set): a bool is not an int there either,
    as `type(n) is int` said of each one."""
    data = _taken(tmp_path, listed_from_now).to_data()
    assert tree_snapshot.from_data(data) is not None
    assert tree_snapshot.from_data({**data, field: [*data[field][:-1], bad]}) is None
    empty = {"dirs": [], "dir_stamps": [], "files": [], "file_stats": []}
    assert tree_snapshot.from_data(empty) is not None


def test_the_cache_stats_a_snapshot_as_its_run_sees_each_file(tmp_path):
    """`RunStats.stats_of` (the cache's `stats`): the files not stat'ed yet are stat'ed together
    and kept as the run's view of them; a file the run stat'ed before keeps the stat it had
    then; one that cannot be stat'ed answers None, after the files before it were taken in."""
    from qlint.cache_stats import RunStats

    files = []
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(name)
        files.append(str(tmp_path / name))
    fresh = RunStats()
    flat = fresh.stats_of(files)
    expected = [n for f in files for n in (os.stat(f).st_size, os.stat(f).st_mtime_ns)]
    assert flat == expected
    assert fresh.seen == fresh.unlooked == {f: tuple(expected[2 * i : 2 * i + 2]) for i, f in enumerate(files)}
    seen = RunStats()
    seen.seen[files[1]] = (99, 98)  # what the run saw of it earlier
    assert seen.stats_of(files) == [*expected[:2], 99, 98, *expected[4:]]
    gone = RunStats()
    assert gone.stats_of([files[0], str(tmp_path / "gone.py"), files[2]]) is None
    assert gone.seen == {files[0]: tuple(expected[:2]), str(tmp_path / "gone.py"): None}

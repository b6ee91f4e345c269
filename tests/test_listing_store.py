"""Directory listings the results cache keeps between runs (`qlint.listing_store`, issue 13).

`qlint check FILE` looks up a result that depends on a whole listing (a project scan's, or
the wrapper names') and used to list every directory under the root again: a later process
lists only the directories whose mtime moved, and still finds every file created, removed or
renamed since.
"""

from __future__ import annotations

import os

import pytest

from qlint.analysis import project_files
from qlint.cache import Cache
from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import old_file
from tests.test_cache_listed import NEEDLE, _project, _store
from tests.test_wrapper_index import _project as _wrapper_project

_PAST = 1_600_000_000


def _age_directories(root) -> None:
    """Directory mtimes old enough for a kept listing to vouch for them."""
    for directory, _, _ in os.walk(root):
        os.utime(directory, (_PAST, _PAST))


def _new_process(monkeypatch) -> None:
    """What a new process knows of the directories: nothing."""
    monkeypatch.setattr(project_files, "_DIRS", {})


def _lookup(tmp_path, checked) -> tuple[bool, int]:
    """(hit, directories listed afresh) of a lookup in a new `Cache`, saved after."""
    made = project_files.listings_made()
    cache = Cache(tmp_path / "cache", "fp")
    hit = cache.lookup(str(checked)) is not None
    cache.save()
    return hit, project_files.listings_made() - made


def test_a_later_process_lists_no_unchanged_directory(tmp_path, monkeypatch):
    root, checked, _ = _project(tmp_path)
    _age_directories(root)
    _store(tmp_path, root, checked)
    _new_process(monkeypatch)
    assert _lookup(tmp_path, checked) == (True, 2)  # the root and `sub`, kept for the next run
    _new_process(monkeypatch)
    assert _lookup(tmp_path, checked) == (True, 0)


def test_a_module_created_in_a_kept_directory_is_found(tmp_path, monkeypatch):
    root, checked, _ = _project(tmp_path)
    _age_directories(root)
    _store(tmp_path, root, checked)
    _new_process(monkeypatch)
    assert _lookup(tmp_path, checked) == (True, 2)
    old_file(root / "sub" / "caller.py", f"{NEEDLE}()\n")  # moves the mtime of `sub` only
    _new_process(monkeypatch)
    assert _lookup(tmp_path, checked) == (False, 1)


def test_a_module_removed_from_a_kept_directory_is_missed(tmp_path, monkeypatch):
    root, checked, modules = _project(tmp_path)
    _age_directories(root)
    _store(tmp_path, root, checked)
    _new_process(monkeypatch)
    assert _lookup(tmp_path, checked)[0]
    modules[1].unlink()
    _new_process(monkeypatch)
    assert _lookup(tmp_path, checked) == (False, 1)


def test_a_recent_directory_is_not_kept(tmp_path, monkeypatch):
    root, checked, _ = _project(tmp_path)
    _age_directories(root)
    os.utime(root / "sub")  # now: a change later in the same tick would keep this mtime
    _store(tmp_path, root, checked)
    _new_process(monkeypatch)
    _lookup(tmp_path, checked)
    _new_process(monkeypatch)
    assert _lookup(tmp_path, checked)[1] == 1  # `sub` again, the root not


def test_a_damaged_kept_listing_is_as_if_absent(tmp_path, monkeypatch):
    root, checked, _ = _project(tmp_path)
    _age_directories(root)
    _store(tmp_path, root, checked)
    _new_process(monkeypatch)
    _lookup(tmp_path, checked)
    (kept,) = (tmp_path / "cache").rglob("*.listing")
    kept.write_bytes(kept.read_bytes()[:-9])
    _new_process(monkeypatch)
    assert _lookup(tmp_path, checked) == (True, 2)


def _one_file(tmp_path, path) -> tuple[int, dict[str, list[int]]]:
    settings = Settings(select=("QL102",), root=tmp_path, cache_dir=tmp_path / ".qlint_cache")
    run = run_check([str(path)], settings, jobs=1)
    return run.cached, {os.path.basename(r.path): [d.range.start.row for d in r.diagnostics] for r in run.results}


@pytest.mark.parametrize("late", ["kept", "edited"])
def test_a_one_file_check_after_a_whole_run_answers_as_it(tmp_path, monkeypatch, late):
    """The wrapper names' dependency, checked from the kept listings: the file checked alone
    after a run over the project is a hit, and a wrapper made since still reaches it."""
    quiet = "def insert_op(graph, op, args):\n    return graph.call_function(print, args)\n"
    pkg = _wrapper_project(tmp_path, wrapper=quiet)
    # A repository, as pre-commit runs in: in a tree with no marker the run's own paths are
    # its project root, and a run over `pkg` keeps nothing for a check of one file (`run_layout`).
    (tmp_path / ".git").mkdir()
    settings = Settings(select=("QL102",), root=tmp_path, cache_dir=tmp_path / ".qlint_cache")
    assert run_check([str(pkg)], settings, jobs=1).cached == 0
    _age_directories(tmp_path)  # the cache made just now among them
    for _ in range(2):
        _new_process(monkeypatch)
        assert _one_file(tmp_path, pkg / "passes.py") == (1, {"passes.py": []})
    made = project_files.listings_made()
    _new_process(monkeypatch)
    if late == "edited":
        old_file(pkg / "graph_utils.py", "def insert_op(graph, op, args):\n    return graph.call_function(op, args)\n")
    else:
        old_file(pkg / "late.py", "from pkg.graph_utils import insert_op as put\n")  # a new name for no wrapper
    found = _one_file(tmp_path, pkg / "passes.py")
    if late == "edited":
        assert found == (0, {"passes.py": [7]})
    else:
        assert found == (1, {"passes.py": []})
        assert project_files.listings_made() - made == 1  # `pkg` only: its mtime moved

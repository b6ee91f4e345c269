"""Dead code's "another module names it" (`named_texts.spelled_elsewhere`): the module found
spelling the name answers alone while it keeps its content, in an editor's next check and in
a new process (`kept_answers`), without the project being read again; once it changes, the
project is searched again and the answer follows the text (a helper nobody names any more is
dead: its finding goes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qlint.analysis.graphs import kept_answers, kept_shards, kept_state, named_texts
from qlint.analysis.names import content_keys
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from qlint.value_classes import replace
from tests.conftest import check_file, kept_store, old_file, rows_of, settings_for
from tests.test_dead_code import CONVERT_ROW, _helper

CALLER = "from utils import dynamic_quant\n\n\ndef test_it():\n    dynamic_quant(1, 2, 3)\n"
# The same size as CALLER: only the name differs (a stat with the same size and another time).
NO_CALLER = "from utils import dynamic_fuzz\n\n\ndef test_it():\n    dynamic_fuzz(1, 2, 3)\n"
SELECT = ("QL204",)


def _repo(root: Path) -> Path:
    """A repository whose tests/utils.py holds a helper (QL204 at CONVERT_ROW) that
    tests/test_quant.py calls, among modules that do not name it."""
    (root / ".git").mkdir()
    (root / "tests").mkdir()
    for i in range(5):
        old_file(root / f"lib_{i}.py", f"VALUE_{i} = {i}\n")
    old_file(root / "tests" / "test_quant.py", CALLER)
    return old_file(root / "tests" / "utils.py", _helper("dynamic_quant"))


def _new_process() -> None:
    named_texts._SPELLED.clear()
    content_keys._DIGESTS.clear()
    kept_answers.forget()


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from kept_store(tmp_path, monkeypatch, _new_process)


def _rewrite(path: Path, text: str) -> None:
    before = os.stat(path).st_mtime_ns
    old_file(path, text)
    os.utime(path, ns=(before - 10**9, before - 10**9))  # another stat, still an old one


def test_an_editors_next_check_reads_no_module_for_the_name(tmp_path, scan_reads):
    utils = _repo(tmp_path)
    project = ProjectIndex()
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == [CONVERT_ROW]
    assert scan_reads
    scan_reads.clear()
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == [CONVERT_ROW]
    assert scan_reads == []


def test_the_name_gone_from_the_module_found_makes_the_helper_dead(tmp_path, scan_reads):
    utils = _repo(tmp_path)
    project = ProjectIndex()
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == [CONVERT_ROW]
    scan_reads.clear()
    _rewrite(tmp_path / "tests" / "test_quant.py", NO_CALLER)
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == []
    assert str(tmp_path / "tests" / "test_quant.py") in scan_reads


def test_the_name_moved_to_another_module_is_found_there(tmp_path, scan_reads):
    utils = _repo(tmp_path)
    project = ProjectIndex()
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == [CONVERT_ROW]
    _rewrite(tmp_path / "tests" / "test_quant.py", NO_CALLER)
    old_file(tmp_path / "lib_3.py", "from tests.utils import dynamic_quant\n")
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == [CONVERT_ROW]


def test_a_new_process_takes_the_module_an_earlier_run_found(tmp_path, store, scan_reads):
    utils = _repo(tmp_path)
    assert rows_of(check_file(utils, SELECT).diagnostics) == [CONVERT_ROW]
    kept_shards.flush()
    _new_process()
    scan_reads.clear()
    assert rows_of(check_file(utils, SELECT).diagnostics) == [CONVERT_ROW]
    assert scan_reads == []


def test_a_new_process_searches_again_once_that_module_changed(tmp_path, store, scan_reads):
    utils = _repo(tmp_path)
    assert rows_of(check_file(utils, SELECT).diagnostics) == [CONVERT_ROW]
    kept_shards.flush()
    _new_process()
    _rewrite(tmp_path / "tests" / "test_quant.py", NO_CALLER)
    assert rows_of(check_file(utils, SELECT).diagnostics) == []


def test_the_module_found_is_not_its_own_caller_when_checked(tmp_path, scan_reads):
    """The name found in test_quant.py, whose buffer (the file unchanged on disk) then defines
    `dynamic_quant` uncalled: its own text is not searched, the other modules that spell the
    name are. utils.py spells it only as its own `dynamic_quant`, which never reaches the
    buffer's (`own_namesakes`): dead. Once utils.py imports the buffer's, it is live."""
    utils = _repo(tmp_path)
    project = ProjectIndex()
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == [CONVERT_ROW]
    caller = str(tmp_path / "tests" / "test_quant.py")
    buffer = _helper("dynamic_quant", "\n\ndef test_it():\n    assert True\n")
    result = check_source(buffer, caller, settings_for(SELECT), project)
    assert rows_of(result.diagnostics) == []
    _rewrite(utils, _helper("static_quant") + "\nfrom tests.test_quant import dynamic_quant\n")
    result = check_source(buffer, caller, settings_for(SELECT), project)
    assert rows_of(result.diagnostics) == [CONVERT_ROW]


def _tree_repo(tmp_path: Path) -> Path:
    """`_repo` in tmp_path/repo, beside the cache in tmp_path/cache."""
    (tmp_path / "repo").mkdir()
    return _repo(tmp_path / "repo")


def _tree_run(root: Path, cache: Path) -> list[int]:
    """A whole-tree run with the results cache on (not a check of one file), as a new process."""
    from qlint.runner import run_check

    _new_process()
    settings = replace(settings_for(SELECT), root=root, cache_dir=cache)
    result = run_check([str(root)], settings, jobs=1)
    assert not result.errors
    return [d.range.start.row for r in result.results for d in r.diagnostics]


def _edited_check(utils: Path, cache: Path) -> list[int]:
    """The first check of the edited buffer after it, in a new process, as `qlint check -` runs it."""
    from qlint.summary_cache import summary_store

    _new_process()
    settings = replace(settings_for(SELECT), root=utils.parent.parent, cache_dir=cache)
    with summary_store(settings, True, answers=True):
        result = check_source(utils.read_text() + "\n", str(utils), settings, ProjectIndex())
    assert not result.errors, result.errors
    return rows_of(result.diagnostics)


def _kept_spelling(tmp_path: Path, cache: Path, asker: Path | None = None) -> list[str]:
    """The modules kept as spelling `dynamic_quant` in the shard of `asker` (the file whose
    check asked: tests/utils.py by default)."""
    from qlint.summary_cache import SummaryStore

    settings = replace(settings_for(SELECT), root=tmp_path / "repo", cache_dir=cache)
    asker = asker or tmp_path / "repo" / "tests" / "utils.py"
    spelled = (SummaryStore.for_settings(settings).get_answers(str(asker)) or {}).get("spelled", {})
    return [entry[-1][0][0] for key, entry in spelled.items() if key[1] == "dynamic_quant"]


def test_a_whole_tree_run_leaves_the_module_found_for_the_first_edited_check(tmp_path, scan_reads):
    utils = _tree_repo(tmp_path)
    cache = tmp_path / "cache"
    try:
        assert _tree_run(tmp_path / "repo", cache) == [CONVERT_ROW]
        assert scan_reads
        scan_reads.clear()
        assert _edited_check(utils, cache) == [CONVERT_ROW]
        assert scan_reads == []
    finally:
        _new_process()


def test_the_first_edited_check_searches_again_once_the_module_a_tree_run_found_changed(tmp_path, scan_reads):
    utils = _tree_repo(tmp_path)
    cache = tmp_path / "cache"
    try:
        assert _tree_run(tmp_path / "repo", cache) == [CONVERT_ROW]
        assert _kept_spelling(tmp_path, cache) == [str(tmp_path / "repo" / "tests" / "test_quant.py")]
        _rewrite(tmp_path / "repo" / "tests" / "test_quant.py", NO_CALLER)
        scan_reads.clear()
        assert _edited_check(utils, cache) == []
        assert str(tmp_path / "repo" / "tests" / "test_quant.py") in scan_reads
    finally:
        _new_process()


def test_a_whole_tree_run_writes_only_the_small_tables_and_reads_none(tmp_path, monkeypatch):
    """What a tree run asks by the thousand (what an imported name is bound to: `kinds`; the
    helper search's answers) a check of one file would load whole: it is not written in the
    shards of the files checked, only in the run's own (`kept_state.RUN`), decoded a module
    at a time; and nothing kept is read while checking."""
    from qlint.summary_cache import SummaryStore

    utils = _tree_repo(tmp_path)
    cache = tmp_path / "cache"
    asked = []
    flushing = []
    get_answers, flush = SummaryStore.get_answers, kept_shards.flush
    monkeypatch.setattr(SummaryStore, "get_answers", lambda self, asker: asked.append((asker, bool(flushing))) or None)
    monkeypatch.setattr(kept_shards, "flush", lambda: flushing.append(True) or flush())
    try:
        assert _tree_run(tmp_path / "repo", cache) == [CONVERT_ROW]
        monkeypatch.setattr(SummaryStore, "get_answers", get_answers)
        settings = replace(settings_for(SELECT), root=tmp_path / "repo", cache_dir=cache)
        kept = SummaryStore.for_settings(settings).get_answers(str(utils))
        assert set(kept) == {"spelled"}
        # Nothing was read while checking: `get_answers` was asked by the flush alone, once
        # for the shard of the one file whose check asked who spells the name (and for the
        # run's shard, when it has answers to merge into it).
        assert all(flushed for _, flushed in asked)
        assert [asker for asker, _ in asked if asker != kept_state.RUN] == [str(utils)]
        assert _edited_check(utils, cache) == [CONVERT_ROW]
    finally:
        _new_process()


def test_a_worker_of_a_tree_run_writes_what_it_found_as_it_exits(tmp_path, store):
    import multiprocessing

    utils = _tree_repo(tmp_path)
    kept_answers.use(store, only_small=True)

    def work() -> None:  # as `worker_process.init_worker` does, then a check
        kept_shards.flush_at_worker_exit()
        check_file(utils, SELECT)

    worker = multiprocessing.get_context("fork").Process(target=work)
    worker.start()
    worker.join()
    assert worker.exitcode == 0
    assert [key for key in store.get_answers(str(utils))["spelled"] if key[1] == "dynamic_quant"]


def test_a_tree_run_keeps_the_module_found_for_every_file_whose_check_asked(tmp_path, scan_reads):
    """Two helper modules spell the same helper, which test_quant.py calls: the tree run's
    check of the first searches the project for the name, the second's takes the answer from
    the memo. Each file's shard holds it, so the first edited check of either reads no module
    for it; a file whose check asked nothing has no shard."""
    utils = _tree_repo(tmp_path)
    other = old_file(utils.parent / "utils_b.py", _helper("dynamic_quant"))
    cache = tmp_path / "cache"
    try:
        assert _tree_run(tmp_path / "repo", cache) == [CONVERT_ROW, CONVERT_ROW]
        assert _kept_spelling(tmp_path, cache, utils) == _kept_spelling(tmp_path, cache, other) != []
        assert _kept_spelling(tmp_path, cache, tmp_path / "repo" / "lib_0.py") == []
        for edited in (utils, other):
            scan_reads.clear()
            assert _edited_check(edited, cache) == [CONVERT_ROW]
            assert scan_reads == []
    finally:
        _new_process()

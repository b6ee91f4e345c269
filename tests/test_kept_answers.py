"""QL101/QL102's answers about other modules are kept between runs (`kept_answers`): a new
process takes an answer only while every module it was read from has the same content and
name, and every module lookup made on the way finds the same file; else it works the answer
out again, and the findings are the ones a run without the store gives."""

from __future__ import annotations

import os
import time

import pytest

from qlint.analysis.graphs import forwarding_memos, forwarding_texts, kept_answers
from qlint.analysis.names import content_keys
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from qlint.value_classes import replace
from tests.conftest import kept_store, old_file, old_package, settings_for
from tests.test_ql102_imported_wrappers import GRAPH_UTILS

PLAIN = "def insert_op(graph, op, args):\n    return None\n"
PASSES = (
    "import torch\nfrom pkg.graph_utils import insert_op\n\n\n"
    "def rewrite(gm, node):\n    insert_op(gm.graph, torch.ops.aten.relu, (node,))\n"
)
_MEMOS = (
    forwarding_memos.IMPORTED,
    forwarding_memos.SHARED,
    forwarding_memos.LINKS_OF,
    forwarding_memos.PASSING,
    forwarding_texts._TEXTS,
    forwarding_texts._NAMES,
    forwarding_texts._CLASSES,
    forwarding_texts._WRAPPERS,
    forwarding_texts._TEXTS_READ,
)


def _new_process() -> None:
    """Forget what this process learned, as a new `qlint` run starts without it: every kept
    table's memo too (what an earlier test's checks worked out is written down by the next
    flush, now that a module it read is hashed then)."""
    for memo in _MEMOS:
        memo.clear()
    for memo, _ in kept_answers._STATE.memos.values():
        memo.clear()
    content_keys._DIGESTS.clear()
    kept_answers.forget()


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from kept_store(tmp_path, monkeypatch, _new_process)


def _project(tmp_path, utils: str):
    pkg = old_package(tmp_path, graph_utils=utils, passes=PASSES)
    return pkg, pkg / "passes.py"


def _run(path) -> list[int]:
    """One run's check of `path` (the file edited: its own text is given), and what it keeps."""
    result = check_source(PASSES, str(path), settings_for(("QL102",)), ProjectIndex())
    assert not result.errors, result.errors
    kept_answers.flush()
    return [d.range.start.row for d in result.diagnostics]


def _without_store(path) -> list[int]:
    kept_answers.use(None)
    _new_process()
    try:
        result = check_source(PASSES, str(path), settings_for(("QL102",)), ProjectIndex())
    finally:
        _new_process()
        kept_answers.use(ProjectIndex.store)
    return [d.range.start.row for d in result.diagnostics]


def _taken(utils) -> list[bool]:
    """Whether the answer about `insert_op` of `utils` came from the store (True) or was
    worked out (False) in this process: asked per module file and per import root."""
    about = {(os.path.realpath(utils), "insert_op"), ("pkg.graph_utils.insert_op", os.path.dirname(utils.parent))}
    found = [id(v) in kept_answers._STATE.taken for k, v in forwarding_memos.IMPORTED.items() if k[:2] in about]
    return sorted(set(found))


def test_a_new_process_takes_the_answer_an_earlier_run_kept(tmp_path, store):
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    assert _run(passes) == [6]
    assert _taken(pkg / "graph_utils.py") == [False]  # worked out here
    _new_process()
    assert _run(passes) == [6]
    assert _taken(pkg / "graph_utils.py") == [True]


def test_a_changed_module_is_read_again(tmp_path, store):
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    assert _run(passes) == [6]
    old_file(pkg / "graph_utils.py", PLAIN)  # no longer a wrapper (and an old mtime again)
    _new_process()
    assert _run(passes) == []
    assert _taken(pkg / "graph_utils.py") == [False]
    assert _without_store(passes) == []
    old_file(pkg / "graph_utils.py", GRAPH_UTILS)  # a wrapper again
    _new_process()
    assert _run(passes) == [6] == _without_store(passes)


def test_a_module_changed_to_the_same_size_is_read_again(tmp_path, store):
    # The stat keeps its size; the mtime moves: the content hash tells. (An answer "no helper"
    # taken stale would lose the finding.)
    renamed = GRAPH_UTILS.replace("call_function", "call_functiom")
    assert len(renamed) == len(GRAPH_UTILS)
    pkg, passes = _project(tmp_path, renamed)
    assert _run(passes) == []
    old_file(pkg / "graph_utils.py", GRAPH_UTILS)
    _new_process()
    assert _run(passes) == [6]
    assert _without_store(passes) == [6]


def test_a_touched_module_keeps_its_answer(tmp_path, store):
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    assert _run(passes) == [6]
    old_file(pkg / "graph_utils.py", GRAPH_UTILS)  # rewritten as it was: a new mtime
    _new_process()
    assert _run(passes) == [6]
    assert _taken(pkg / "graph_utils.py") == [True]


def test_a_module_that_now_shadows_the_one_found_is_read(tmp_path, store):
    # `pkg.graph_utils` was the package, which inserts nothing; a module file of the same name,
    # made later, is what the lookup finds first now, and it is a wrapper.
    pkg = tmp_path / "pkg"
    (pkg / "graph_utils").mkdir(parents=True)
    old_file(pkg / "__init__.py", "")
    old_file(pkg / "graph_utils" / "__init__.py", PLAIN)
    passes = old_file(pkg / "passes.py", PASSES)
    assert _run(passes) == []
    old_file(pkg / "graph_utils.py", GRAPH_UTILS)
    _new_process()
    assert _run(passes) == [6]
    assert _without_store(passes) == [6]


def test_a_module_found_nowhere_then_made_is_read(tmp_path, store):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    old_file(pkg / "__init__.py", "")
    passes = old_file(pkg / "passes.py", PASSES)
    assert _run(passes) == []
    old_file(pkg / "graph_utils.py", GRAPH_UTILS)
    _new_process()
    assert _run(passes) == _without_store(passes) == [6]


def test_answers_read_from_a_just_modified_module_are_not_kept(tmp_path, store):
    # Modified within the racy window of this process's start: its stat may not tell a second
    # edit within the same tick, so nothing read from it is written down.
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    (pkg / "graph_utils.py").write_text(GRAPH_UTILS)
    now = time.time_ns()
    os.utime(pkg / "graph_utils.py", ns=(now, now))
    assert _run(passes) == [6]
    _new_process()
    assert _run(passes) == [6]
    assert _taken(pkg / "graph_utils.py") == [False]


def _checked_without_hashing(path) -> list[int]:
    """`_run`, as a check that read the other modules' texts without hashing them (the helper
    search reads their imports and calls from the texts: torch's symbolic_shapes.py, 123 of
    them): what it knows of their hashes is forgotten before the answers are written down."""
    result = check_source(PASSES, str(path), settings_for(("QL102",)), ProjectIndex())
    assert not result.errors, result.errors
    content_keys._DIGESTS.clear()
    kept_answers.flush()
    return [d.range.start.row for d in result.diagnostics]


def test_answers_from_modules_read_without_their_hash_are_kept(tmp_path, store):
    # Written with the hash worked out at the end: without it the next process, and every one
    # after, worked the answer out again.
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    assert _checked_without_hashing(passes) == [6]
    utils = os.path.realpath(pkg / "graph_utils.py")
    ((_, trail),) = [v for k, v in store.get_answers()["imported"].items() if k[:2] == (utils, "insert_op")]
    assert (utils, content_keys.content_key({}, utils), content_keys.digest({}, utils), "pkg.graph_utils") in trail
    _new_process()
    assert _run(passes) == [6]
    assert _taken(pkg / "graph_utils.py") == [True]


def test_a_module_changed_after_it_was_read_is_not_hashed_for_its_answers(tmp_path, store):
    # Changed between the read and the end of the check (to a module that inserts nothing):
    # its hash now is not the content the answer was read from, so the answer is not written,
    # and the next process reads the module again.
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    result = check_source(PASSES, str(passes), settings_for(("QL102",)), ProjectIndex())
    assert [d.range.start.row for d in result.diagnostics] == [6]
    content_keys._DIGESTS.clear()
    old_file(pkg / "graph_utils.py", PLAIN)
    kept_answers.flush()
    utils = os.path.realpath(pkg / "graph_utils.py")
    kept = (store.get_answers() or {}).get("imported", {})
    assert not [k for k in kept if k[:2] == (utils, "insert_op")]
    _new_process()
    assert _run(passes) == []
    assert _taken(pkg / "graph_utils.py") == [False]
    assert _without_store(passes) == []


def test_digest_at_hashes_a_file_only_while_it_has_the_stat_asked(tmp_path):
    path = str(old_file(tmp_path / "m.py", PLAIN))
    key = content_keys.content_key({}, path)
    content_keys.forget_digest(path)
    assert content_keys.digest_at(path, key) == content_keys.content_sha256_hex(PLAIN.encode())
    content_keys.forget_digest(path)
    old_file(tmp_path / "m.py", GRAPH_UTILS)  # another stat now
    assert content_keys.digest_at(path, key) is None
    assert content_keys.digest_at(str(tmp_path / "absent.py"), key) is None


def test_a_damaged_answers_file_is_as_if_absent(tmp_path, store):
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    assert _run(passes) == [6]
    (kept,) = store.directory.glob("*.answers")
    kept.write_bytes(kept.read_bytes()[:-7])
    _new_process()
    assert _run(passes) == [6]
    assert _taken(pkg / "graph_utils.py") == [False]


def test_kept_trails_name_modules_lookups_and_no_buffer(tmp_path, store):
    # What is written for each answer: its value, then per module read its stat, hash and
    # dotted name, and per lookup the file found.
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    _run(passes)
    saved = store.get_answers()
    utils = os.path.realpath(pkg / "graph_utils.py")
    ((value, trail),) = [v for k, v in saved["imported"].items() if k[:2] == (utils, "insert_op")]
    assert value is True
    modules = [e for e in trail if len(e) == 4]
    assert (utils, content_keys.content_key({}, utils), content_keys.digest({}, utils), "pkg.graph_utils") in modules
    assert ((("pkg.graph_utils", str(tmp_path)), utils)) in [e for e in trail if len(e) == 2]


def test_only_a_check_of_one_buffer_keeps_answers(tmp_path):
    # A whole-tree run asks thousands of answers, which a check of one file would load whole:
    # it reads none and writes only the small tables (`named_texts`' tests).
    from qlint.summary_cache import summary_store

    settings = replace(settings_for(("QL102",)), cache_dir=tmp_path / "cache")
    with summary_store(settings, True):
        assert not kept_answers.keeping()
        assert kept_answers.saved("imported", ("x", "y")) is None
    with summary_store(settings, True, answers=True):
        assert kept_answers.keeping()
    assert kept_answers._STATE.store is None


def test_a_run_that_checks_one_file_keeps_answers_and_a_wider_one_does_not(tmp_path, monkeypatch):
    # `qlint check FILE` after an edit (pre-commit's run) is a check of one buffer that happens
    # to be saved; a run over several files would write down every answer it asked for.
    from qlint.runner import run_check
    from qlint.summary_cache import SummaryStore

    pkg, passes = _project(tmp_path, GRAPH_UTILS)

    def run(paths, cache: str) -> tuple[list[int], dict | None]:
        settings = replace(settings_for(("QL102",)), root=tmp_path, cache_dir=tmp_path / cache)
        _new_process()
        result = run_check([str(p) for p in paths], settings)
        return [d.range.start.row for r in result.results for d in r.diagnostics], SummaryStore.for_settings(
            settings
        ).get_answers()

    try:
        assert run([passes, pkg / "graph_utils.py"], "wide") == ([6], None)
        rows, kept = run([passes], "one")
        assert rows == [6]
        assert kept and [key for key in kept.get("imported", {}) if key[1] == "insert_op"]
        # The next one-file run, after an edit of the file, takes what was kept and finds the same.
        taken = []
        monkeypatch.setattr(kept_answers, "took", lambda entry: taken.append(entry))
        old_file(passes, PASSES + "\n")
        assert run([passes], "one")[0] == [6]
        assert taken
    finally:
        _new_process()

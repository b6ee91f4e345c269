"""QL101/QL102's answers about other modules are kept between runs (`kept_answers`): a new
process takes an answer only while every module it was read from has the same content and
name, and every module lookup made on the way finds the same file; else it works the answer
out again, and the findings are the ones a run without the store gives."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from qlint.analysis.graphs import forwarding_memos, forwarding_texts, kept_answers, kept_shards, kept_state
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
    for memo, _ in kept_state.STATE.memos.values():
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
    kept_shards.flush()
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
    found = [id(v) in kept_state.STATE.taken for k, v in forwarding_memos.IMPORTED.items() if k[:2] in about]
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
    kept_shards.flush()
    return [d.range.start.row for d in result.diagnostics]


def test_answers_from_modules_read_without_their_hash_are_kept(tmp_path, store):
    # Written with the hash worked out at the end: without it the next process, and every one
    # after, worked the answer out again.
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    assert _checked_without_hashing(passes) == [6]
    utils = os.path.realpath(pkg / "graph_utils.py")
    ((_, trail),) = [v for k, v in store.get_answers(str(passes))["imported"].items() if k[:2] == (utils, "insert_op")]
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
    kept_shards.flush()
    utils = os.path.realpath(pkg / "graph_utils.py")
    kept = (store.get_answers(str(passes)) or {}).get("imported", {})
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
    for kept in store.directory.glob("answers/*.answers"):  # the file's shard, and the pool
        kept.write_bytes(kept.read_bytes()[:-7])
    _new_process()
    assert _run(passes) == [6]
    assert _taken(pkg / "graph_utils.py") == [False]


def test_kept_trails_name_modules_lookups_and_no_buffer(tmp_path, store):
    # What is written for each answer: its value, then per module read its stat, hash and
    # dotted name, and per lookup the file found.
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    _run(passes)
    saved = store.get_answers(str(passes))
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
    assert kept_state.STATE.store is None


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
        ).get_answers(str(passes))

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


# -- one shard per file checked -----------------------------------------------------------------


def _answers_read(monkeypatch, store) -> list[str]:
    """The shards of answers read from `store` from now on (`checksummed_files.read_marshalled`)."""
    from qlint import checksummed_files

    read = checksummed_files.read_marshalled
    seen: list[str] = []

    def counted(path, header):
        if Path(path).is_relative_to(store.directory / "answers"):
            seen.append(str(path))
        return read(path, header)

    monkeypatch.setattr(checksummed_files, "read_marshalled", counted)
    return seen


def _shard(store, asker) -> str:
    from qlint import checksummed_files

    return str(store.directory / "answers" / checksummed_files.name_for(str(asker), ".answers"))


def _check(path) -> list[int]:
    """A new process's check of `path` (as an editor hands it over), and what it keeps."""
    _new_process()
    result = check_source(path.read_text(), str(path), settings_for(("QL102",)), ProjectIndex())
    assert not result.errors, result.errors
    kept_shards.flush()
    return [d.range.start.row for d in result.diagnostics]


def test_a_check_reads_and_writes_only_the_shard_of_the_file_it_checks(tmp_path, store, monkeypatch):
    # Six files edited and checked one after the other, each asking about the same wrapper:
    # each check wrote its own shard (and the first, the pool). The next check of one of them
    # reads that shard alone, takes its answers, and writes nothing (it learned nothing new).
    pkg, _ = _project(tmp_path, GRAPH_UTILS)
    edited = [old_file(pkg / f"passes_{i}.py", PASSES) for i in range(6)]
    for path in edited:
        assert _check(path) == [6]
    assert sorted(p.name for p in (store.directory / "answers").glob("*.answers")) == sorted(
        Path(_shard(store, p)).name for p in [*edited, kept_state.POOL]
    )
    read = _answers_read(monkeypatch, store)
    written = []
    monkeypatch.setattr(store, "put_answers", lambda asker, answers: written.append(asker))
    assert _check(edited[3]) == [6]
    assert read == [_shard(store, edited[3])]
    assert _taken(pkg / "graph_utils.py") == [True]
    assert written == []


def test_a_file_checked_for_the_first_time_takes_from_the_pool_and_keeps_it(tmp_path, store, monkeypatch):
    # Its shard has nothing yet: what it asks is looked up in the pool, which the check of
    # another file filled, and what it took there is written in its own shard, which the next
    # check of it reads alone.
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    assert _check(passes) == [6]
    other = old_file(pkg / "other.py", PASSES)
    read = _answers_read(monkeypatch, store)
    assert _check(other) == [6]
    assert _taken(pkg / "graph_utils.py") == [True]
    # Its shard, then the pool; at the end both merged into (it learned something too: a fact
    # about passes.py, which the first check asked nothing about, being of it).
    own, pool = _shard(store, other), _shard(store, kept_state.POOL)
    assert read == [own, pool, own, pool]
    pooled = kept_state.STATE.pooled
    kept = store.get_answers(str(other))
    assert pooled and all(kept[name][key] == entry for (name, key), entry in pooled.items())
    read.clear()
    assert _check(other) == [6]
    assert _taken(pkg / "graph_utils.py") == [True]
    assert read == [_shard(store, other)]


def test_the_pool_keeps_the_most_recently_learned_answers(tmp_path, store, monkeypatch):
    memo: dict = {}
    monkeypatch.setitem(kept_state.STATE.memos, "test-pool", (memo, lambda key, entry: entry[:-1]))
    monkeypatch.setattr(kept_shards, "_POOL_MAX", 3)
    for i in range(5):
        kept_answers.forget()
        kept_answers.checking(str(tmp_path / f"m{i}.py"))
        memo.clear()
        memo[i] = (True, ())
        if i == 4:
            memo[1] = (True, ())  # learned again: the most recent now
        kept_shards.flush()
    assert list(store.get_answers(kept_state.POOL)) == [("test-pool", k) for k in (3, 4, 1)]
    assert store.get_answers(str(tmp_path / "m4.py")) == {"test-pool": {4: (True, ()), 1: (True, ())}}


def test_a_shard_of_another_file_or_damaged_is_as_if_absent(tmp_path, store):
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    assert _check(passes) == [6]
    other = old_file(pkg / "other.py", PASSES)
    Path(_shard(store, other)).write_bytes(Path(_shard(store, passes)).read_bytes())  # names passes.py
    assert store.get_answers(str(other)) is None
    os.unlink(_shard(store, kept_state.POOL))
    assert _check(other) == [6]
    assert _taken(pkg / "graph_utils.py") == [False]
    os.unlink(_shard(store, kept_state.POOL))
    kept = Path(_shard(store, passes))
    kept.write_bytes(kept.read_bytes()[:-7])
    assert store.get_answers(str(passes)) is None
    assert _check(passes) == [6]
    assert _taken(pkg / "graph_utils.py") == [False]


def test_a_full_shard_starts_again_from_what_the_check_took_and_learned(tmp_path, store, monkeypatch):
    _, passes = _project(tmp_path, GRAPH_UTILS)
    assert _check(passes) == [6]
    answers = store.get_answers(str(passes))
    stale = {("stale", i): (True, ()) for i in range(40)}
    answers["imported"].update(stale)
    store.put_answers(str(passes), answers)
    monkeypatch.setattr(kept_shards, "_MAX", sum(map(len, answers.values())))
    # The edit asks for one answer more (what `first_user` forwards): the shard is full.
    edited = PASSES.replace("import insert_op", "import first_user, insert_op")
    old_file(passes, edited + "\n\ndef first(gm, node):\n    insert_op(gm.graph, first_user(node), (node,))\n")
    assert _check(passes) == [6]
    taken = {
        (name, key)
        for name, (memo, _) in kept_state.STATE.memos.items()
        for key, entry in memo.items()
        if id(entry) in kept_state.STATE.taken
    }
    now = store.get_answers(str(passes))
    kept = {(name, key) for name, table in now.items() for key in table}
    assert taken and taken < kept  # what the check took, and more: what it learned
    assert [key for key in stale if ("imported", key) in kept] == []


def test_two_workers_flushing_into_one_shard_keep_both_answers(tmp_path, store, monkeypatch):
    # Two processes that checked the same file (an editor's check beside pre-commit's) end
    # together: the second merges into the shard under the lock, after the first wrote it.
    import multiprocessing
    import time

    memo: dict = {}
    monkeypatch.setitem(kept_state.STATE.memos, "test-workers", (memo, lambda key, entry: entry[:-1]))
    put = type(store).put_answers

    def slow(self, asker, answers):
        time.sleep(0.3)  # another flush reads the shard meanwhile, unless the lock holds it off
        put(self, asker, answers)

    monkeypatch.setattr(type(store), "put_answers", slow)
    asker = str(tmp_path / "checked.py")

    def work(key) -> None:
        kept_answers.checking(asker)
        memo[key] = (True, ())
        kept_shards.flush()

    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=work, args=(key,)) for key in ("one", "two")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert [worker.exitcode for worker in workers] == [0, 0]
    assert store.get_answers(asker)["test-workers"] == {"one": (True, ()), "two": (True, ())}


def test_a_tree_runs_workers_write_the_shards_of_the_files_each_checked(tmp_path, store, monkeypatch):
    import multiprocessing

    memo: dict = {}
    monkeypatch.setitem(kept_state.STATE.memos, "test-small", (memo, lambda key, entry: entry[:-1]))
    monkeypatch.setattr(kept_state.STATE, "small", {"test-small"})
    kept_answers.use(store, only_small=True)
    shared = ("root", "name")

    def work(checked: list[str]) -> None:  # each asks for the shared answer and one of its own
        for path in checked:
            kept_answers.checking(path)
            kept_answers.asked("test-small", shared)
            memo.setdefault(shared, (path, ()))  # the first works it out, the next take it
            kept_answers.asked("test-small", path)
            memo[path] = (True, ())
        kept_shards.flush()

    files = [[str(tmp_path / f"{w}_{i}.py") for i in range(3)] for w in "ab"]
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=work, args=(checked,)) for checked in files]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert [worker.exitcode for worker in workers] == [0, 0]
    for checked in files:
        for path in checked:
            assert store.get_answers(path)["test-small"] == {shared: (checked[0], ()), path: (True, ())}
    assert memo == {}  # (the workers' memos were their own)


def test_the_least_recently_used_shards_are_pruned(tmp_path, store):
    legacy = store.directory / "helper.answers"
    store.directory.mkdir(parents=True)
    legacy.write_bytes(b"qlint-answers-1\n")
    askers = [str(tmp_path / f"m{i}.py") for i in range(8)]
    for i, asker in enumerate(askers):
        store.put_answers(asker, {"t": {"k": (i, ())}})
        os.utime(_shard(store, asker), (1_000_000 + i, 1_000_000 + i))
    assert store.get_answers(askers[0])  # read: in use again
    store.prune_answers(most=8)
    assert all(os.path.exists(_shard(store, a)) for a in askers) and not legacy.exists()
    store.prune_answers(most=6)  # down to 3/4 of 6: the oldest go, not the one just read
    assert [a for a in askers if os.path.exists(_shard(store, a))] == [askers[0], *askers[5:]]
    size = os.path.getsize(_shard(store, askers[0]))
    store.prune_answers(most_bytes=2 * size)  # and by their bytes together
    assert [a for a in askers if os.path.exists(_shard(store, a))] == [askers[0]]


def test_a_new_shard_prunes_now_and_then(tmp_path, store, monkeypatch):
    from qlint import summary_cache

    pruned = []
    monkeypatch.setattr(type(store), "prune_answers", lambda self: pruned.append(self))
    monkeypatch.setattr(summary_cache, "_PRUNE_ONE_IN", 1)
    store.put_answers(str(tmp_path / "a.py"), {})
    store.put_answers(str(tmp_path / "a.py"), {})  # not a new shard
    assert pruned == [store]


def test_the_pool_keeps_to_its_bytes_too(tmp_path, store, monkeypatch):
    memo: dict = {}
    monkeypatch.setitem(kept_state.STATE.memos, "test-pool", (memo, lambda key, entry: entry[:-1]))
    monkeypatch.setattr(kept_shards, "_POOL_BYTES", 3_000)
    kept_answers.checking(str(tmp_path / "m.py"))
    memo.update((i, (f"{i:0100d}", ())) for i in range(100))  # ~100 bytes each
    kept_shards.flush()
    pool = store.get_answers(kept_state.POOL)
    assert 0 < len(pool) < 30 and list(pool)[-1] == ("test-pool", 99)  # the most recent kept
    assert len(store.get_answers(str(tmp_path / "m.py"))["test-pool"]) == 100  # the shard whole


def test_a_flush_names_each_module_once_however_many_trails_hold_it(tmp_path, store, monkeypatch):
    # Answers of one check rest on the same modules (the import root's answer and the module
    # file's, and each table's): a module's dotted name is worked out once, as a kept trail is
    # checked (`valid_trail`), and written the same.
    from qlint.analysis.names import modules

    named = []
    name_for = modules.module_name_for
    monkeypatch.setattr(modules, "module_name_for", lambda path: named.append(path) or name_for(path))
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    assert _run(passes) == [6]
    utils = os.path.realpath(pkg / "graph_utils.py")
    saved = store.get_answers(str(passes))
    trails = [entry[-1] for table in saved.values() for entry in table.values()]
    held = [e for trail in trails for e in trail if len(e) == 4 and e[0] == utils]
    assert len(held) > 1  # more than one answer rests on it
    assert {e[3] for e in held} == {"pkg.graph_utils"}
    assert named.count(utils) == 1


# -- what a run over many files keeps for the first check of one file (`kept_state.RUN`) ------


def _tree_run(path) -> list[int]:
    """A run over many files' check of `path` (it reads no answer; the helper search's answers
    worked out without the wrapper-name index go in the shard `RUN`), then that run's end."""
    kept_answers.use(ProjectIndex.store, only_small=True)
    try:
        result = check_source(PASSES, str(path), settings_for(("QL102",)), ProjectIndex())
        assert not result.errors, result.errors
        kept_shards.flush()
    finally:
        _new_process()
        kept_answers.use(ProjectIndex.store)
    return [d.range.start.row for d in result.diagnostics]


def test_a_tree_run_keeps_the_helper_search_for_the_first_check_of_one_file(tmp_path, store):
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    assert _tree_run(passes) == [6]
    assert store.get_answers(str(passes)) is None  # nothing in the file's own shard
    assert os.path.realpath(pkg / "graph_utils.py") in store.get_answers(kept_state.RUN)["imported"]
    assert _run(passes) == [6]
    assert _taken(pkg / "graph_utils.py") == [True]


def test_a_helper_changed_since_the_tree_run_is_searched_again(tmp_path, store):
    pkg, passes = _project(tmp_path, GRAPH_UTILS)
    assert _tree_run(passes) == [6]
    old_file(pkg / "graph_utils.py", PLAIN)
    assert _run(passes) == [] == _without_store(passes)
    assert True not in _taken(pkg / "graph_utils.py")


def test_answers_worked_out_with_the_wrapper_index_are_not_written_for_one_file_checks():
    # A check of one file has no index: what a run found with one (its chains shorter) is
    # never asked by it, and is not written.
    from qlint.analysis.graphs.forwarding_memos import _run_group

    assert _run_group(("pkg.graph_utils.insert_op", "/root", ("ql102", True))) == "pkg.graph_utils.insert_op"
    assert _run_group(("pkg.graph_utils.insert_op", "/root", ("ql102", False))) is None
    assert _run_group(("chain", "/root/pkg/a.py", "ql102", True)) == "/root/pkg/a.py"
    assert _run_group(("chain", "/root/pkg/a.py", "ql102", False)) is None
    assert _run_group(("base", "pkg.a.Base", "/root", ("ql102", True))) == "pkg.a.Base"

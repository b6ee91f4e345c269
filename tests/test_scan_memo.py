"""What the project scans learn about each module is kept between runs (`scan_memo`), and
trusted only while the module keeps its stat: a run after an edit elsewhere reads only what
changed, and finds what a change to another module does to the answer."""

from __future__ import annotations

import os
import time

import pytest

from qlint.analysis import project_files, scan_memo
from qlint.analysis.flow import project_search, subclassed_methods
from qlint.analysis.graphs import project_scan
from qlint.analysis.names import content_keys
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from qlint.rules import op_spellings, packet_scan
from qlint.summary_cache import SummaryStore
from tests.conftest import old_file, settings_for
from tests.test_ql102_consumers import ADD, PIPELINE, REMOVE

PAST = time.time_ns() - 3600 * 10**9


def _new_process() -> None:
    """Forget what this process learned, as a new `qlint` run starts without it."""
    scan_memo.forget()
    content_keys._DIGESTS.clear()
    project_files._DIRS.clear()
    project_scan._PROJECTS.clear()
    packet_scan._PARSED.clear()
    packet_scan._PARSED_FOR[0] = None
    project_search._SCANS.clear()
    subclassed_methods._SUBCLASSING.clear()


@pytest.fixture
def store(tmp_path, monkeypatch):
    store = SummaryStore(tmp_path / "cache")
    monkeypatch.setattr(ProjectIndex, "store", store)
    _new_process()
    yield store
    _new_process()


def _use(root: str, store) -> None:
    listed = scan_memo.use_root(root, store, lambda: project_files.saved_listings(root))
    if listed is not None:
        project_files.restore_listings(root, listed)


def _package(root, **modules) -> str:
    pkg = root / "pkg"
    pkg.mkdir()
    old_file(pkg / "__init__.py", "")
    for name, text in modules.items():
        old_file(pkg / f"{name}.py", text)
    for directory in (pkg, root):
        os.utime(directory, ns=(PAST, PAST))
    return str(pkg)


def _ql102(path: str) -> list[int]:
    """A check of the file as `qlint check -` makes it: the buffer stands in for the file."""
    with open(path) as fh:
        text = fh.read()
    result = check_source(text, path, settings_for(("QL102",)), ProjectIndex({path: text}))
    assert not result.errors, result.errors
    scan_memo.flush()
    return [d.range.start.row for d in result.diagnostics]


def _reads(monkeypatch) -> list[str]:
    """Python modules opened from now on."""
    opened: list[str] = []
    real = open

    def counting(file, *args, **kwargs):
        if str(file).endswith(".py"):
            opened.append(os.path.basename(str(file)))
        return real(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counting)
    return opened


UNRELATED = "import torch\n\n\ndef helper(x):\n    return x + 1\n"


def test_a_later_run_reads_only_the_modules_that_may_answer(tmp_path, store, monkeypatch):
    pkg = _package(tmp_path, add=ADD, remove=REMOVE, pipeline=PIPELINE.format(between="pass"), other=UNRELATED)
    add = os.path.join(pkg, "add.py")
    assert _ql102(add) == []  # its own pass consumes what it inserts
    _new_process()
    opened = _reads(monkeypatch)
    assert _ql102(add) == []
    # The unrelated module holds neither the op nor a name of add.py: known from the last run.
    assert "other.py" not in opened
    assert "remove.py" in opened  # the consumer is parsed again: its sites decide


def test_a_change_to_another_module_still_changes_the_answer(tmp_path, store):
    pkg = _package(tmp_path, add=ADD, remove=REMOVE, pipeline=PIPELINE.format(between="pass"), other=UNRELATED)
    add = os.path.join(pkg, "add.py")
    assert _ql102(add) == []
    # The pipeline now re-exports between the insertion and the consumer: a finding.
    old_file(tmp_path / "pkg" / "pipeline.py", PIPELINE.format(between="m = export(m, (x,)).module()"))
    os.utime(os.path.join(pkg, "pipeline.py"), ns=(PAST + 10**9, PAST + 10**9))
    _new_process()
    assert _ql102(add) != []


def test_a_module_created_later_is_listed_and_read(tmp_path, store):
    pkg = _package(tmp_path, add=ADD, pipeline=PIPELINE.format(between="pass").replace("m = RemovePass()(m)", ""))
    add = os.path.join(pkg, "add.py")
    assert _ql102(add) != []  # nothing consumes the packet
    _new_process()
    # The consumer appears: the directory's mtime moves, so its saved listing is not used.
    (tmp_path / "pkg" / "remove.py").write_text(REMOVE)
    _new_process()
    assert _ql102(add) == []


def test_answers_and_digests_survive_the_process_only_for_the_same_stat(tmp_path, store):
    path = str(old_file(tmp_path / "m.py", "x = 1\n"))
    key = content_keys.content_key({}, path)
    _use(str(tmp_path), store)
    scan_memo.note(path, "q", key, False)
    scan_memo.flush()
    _new_process()
    _use(str(tmp_path), store)
    assert scan_memo.answers(path, key, ["q", "other"]) == [False, None]
    os.utime(path, ns=(PAST + 10**9, PAST + 10**9))
    assert scan_memo.answers(path, content_keys.content_key({}, path), ["q"]) == [None]


def test_a_saved_digest_is_used_without_reading_the_module(tmp_path, store, monkeypatch):
    path = str(old_file(tmp_path / "m.py", "x = 1\n"))
    key = content_keys.content_key({}, path)
    _use(str(tmp_path), store)
    digest = content_keys.digest({}, path, key)
    scan_memo.flush()
    _new_process()
    _use(str(tmp_path), store)
    opened = _reads(monkeypatch)
    assert content_keys.digest({}, path, key) == digest
    assert opened == []


def test_a_recently_modified_module_is_not_written_down(tmp_path, store):
    # Another edit within the same mtime tick could keep the stat and change the content.
    path = tmp_path / "m.py"
    path.write_text("x = 1\n")
    key = content_keys.content_key({}, str(path))
    _use(str(tmp_path), store)
    scan_memo.note(str(path), "q", key, False)
    scan_memo.flush()
    _new_process()
    _use(str(tmp_path), store)
    assert scan_memo.answers(str(path), key, ["q"]) == [None]


def test_a_run_that_learns_nothing_writes_nothing(tmp_path, store, monkeypatch):
    path = str(old_file(tmp_path / "m.py", "x = 1\n"))
    key = content_keys.content_key({}, path)
    _use(str(tmp_path), store)
    scan_memo.note(path, "q", key, False)
    scan_memo.flush()
    _new_process()
    _use(str(tmp_path), store)
    written: list[str] = []
    monkeypatch.setattr(store, "put_scan", lambda root, payload: written.append(root))
    scan_memo.note(path, "q", key, False)  # known already
    scan_memo.flush()
    assert written == []


def test_what_another_process_wrote_meanwhile_is_kept(tmp_path, store):
    a = str(old_file(tmp_path / "a.py", "x = 1\n"))
    b = str(old_file(tmp_path / "b.py", "y = 1\n"))
    ka, kb = content_keys.content_key({}, a), content_keys.content_key({}, b)
    _use(str(tmp_path), store)
    scan_memo.note(a, "q", ka, False)
    scan_memo.flush()
    # Another worker, started from the same file, learned about b and wrote first.
    _new_process()
    _use(str(tmp_path), store)
    scan_memo.note(b, "r", kb, True)
    scan_memo.flush()
    _new_process()
    _use(str(tmp_path), store)
    assert scan_memo.answers(a, ka, ["q"]) == [False]
    assert scan_memo.answers(b, kb, ["r"]) == [True]


def test_a_damaged_memo_is_as_if_absent(tmp_path, store):
    path = str(old_file(tmp_path / "m.py", "x = 1\n"))
    key = content_keys.content_key({}, path)
    store.put_scan(str(tmp_path), {"questions": ["q"], "files": {"m.py": ["bad"]}, "dirs": {"": "bad"}})
    scan_memo.use_root(str(tmp_path), store, dict)
    assert scan_memo.answers(path, key, ["q"]) == [None]
    assert project_files.python_files(str(tmp_path)) == [path]


def test_a_module_once_known_not_to_consume_is_read_again_after_an_edit(tmp_path, store):
    pipeline = PIPELINE.format(between="pass").replace("from pkg.remove import RemovePass\n", "")
    pkg = _package(tmp_path, add=ADD, pipeline=pipeline.replace("m = RemovePass()(m)", ""), other=UNRELATED)
    add = os.path.join(pkg, "add.py")
    assert _ql102(add) != []
    # The module that named nothing of add.py becomes its consumer: same directory, new stat.
    other = os.path.join(pkg, "other.py")
    with open(other, "w") as fh:
        fh.write(REMOVE)
    os.utime(other, ns=(PAST + 10**9, PAST + 10**9))
    os.utime(pkg, ns=(PAST, PAST))  # the listing itself still vouches for the directory
    _new_process()
    assert _ql102(add) == []


def test_workers_of_a_parallel_run_write_what_they_learned_for_the_next_run(tmp_path, monkeypatch):
    from qlint import runner
    from qlint.settings import Settings

    _new_process()
    modules = {f"m{i:02}": UNRELATED for i in range(runner.MIN_PARALLEL_FILES)}
    pkg = _package(tmp_path, add=ADD, remove=REMOVE, pipeline=PIPELINE.format(between="pass"), **modules)
    settings = Settings(root=tmp_path, cache_dir=tmp_path / ".cache", select=("QL102",))
    run = runner.run_check([pkg], settings, use_cache=True, jobs=2)
    assert not run.errors
    # Written by the worker that checked add.py, as it exited: the next run (a new process)
    # knows which modules hold nothing the scans look for.
    (directory,) = {p.parent for p in (tmp_path / ".cache").rglob("*.scan")}
    _new_process()
    _use(pkg, SummaryStore(directory))  # the scans' root: the top-level package
    other = os.path.join(pkg, "m00.py")
    from qlint.analysis.names.op_refs import OpRef

    # QL102's search for modules consuming the packet add.py inserts: m00 spells none.
    question = packet_scan._QUESTION + op_spellings.PacketSpelling(OpRef("aten", "zeros_like", None)).pattern
    assert scan_memo.answers(other, content_keys.content_key({}, other), [question]) == [False]


def test_a_module_under_two_roots_in_use_is_answered_from_either(tmp_path, store):
    # A package's own scans and the repository-wide caller scan hold the same module.
    (tmp_path / "pkg").mkdir()
    path = str(old_file(tmp_path / "pkg" / "m.py", "x = 1\n"))
    key = content_keys.content_key({}, path)
    _use(str(tmp_path), store)
    scan_memo.note(path, "q", key, False)
    scan_memo.flush()
    _new_process()
    _use(str(tmp_path / "pkg"), store)  # asked first, knows nothing yet
    _use(str(tmp_path), store)
    assert scan_memo.answers(path, key, ["q"]) == [False]


def test_kept_listings_keep_the_links_a_directory_holds(tmp_path):
    """A listing read back from the memo tells the symbolic links to directories it held, as
    a fresh one does (what the wrapper index checks for links out of the root); one written
    before links were kept is refused, never read as a directory without any."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    old_file(pkg / "a.py", "")
    os.symlink(pkg / "sub", pkg / "linked")
    for directory in (pkg / "sub", pkg, tmp_path):
        os.utime(directory, ns=(PAST, PAST), follow_symlinks=False)
    _new_process()
    fresh: list[str] = []
    files = project_files.disk_files(str(tmp_path), True, None, fresh)
    saved = project_files.saved_listings(str(tmp_path))
    _new_process()
    project_files.restore_listings(str(tmp_path), saved)
    restored: list[str] = []
    assert project_files.disk_files(str(tmp_path), True, None, restored) == files
    assert restored == fresh == [str(pkg / "linked")]
    _new_process()
    with pytest.raises(ValueError):
        project_files.restore_listings(str(tmp_path), {rel: entry[:3] for rel, entry in saved.items()})


def test_a_directory_put_back_with_its_old_mtime_is_listed_again(tmp_path):
    """`rsync -a` or `tar -x` of another copy restores a directory's mtime: its ctime moves,
    and a directory made anew at the same path has another inode."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    old_file(pkg / "a.py", "")
    os.utime(pkg, ns=(PAST, PAST))
    _new_process()
    assert project_files.disk_files(str(tmp_path)) == [str(pkg / "a.py")]
    old_file(pkg / "b.py", "")
    os.utime(pkg, ns=(PAST, PAST))  # the mtime the kept listing was made at
    assert project_files.disk_files(str(tmp_path)) == [str(pkg / "a.py"), str(pkg / "b.py")]
    saved = project_files.saved_listings(str(tmp_path))
    os.rename(pkg, tmp_path / "gone")
    pkg.mkdir()
    old_file(pkg / "c.py", "")
    os.utime(pkg, ns=(PAST, PAST))
    _new_process()
    project_files.restore_listings(str(tmp_path), saved)
    assert str(pkg / "c.py") in project_files.disk_files(str(tmp_path))


def test_entries_of_deleted_modules_leave_the_memo(tmp_path, store):
    """A module deleted (or a directory above it) is dropped from the memo at its next write,
    as the listings written with it say; a name no listing tells about is kept."""
    sub = tmp_path / "sub"
    sub.mkdir()
    paths = [str(old_file(p, "x = 1\n")) for p in (tmp_path / "a.py", tmp_path / "b.py", sub / "c.py")]
    hidden = tmp_path / ".hidden"
    hidden.mkdir()
    paths.append(str(old_file(hidden / "h.py", "x = 1\n")))  # read, though no listing walks there
    for directory in (sub, hidden, tmp_path):
        os.utime(directory, ns=(PAST, PAST))

    def write(question: str) -> dict:
        _new_process()
        _use(str(tmp_path), store)
        project_files.disk_files(str(tmp_path))  # the listing a scan makes
        for path in paths:
            scan_memo.note(path, question, content_keys.content_key({}, path), False)
        scan_memo.flush()
        return store.get_scan(str(tmp_path))["files"]

    assert sorted(write("q1")) == [".hidden/h.py", "a.py", "b.py", "sub/c.py"]
    os.unlink(paths.pop(1))
    os.unlink(paths.pop(1))
    os.rmdir(sub)
    for directory in (hidden, tmp_path):
        os.utime(directory, ns=(PAST + 10**9, PAST + 10**9))
    assert sorted(write("q2")) == [".hidden/h.py", "a.py"]
    assert "sub" not in store.get_scan(str(tmp_path))["dirs"]  # nor its listing


def test_a_process_that_is_no_pool_worker_does_not_import_multiprocessing_to_ask():
    # ~10 ms of every `qlint check FILE` with a cache: a pool's worker has it imported already.
    import subprocess
    import sys

    code = (
        "import sys\nfrom qlint.analysis import scan_memo\nscan_memo._flush_at_worker_exit()\n"
        "print('multiprocessing' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_later_run_reads_for_a_helper_only_the_modules_that_name_it(tmp_path, store):
    # QL201's caller search: the modules an earlier run found not to hold the helper's name
    # (or its module's) are not read into words again while their stat holds.
    from qlint.analysis.names import project_words
    from tests.test_ql201_project_callers import EVAL_CALLER, _check, _repo

    unrelated = {f"u{i}": "def f():\n    return 1\n" for i in range(5)}
    # Holds the name inside a longer one, and defines and calls its own function of that name.
    unrelated["v"] = "x = quantize_module_v2\n"
    unrelated["w"] = "def quantize_module(m):\n    return m\n\n\nquantize_module(1)\n"
    root = _repo(tmp_path, a=EVAL_CALLER, **unrelated)
    for path in [root, *root.rglob("*")]:
        os.utime(path, ns=(PAST, PAST))
    project_words.forget()
    assert _check(root).diagnostics == []
    scan_memo.flush()
    assert project_words.reads() == 10  # every module but the helper's
    _new_process()
    project_words.forget()
    assert _check(root).diagnostics == []
    # a.py, the one module that holds the helper's name and may call it: v.py and w.py were
    # found not to, whose text holds it.
    assert project_words.reads() == 1
    # An unrelated module edited since becomes a caller: read, and judged.
    old_file(root / "scripts" / "u2.py", EVAL_CALLER.replace(".eval()", ""))
    os.utime(root / "scripts" / "u2.py", ns=(PAST + 10**9, PAST + 10**9))
    _new_process()
    project_words.forget()
    assert len(_check(root).diagnostics) == 1


def test_the_modules_left_unanswered_are_those_answers_leaves_open(tmp_path, store):
    """`unanswered` (one mask per module for what an earlier run saved) against `answers`,
    module by module: saved no to both questions, no to one only, yes to one, a stat changed
    since, never asked, and answered by this process itself."""
    names = ("no", "half", "yes", "moved", "new", "mine")
    paths = {n: str(old_file(tmp_path / f"{n}.py", f"{n} = 1\n")) for n in names}
    keys = {n: content_keys.content_key({}, p) for n, p in paths.items()}
    _use(str(tmp_path), store)
    for name in ("no", "half", "moved"):
        scan_memo.note(paths[name], "q1", keys[name], False)
    for name in ("no", "moved"):
        scan_memo.note(paths[name], "q2", keys[name], False)
    scan_memo.note(paths["yes"], "q1", keys["yes"], True)
    scan_memo.note(paths["yes"], "q2", keys["yes"], False)
    scan_memo.flush()
    _new_process()
    _use(str(tmp_path), store)
    os.utime(paths["moved"], ns=(PAST + 10**9, PAST + 10**9))
    keys["moved"] = content_keys.content_key({}, paths["moved"])
    scan_memo.note(paths["mine"], "q1", keys["mine"], False)
    scan_memo.note(paths["mine"], "q2", keys["mine"], False)
    modules = [(paths[n], keys[n]) for n in paths]
    expected = [
        (p, k, scan_memo.answers(p, k, ["q1", "q2"]))
        for p, k in modules
        if any(a is not False for a in scan_memo.answers(p, k, ["q1", "q2"]))
    ]
    assert scan_memo.unanswered(modules, ["q1", "q2"]) == expected
    assert [os.path.basename(p) for p, _, _ in expected] == ["half.py", "yes.py", "moved.py", "new.py"]


def test_the_answers_kept_for_a_project_are_read_in_one_pass_as_module_by_module(tmp_path, store):
    # `known_sets` is `answers` for every module at once: the same answer where one is kept
    # at the module's stat (this process's own first), none where the stat moved or nothing
    # was asked.
    root = tmp_path / "r"
    root.mkdir()
    paths = []
    for i in range(5):
        old_file(root / f"m{i}.py", f"x = {i}\n")
        paths.append(str(root / f"m{i}.py"))
    os.utime(root, ns=(PAST, PAST))
    _use(str(root), store)
    keys = {p: content_keys.content_key({}, p) for p in paths}
    scan_memo.note(paths[0], "q:a", keys[paths[0]], False)
    scan_memo.note(paths[1], "q:a", keys[paths[1]], True)
    scan_memo.note(paths[1], "q:b", keys[paths[1]], False)
    scan_memo.note(paths[2], "q:b", keys[paths[2]], True)
    scan_memo.note(paths[4], "q:a", keys[paths[4]], True)
    scan_memo.flush()
    _new_process()
    _use(str(root), store)
    scan_memo.note(paths[3], "q:a", keys[paths[3]], True)  # this process's own answers
    scan_memo.note(paths[4], "q:a", keys[paths[4]], False)
    # m2.py edited since: what was kept of it is not its answer.
    keys[paths[2]] = (keys[paths[2]][0] + 1, keys[paths[2]][1])
    questions = ["q:a", "q:b", "q:c"]
    one_by_one = {p: scan_memo.answers(p, k, questions) for p, k in keys.items()}
    sets = scan_memo.known_sets(keys, questions)
    assert sets == [
        ({p for p, a in one_by_one.items() if a[i] is True}, {p for p, a in one_by_one.items() if a[i] is False})
        for i in range(3)
    ]
    assert sets == [({paths[1], paths[3]}, {paths[0], paths[4]}), (set(), {paths[1]}), (set(), set())]


def test_a_later_caller_search_notes_no_miss_an_earlier_run_kept(tmp_path, store, monkeypatch):
    # The modules an earlier run found not to hold the helper's name are answered from the
    # memo, not noted again for `flush` to compare with what it holds (a one-file check of
    # ExecuTorch noted all 3,800 modules, learning nothing).
    from qlint.analysis.names import project_words
    from tests.test_ql201_project_callers import EVAL_CALLER, _check, _repo

    root = _repo(tmp_path, a=EVAL_CALLER, **{f"u{i}": "def f():\n    return 1\n" for i in range(5)})
    for path in [root, *root.rglob("*")]:
        os.utime(path, ns=(PAST, PAST))
    project_words.forget()
    assert _check(root).diagnostics == []
    scan_memo.flush()
    _new_process()
    project_words.forget()
    asked: list[str] = []
    real = scan_memo.answers
    monkeypatch.setattr(scan_memo, "answers", lambda path, *a: asked.append(path) or real(path, *a))
    assert _check(root).diagnostics == []
    assert {os.path.basename(p) for p in asked} == {"a.py"}  # the candidate only, not module by module
    assert not any(os.path.basename(p).startswith("u") for p in scan_memo._KNOWN)
    assert project_words.reads() == 1
    # The module found to hold the name is kept as holding it: the next run does not read it
    # into words to learn that again (only to tell whether it spells it, as a candidate).
    caller = str(root / "scripts" / "a.py")
    key = content_keys.content_key({}, caller)
    assert scan_memo.answers(caller, key, ["text-lacks:quantize_module"]) == [True]

"""qlint.runner: parallel checking, crash isolation, fix runs and their use of the cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import qlint.engine
from qlint import check_chunks, file_checks, runner, worker_pool, worker_process
from qlint.diagnostic import Range
from qlint.rules import RULES
from qlint.rules.base import Rule
from qlint.runner import run_check, run_fix
from qlint.settings import Settings

NOQA_ONLY = "x = 1  # noqa: QL101\n"


class CrashRule(Rule):
    """Test-only: kills the process checking a file that says CRASH_NOW (a C-level crash)."""

    code = "QL904"
    name = "crash"
    summary = "test-only"
    triggers = ("CRASH_NOW", "PID_MARK")

    def check(self, ctx):
        if "CRASH_NOW" in ctx.text:
            if os.getpid() == _TEST_PROCESS:  # would end pytest: fail the test instead
                yield ctx.diagnostic(self, Range.of(1, 0, 1, 1), "crash asked of the parent")
                return
            os._exit(3)
        _wait_for_the_other_processes()
        yield ctx.diagnostic(self, Range.of(1, 0, 1, 1), f"pid {os.getpid()}")


def _wait_for_the_other_processes() -> None:
    """With QL904_BARRIER set (a directory and a count), a check waits until that many processes
    have begun one: a fast worker cannot drain every chunk while another is still starting on a
    loaded machine, so the test of the spread does not depend on timing."""
    barrier = os.environ.get("QL904_BARRIER")
    if not barrier:
        return
    where, count = barrier.rsplit(":", 1)
    Path(where, str(os.getpid())).touch()
    deadline = time.monotonic() + 30
    while len(os.listdir(where)) < int(count) and time.monotonic() < deadline:
        time.sleep(0.01)


_TEST_PROCESS = os.getpid()


@pytest.fixture
def crash_rule(monkeypatch):
    monkeypatch.setitem(RULES, CrashRule.code, CrashRule)


def settings(tmp_path: Path, **kw) -> Settings:
    return Settings(root=tmp_path, cache_dir=tmp_path / ".cache", **kw)


def tree(tmp_path: Path, n: int, text: str = NOQA_ONLY) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    for i in range(n):
        (src / f"m{i:03}.py").write_text(text * (1 + i % 7))
    return src


def flat(run) -> list[tuple]:
    return [(Path(r.path).name, [(d.code, d.range) for d in r.diagnostics], r.errors) for r in run.results]


def test_parallel_results_equal_serial_results_in_path_order(tmp_path):
    src = tree(tmp_path, runner.MIN_PARALLEL_FILES + 20)
    s = settings(tmp_path)
    serial = run_check([str(src)], s, use_cache=False, jobs=1)
    parallel = run_check([str(src)], s, use_cache=False, jobs=2)
    assert flat(parallel) == flat(serial)
    assert [r.path for r in parallel.results] == sorted(r.path for r in parallel.results)
    # Texts are not shipped back: a result holds no copy of its file's text.
    assert all(not hasattr(r, "text") for r in parallel.results)


def _op_tables_loaded() -> tuple[int, bool]:
    from qlint import optable

    return optable._load_default.cache_info().currsize, optable.load_op_table().is_loaded


def test_workers_inherit_the_op_table_loaded_before_the_fork(tmp_path):
    """Loaded once in the parent, not once per worker at its first check (the default table
    is otherwise read at its first use)."""
    from qlint import optable

    optable._load_default.cache_clear()
    with worker_pool._pool(1, settings(tmp_path)) as pool:
        assert _op_tables_loaded() == (1, True)
        assert pool.submit(_op_tables_loaded).result() == (1, True)


@pytest.mark.parametrize("jobs", [2, 3])
def test_work_really_is_spread_over_jobs_processes_the_parent_being_one(tmp_path, crash_rule, jobs, monkeypatch):
    """-j N: N processes check, the parent and N - 1 workers (a parent that only waited
    kept a copy of the heap pages every worker copied: peak memory, no speed)."""
    src = tree(tmp_path, runner.MIN_PARALLEL_FILES + 20, "PID_MARK\n")
    (tmp_path / "barrier").mkdir()
    monkeypatch.setenv("QL904_BARRIER", f"{tmp_path / 'barrier'}:{jobs}")
    run = run_check([str(src)], settings(tmp_path, select=("QL904",)), use_cache=False, jobs=jobs)
    pids = {d.message for r in run.results for d in r.diagnostics}
    assert len(pids) == jobs and f"pid {os.getpid()}" in pids


def test_results_with_three_processes_equal_serial_results(tmp_path):
    src = tree(tmp_path, runner.MIN_PARALLEL_FILES + 20)
    s = settings(tmp_path)
    assert flat(run_check([str(src)], s, use_cache=False, jobs=3)) == flat(run_check([str(src)], s, jobs=1))


def test_small_runs_stay_in_process(tmp_path, monkeypatch):
    src = tree(tmp_path, 3)
    monkeypatch.setattr(worker_pool, "_pool", lambda *a: pytest.fail("a pool for three files"))
    run = run_check([str(src)], settings(tmp_path), use_cache=False, jobs=2)
    assert len(run.results) == 3


def test_checking_one_file_does_not_import_multiprocessing(tmp_path):
    # The pre-commit call: start-up is most of its time, a pool it never uses costs ~10 ms.
    src = tmp_path / "one.py"
    src.write_text("import torch\nx = node.target == torch.ops.aten.add\n")
    code = (
        "import sys; from qlint.cli import main; main(['check', '--exit-zero', '--no-cache', sys.argv[1]]); "
        "print(sorted(m for m in sys.modules if m.startswith(('multiprocessing', 'concurrent'))))"
    )
    argv = [sys.executable, "-c", code, str(src)]
    out = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, check=True)
    assert "QL101" in out.stdout and out.stdout.strip().endswith("[]")


def test_a_parallel_run_loads_the_pool_while_the_index_child_works_and_a_serial_one_not_at_all():
    # What a parallel run loads while the wrapper index's child works (`worker_pool.load_for_workers`)
    # holds what its pool loads: nothing is left for after the index, when one core idles.
    # A run of one process, which imports the checks' modules meanwhile instead, loads none.
    code = (
        "import sys\nfrom qlint import runner, worker_pool\n"
        "def pool_modules():\n"
        "    return sorted(m for m in sys.modules if m.startswith(('multiprocessing', 'concurrent')))\n"
        "worker_pool.import_for_checks()\nprint(pool_modules() == [])\n"
        "worker_pool.load_for_workers()\nloaded = pool_modules()\n"
        "with worker_pool._pool(1, runner.Settings()) as pool:\n"
        "    assert pool.submit(abs, -1).result() == 1\n"
        "print(pool_modules() == loaded, 'multiprocessing.popen_fork' in loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", "True"]


def test_a_crashing_file_costs_only_itself(tmp_path, crash_rule, monkeypatch):
    src = tree(tmp_path, runner.MIN_PARALLEL_FILES + 4, "PID_MARK\n")
    # A chunk of its own, the heaviest: the first given to the worker (the parent takes the
    # next ones; its crash would end the run).
    (src / "m000.py").write_text("CRASH_NOW\n" + "# padding\n" * 500)
    isolated = []
    isolate = worker_pool._isolate
    monkeypatch.setattr(
        worker_pool, "_isolate", lambda func, paths, s: isolated.extend(paths) or isolate(func, paths, s)
    )
    run = run_check([str(src)], settings(tmp_path, select=("QL904",)), use_cache=True, jobs=2)
    # One process per file only for what the dead worker had been given, not for the
    # parent's share.
    assert str(src / "m000.py") in isolated and len(isolated) < runner.MIN_PARALLEL_FILES
    bad = [r for r in run.results if r.errors]
    assert [Path(r.path).name for r in bad] == ["m000.py"]
    assert "crashed" in bad[0].errors[0]
    good = [r for r in run.results if not r.errors]
    assert len(good) == runner.MIN_PARALLEL_FILES + 3 and all(r.diagnostics for r in good)
    assert "crashed" in run.all_errors[0]


def test_unreadable_file_is_an_error_not_a_crash(tmp_path):
    # As root nothing is unreadable by permissions; a directory fails `open` for real.
    (tmp_path / "dir.py").mkdir()
    result, *_ = file_checks.check_one(str(tmp_path / "dir.py"), settings(tmp_path))
    assert result.diagnostics == [] and "cannot read: Is a directory" in result.errors[0]


def test_engine_exceptions_become_file_errors(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("x = 1\n")

    def explode(*a, **k):
        raise ValueError("engine bug")

    monkeypatch.setattr(qlint.engine, "check_source", explode)  # the runner imports it per check
    run = run_check([str(tmp_path)], settings(tmp_path), use_cache=True, jobs=1)
    assert "internal error" in run.results[0].errors[0] and "engine bug" in run.results[0].errors[0]
    monkeypatch.undo()
    # The failed result was not cached: the next run checks the file again.
    assert run_check([str(tmp_path)], settings(tmp_path), use_cache=True, jobs=1).cached == 0


def test_run_fix_diff_writes_nothing_and_fix_is_idempotent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(NOQA_ONLY)
    (tmp_path / "b.py").write_text("y = 2\n")
    s = settings(tmp_path)
    preview = run_fix(["."], s, unsafe=False, diff_only=True, jobs=1)
    a, b = preview.reports
    assert a.changed and a.applied == 1 and a.diff.startswith("--- a/a.py\n+++ b/a.py\n")
    assert not b.changed and b.diff is None
    assert (tmp_path / "a.py").read_text() == NOQA_ONLY
    done = run_fix(["."], s, unsafe=False, diff_only=False, jobs=1)
    assert [r.applied for r in done.reports] == [1, 0]
    assert (tmp_path / "a.py").read_text() == "x = 1\n"
    again = run_fix(["."], s, unsafe=False, diff_only=False, jobs=1)
    assert [r.applied for r in again.reports] == [0, 0] and not again.all_errors


def test_run_fix_skips_files_the_cache_knows_are_clean(tmp_path, monkeypatch):
    src = tree(tmp_path, 4, "y = 2\n")
    (src / "m000.py").write_text(NOQA_ONLY)
    s = settings(tmp_path)
    run_check([str(src)], s, use_cache=True, jobs=1)  # warm the cache
    import qlint.fixes

    touched = []
    real = qlint.fixes.fix_file

    def spy(path, *a, **k):
        touched.append(Path(path).name)
        return real(path, *a, **k)

    monkeypatch.setattr(qlint.fixes, "fix_file", spy)
    result = run_fix([str(src)], s, unsafe=False, diff_only=False, jobs=1)
    assert touched == ["m000.py"]
    assert sum(r.applied for r in result.reports) == 1


def test_run_fix_in_parallel(tmp_path):
    src = tree(tmp_path, runner.MIN_PARALLEL_FILES + 6)
    result = run_fix([str(src)], settings(tmp_path), unsafe=False, diff_only=False, jobs=2, use_cache=False)
    assert [r.applied for r in result.reports] == [1 + i % 7 for i in range(len(result.reports))]
    assert all("noqa" not in p.read_text() for p in src.iterdir())


def test_chunks_keep_neighbours_together_heaviest_first_and_cover_everything(tmp_path):
    """Files of one package share the modules they import: one worker should read those."""
    paths = []
    for package in ("a", "b"):
        (tmp_path / package).mkdir()
        for i in range(48):
            p = tmp_path / package / f"m{i:02}.py"
            p.write_text("x" * (1000 if (package, i) == ("b", 5) else 100))
            paths.append(str(p))
    head, tail = check_chunks.chunk_parts(list(reversed(paths)), 2)
    chunks = head + tail
    assert sorted(p for c in chunks for p in c) == sorted(paths)
    assert str(tmp_path / "b" / "m05.py") in chunks[0]
    assert sum(len({os.path.dirname(p) for p in chunk}) > 1 for chunk in chunks) <= 1  # where a meets b
    assert max(map(len, chunks)) > 1 and len(chunks[-1]) == 1  # the tail is cut finer


def test_a_process_takes_the_chunks_of_the_packages_it_checked_first(tmp_path):
    """A package's checks read the same modules and search the same callers: its chunks go to
    the process that checked one of them (ExecuTorch's backends/qualcomm, three chunks, fell to
    both processes in one run of three, and both processes' peaks carried its heaviest checks).
    The fine tail is still taken in order, so the processes finish together."""
    paths = []
    for package, count in (("a", 36), ("b", 36), ("c", 6), ("d", 6)):  # c and d: the fine tail
        (tmp_path / package).mkdir()
        for i in range(count):
            p = tmp_path / package / f"m{i:02}.py"
            p.write_text("x" * 1000)
            paths.append(str(p))
    head, tail = check_chunks.chunk_parts(paths, 2)
    pending = check_chunks._Affinity(head, tail)
    taken = {check_chunks._POOL: [], check_chunks._PARENT: []}
    for taker in [check_chunks._POOL, check_chunks._PARENT] * len(head):
        if len(pending) > len(tail):
            taken[taker].append(pending.take(taker))

    def packages(chunks):
        return {os.path.basename(os.path.dirname(p)) for chunk in chunks for p in chunk}

    assert abs(len(taken[check_chunks._POOL]) - len(taken[check_chunks._PARENT])) <= 1
    # Heaviest first alone: a and b to both. Here b's to the parent, which takes a's once b's
    # are all checked (the pool took more chunks of a than the parent of b).
    assert packages(taken[check_chunks._POOL]) == {"a"}
    assert [c for c in taken[check_chunks._PARENT] if packages([c]) == {"b"}] == [
        c for c in head if packages([c]) == {"b"}
    ]
    assert [pending.take(check_chunks._POOL) for _ in tail] == tail


def test_a_batch_frees_each_files_cycles_without_rescanning_what_it_keeps():
    """Between files only young collections run: they free the cycles a check left behind,
    and what the run keeps on purpose is not rescanned by older collections; nor is it
    rescanned in one big collection when the batch ends."""
    import gc
    import weakref

    class Node:
        pass

    kept: list = []  # what a run keeps on purpose (scopes of other modules, memos)
    garbage: list = []

    def work():  # as `engine._check_source`: its cycles are unreachable once it returns
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle only the collector frees
        garbage.append(weakref.ref(a))
        kept.append([{"n": i} for i in range(20_000)])

    def check(path, _settings):
        from qlint.gc_pause import gc_paused

        with gc_paused():
            work()
        return path

    collections: list[int] = []

    def watch(phase, info):
        if phase == "start":
            collections.append(info["generation"])

    before = gc.get_threshold()
    gc.callbacks.append(watch)
    try:
        assert len(list(runner._map(check, [f"f{i}" for i in range(100)], None, jobs=1))) == 100
        for _ in range(5):  # what the defaults do right after the batch
            [{"x": i} for i in range(2_000)]
    finally:
        gc.callbacks.remove(watch)
    assert gc.get_threshold() == before
    assert 0 in collections and not [g for g in collections if g > 0]
    # The last files' cycles wait for the next collection, as any garbage does.
    assert [i for i, ref in enumerate(garbage[:-3]) if ref() is not None] == []


def test_a_run_the_cache_answers_imports_no_analysis(tmp_path):
    """`qlint check FILE` after the file was checked: start-up is the whole run, so nothing
    about parsing, scopes or module summaries is imported, nor a TOML parser when no config
    file has a qlint table, nor `dataclasses`."""
    src = tmp_path / "one.py"
    src.write_text("import torch\nx = node.target == torch.ops.aten.add\n")
    past = 1_600_000_000
    os.utime(src, (past, past))
    code = (
        "import sys; from qlint.cli import main; "
        "main(['check', '--exit-zero', '--cache-dir', sys.argv[2], sys.argv[1]]); "
        "print(sorted(m for m in sys.modules if m.startswith(HEAVY) and m not in LAYOUT))"
    )
    # Except what finds the run's layout (`run_layout`: project roots and the packaging files'
    # digests, kept by stat), which every run keys its cache on, and the project files that would shadow a
    # standard or installed module (`shadowed_names`), which the cache's answers depend on; none
    # of them parses or reads a module.
    names = ("package_map", "packaging_files", "run_layout", "shadowed_names")
    layout = ("qlint.analysis.names", *(f"qlint.analysis.names.{name}" for name in names))
    heavy = ("qlint.analysis.names", "qlint.analysis.graphs", "qlint.summary_cache", "qlint.engine", "qlint.stdin")
    heavy += ("tomllib",)
    # Nor `dataclasses` (with `inspect`, `ast`, `dis`): the classes such a run builds are made
    # without it (`qlint.value_classes`), 25 ms of CPU at every start.
    heavy += ("dataclasses", "inspect", "ast")
    # Nor `hashlib` (OpenSSL, ~3 ms): its files are checked by CRC-32, its keys hashed by
    # `qlint.short_digests`.
    heavy += ("hashlib", "_hashlib")
    # Nor `signal` (its enums: ~3 M instructions): only a run that forks blocks Ctrl-C.
    heavy += ("signal", "qlint.analysis.held_interrupts")
    # Nor `json` (~5 M instructions): its dependency keys and settings are plain (`plain_json`).
    heavy += ("json",)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    argv = [sys.executable, "-c", f"HEAVY = {heavy!r}; LAYOUT = {layout!r}; {code}", str(src), str(tmp_path / "cache")]
    first = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, check=True)
    assert "qlint.summary_cache" in first.stdout
    out = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, check=True)
    assert "QL101" in out.stdout and out.stdout.strip().endswith("[]"), out.stdout


def test_a_check_of_an_edited_buffer_builds_no_dataclass(tmp_path):
    """`qlint check -` (the file as just edited): every rule's analyses run, and their classes
    are made by `qlint.value_classes`; `dataclasses` (with `inspect`, `dis`, `copy`) and the
    ~60 classes it built cost ~50 ms of CPU at every such run. Nor `tokenize` (~5 ms): its
    noqa comments are plain, and the buffer is written back only by a fix."""
    import re

    pages = sorted((Path(__file__).parent.parent / "rules").glob("QL*.md"))
    examples = [re.search(r"## Example.*?```python\n(.*?)```", p.read_text(), re.S) for p in pages]
    text = "\n\n".join(m.group(1) for p, m in zip(pages, examples, strict=True) if m and p.stem != "QL001")
    code = (
        "import io, sys; from qlint.cli import main\n"
        "sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[1].encode()))\n"
        "argv = ['check', '--no-cache', '--preview', '--output-format', 'json', '--stdin-filename', 'm.py', '-']\n"
        "try:\n    main(argv)\n"
        "except SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m in ('dataclasses', 'inspect', 'tokenize')))"
    )
    out = subprocess.run([sys.executable, "-c", code, text], capture_output=True, text=True, cwd=tmp_path, check=True)
    findings, modules = out.stdout.rsplit("\n", 2)[-3:-1]
    assert len({d["code"] for d in json.loads(findings)}) >= 8  # the rules and their analyses ran
    assert modules == "[]"


def test_one_file_is_checked_without_a_collection_and_the_collector_is_back_after(tmp_path):
    import gc

    src = tmp_path / "m.py"
    # Enough objects for the check to end past the young generation's threshold.
    src.write_text("import torch\n" + "".join(f"x{i} = torch.export.export_for_training(m, a)\n" for i in range(3000)))
    collections = []

    def count(phase, info):
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(count)
    try:
        run = run_check([str(src)], Settings(root=tmp_path), use_cache=False, jobs=1)
    finally:
        gc.callbacks.remove(count)
    assert run.results[0].parsed
    assert collections == []
    assert gc.isenabled()


def _reader_and_module(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "ops.py").write_text("import torch\n\nDQ = torch.ops.quantized_decomposed.dequantize_per_tensor\n")
    (pkg / "match.py").write_text("from pkg.ops import DQ\n\n\ndef is_dq(node):\n    return node.target == DQ\n")
    return pkg


@pytest.mark.parametrize("jobs", [1, 2])
def test_results_leave_their_dependencies_to_the_cache(tmp_path, monkeypatch, jobs):
    # Kept with every result until the report, the dependencies (thousands per result of a
    # project scan) were most of the parent's memory at the end of a run over ExecuTorch.
    monkeypatch.setattr(runner, "MIN_PARALLEL_FILES", 1)
    pkg = _reader_and_module(tmp_path)
    match = str(pkg / "match.py")
    s = settings(tmp_path)
    run = run_check([str(pkg)], s, use_cache=True, jobs=jobs)
    assert [d.code for r in run.results for d in r.diagnostics] == ["QL101"]
    assert all(r.dependencies == {} for r in run.results)
    # ... which has them, and still drops the result when the module read changes.
    assert str(pkg / "ops.py") in runner.Cache.for_settings(s).lookup(match).dependencies
    (pkg / "ops.py").write_text("import torch\n\nDQ = torch.ops.quantized_decomposed.dequantize_per_tensor.default\n")
    assert [d.code for r in run_check([str(pkg)], s, use_cache=True, jobs=jobs).results for d in r.diagnostics] == []


def test_a_run_without_cache_gets_no_dependencies_from_its_workers(tmp_path):
    pkg = _reader_and_module(tmp_path)
    match = str(pkg / "match.py")
    assert str(pkg / "ops.py") in file_checks.check_one(match, settings(tmp_path))[0].dependencies
    result, *_ = file_checks.check_one_uncached(match, settings(tmp_path))
    assert [d.code for d in result.diagnostics] == ["QL101"] and result.dependencies == {}


def test_a_worker_hands_freed_memory_back_after_a_heavy_file_only(tmp_path, monkeypatch):
    # A worker's memory would stay at its highest point, and the run's peak is the sum over
    # the workers: after a check that allocated much, what it freed goes back to the system.
    released = []
    monkeypatch.setattr(worker_process, "_malloc_trim", released.append)
    monkeypatch.setattr(worker_process, "_worker_settings", settings(tmp_path))
    slow = {"heavy.py"}

    def check(path, _settings):
        if path in slow:
            _burn_cpu(worker_process.RELEASE_AFTER_SECONDS)
        return path

    assert worker_process.run_chunk(check, ["light.py", "heavy.py", "light2.py"]) == [
        ("light.py", "light.py"),
        ("heavy.py", "heavy.py"),
        ("light2.py", "light2.py"),
    ]
    assert released == [0]


def _burn_cpu(seconds: float) -> None:
    start = time.thread_time()
    while time.thread_time() - start < seconds:
        pass


def test_a_check_that_only_waited_for_a_core_is_no_heavy_file(tmp_path, monkeypatch):
    # On a busy machine a light check can take longer than a heavy one would on an idle
    # machine: what it allocated, not how long it waited, decides whether to trim after it
    # (ExecuTorch at a load of 20: 2,440 trims in a run instead of ~120).
    released = []
    monkeypatch.setattr(worker_process, "_malloc_trim", released.append)
    monkeypatch.setattr(worker_process, "_worker_settings", settings(tmp_path))

    def check(path, _settings):
        time.sleep(2 * worker_process.RELEASE_AFTER_SECONDS)  # off the CPU, as when waiting for it
        return path

    assert worker_process.run_chunk(check, ["a.py", "b.py"]) == [("a.py", "a.py"), ("b.py", "b.py")]
    assert released == []


def test_the_parent_hands_freed_memory_back_after_its_own_heavy_files_only(tmp_path, monkeypatch):
    # The parent checks chunks beside the workers (`check_chunks.shared_chunks`): the same rule holds there.
    released = []
    monkeypatch.setattr(worker_process, "release_freed_memory", lambda: released.append(True))

    class Pool:  # no worker: the parent takes every chunk
        def submit(self, *args):
            raise AssertionError("nothing is given to a pool of no workers")

    def check(path, _settings):
        if path == "heavy.py":
            _burn_cpu(worker_process.RELEASE_AFTER_SECONDS)
        else:
            time.sleep(2 * worker_process.RELEASE_AFTER_SECONDS)
        return path

    chunks = ([["waits.py", "heavy.py"], ["waits2.py"]], [])
    out = list(check_chunks.shared_chunks(Pool(), 0, check, chunks, settings(tmp_path), set()))
    assert sorted(p for p, _ in out) == ["heavy.py", "waits.py", "waits2.py"]
    assert released == [True]


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's malloc_trim")
def test_workers_find_malloc_trim(monkeypatch):
    monkeypatch.setattr(worker_process, "_malloc_trim", None)
    worker_process.find_malloc_trim()
    assert worker_process._malloc_trim is not None


def test_the_parent_hands_freed_memory_back_before_forking(tmp_path, monkeypatch):
    # Freed before the fork (the wrapper index's build), it would stay mapped in the parent
    # for the whole run.
    calls = []
    monkeypatch.setattr(worker_process, "release_freed_memory", lambda: calls.append(os.getpid()))
    src = tree(tmp_path, runner.MIN_PARALLEL_FILES + 2)
    run_check([str(src)], settings(tmp_path), use_cache=False, jobs=2)
    assert os.getpid() in calls


def test_rules_imported_before_forking_leave_the_registry_on_its_manifest(monkeypatch):
    """Workers inherit the rule modules the parent imports, and still answer the engine's
    per-file questions from the manifest: with the classes loaded all at once instead, every
    file's `engine_rule` rebuilt the facts of every rule in the workers (only there)."""
    from qlint import registry
    from qlint.rules.manifest import MANIFEST

    fresh = registry.Registry(group=None)  # no plugin: the manifest answers
    monkeypatch.setattr(registry, "_REGISTRY", fresh)
    built = []
    real = registry._facts_of
    monkeypatch.setattr(registry, "_facts_of", lambda cls: built.append(cls) or real(cls))
    worker_pool._import_rules()
    assert set(fresh._loaded) == set(fresh.facts()) and fresh._rules is None
    assert all(spec.partition(":")[0] in sys.modules for spec in MANIFEST)
    before = len(built)
    for _ in range(3):  # three files' questions
        registry.engine_rule(registry.EngineReport.PARSE_ERROR)
        registry.engine_rule(registry.EngineReport.UNUSED_NOQA)
    assert len(built) == before


def test_a_run_without_cache_does_not_hash_the_files_it_checks(tmp_path, monkeypatch):
    # Size, time and digest are a cache entry's key: a run without a cache drops them.
    pkg = _reader_and_module(tmp_path)
    match = str(pkg / "match.py")

    def unwanted(*args):
        raise AssertionError("a cache key made for a run without a cache")

    monkeypatch.setattr(file_checks, "content_hash", unwanted)
    result, size, mtime_ns, digest = file_checks.check_one_uncached(match, settings(tmp_path))
    assert [d.code for d in result.diagnostics] == ["QL101"] and (size, mtime_ns, digest) == (0, 0, "")
    monkeypatch.undo()
    # The cached run's check keys its entry on them, as before.
    _, size, _, digest = file_checks.check_one(match, settings(tmp_path))
    assert size == os.path.getsize(match) and digest

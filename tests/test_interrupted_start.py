"""Ctrl-C during a parallel run's start-up: before its workers, the run forks a child cutting
the project's words (`shared_words`) and one making the wrapper index (`forked_call`). Wherever
the interrupt lands, the run exits 130 without a word, at once, and leaves no process behind.

The runs are real `qlint check` processes whose start-up steps announce themselves (a file in
`marks`) and can be made to wait there, so each test interrupts at a known point."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from qlint import lost_interrupts, runner
from qlint.analysis import held_interrupts
from qlint.analysis.graphs import wrapper_index
from qlint.analysis.names import project_words, shared_words
from qlint.settings import Settings

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="forks its children on Linux only")

DRIVER = textwrap.dedent(
    """
    import os, signal, sys, time
    from qlint import worker_process
    from qlint.analysis.graphs import wrapper_index
    from qlint.analysis.names import shared_words

    marks, waits, interrupts, *argv = sys.argv[1:]

    def reached(step):
        open(os.path.join(marks, f"{step}.{os.getpid()}"), "w").close()
        if step in interrupts.split(","):  # the group's Ctrl-C, sent from this very point
            os.killpg(0, signal.SIGINT)
            time.sleep(2)
        if f"{step}:alone" in interrupts.split(","):  # to this process alone, as `kill -INT` sends it
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(2)
        if step in waits.split(","):
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # busy: outlives a Ctrl-C
            time.sleep(120)

    def announced(step, original):
        def wrapper(*args):
            reached(step)
            return original(*args)
        return wrapper

    def returned(step, original):  # the step is reached as the call hands back its result
        def wrapper(*args):
            result = original(*args)
            reached(step)
            return result
        return wrapper

    shared_words._cut = announced("words", shared_words._cut)
    shared_words.start = returned("words-forked", shared_words.start)
    shared_words.Pending.wait = announced("words-wait", shared_words.Pending.wait)
    wrapper_index.build = announced("index", wrapper_index.build)
    worker_process.init_worker = announced("worker", worker_process.init_worker)
    if os.environ.get("APART_FILES"):  # the index's modules read by two processes (`wrapper_reads`)
        from qlint.analysis.graphs import wrapper_reads
        wrapper_reads._APART_FILES = int(os.environ["APART_FILES"])
        wrapper_reads.Reads.read = announced("reads", wrapper_reads.Reads.read)
        from qlint.analysis import forked_call
        forked_call.spawn = returned("reader-forked", forked_call.spawn)

    from qlint.cli import run
    sys.argv = ["qlint", *argv]
    run()
    """
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "proj" / "pkg").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text("")
    (tmp_path / "proj" / "pkg" / "__init__.py").write_text("")
    for i in range(runner.MIN_PARALLEL_FILES + 6):  # a run with workers
        (tmp_path / "proj" / "pkg" / f"m{i}.py").write_text(
            f"import torch\n\ndef f{i}(gm):\n    return [n for n in gm.graph.nodes if n.target == torch.ops.aten.add]\n"
        )
    (tmp_path / "driver.py").write_text(DRIVER)
    (tmp_path / "marks").mkdir()
    (tmp_path / "tmp").mkdir()
    return tmp_path


def _interrupted(
    where: Path,
    reached: tuple[str, ...],
    waits: str = "-",
    interrupts: str = "-",
    group: bool = True,
    apart: bool = False,
) -> tuple[subprocess.CompletedProcess, float, list[str]]:
    """Run the driver; once every step of `reached` is marked, Ctrl-C it (the group, like a
    terminal, or the parent alone, like `kill -INT`). Returns the run, how long it took to end
    after the Ctrl-C, and the processes of its group left after it. `apart`: the index's
    modules are read by two processes, as on a large project."""
    env = dict(os.environ, TMPDIR=str(where / "tmp"))
    if apart:
        env["APART_FILES"] = "2"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    argv = [sys.executable, str(where / "driver.py"), str(where / "marks"), waits, interrupts]
    proc = subprocess.Popen(
        [*argv, "check", str(where / "proj"), "--no-cache", "-j2"],
        cwd=where,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 60
        while not all(any(m.startswith(f"{s}.") for m in os.listdir(where / "marks")) for s in reached):
            assert time.time() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        time.sleep(0.3)  # the parent reaches its wait meanwhile
        start = time.time()
        if interrupts == "-":
            (os.killpg if group else os.kill)(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        took = time.time() - start
        time.sleep(0.1)
        left = _left(proc.pid)
    finally:
        _end_group(proc.pid)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), took, left


def _end_group(pgid: int) -> None:
    """What a test that failed left running is not left to the next one."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def _left(pgid: int) -> list[str]:
    """The processes of the run's group still there (zombies too: a child nobody reaped)."""
    return subprocess.run(["pgrep", "-g", str(pgid)], capture_output=True, text=True).stdout.split()


def _quiet_130(interrupted: tuple[subprocess.CompletedProcess, float, list[str]], where: Path) -> None:
    run, took, left = interrupted
    assert (run.returncode, run.stdout, run.stderr.decode()) == (130, b"", "")
    assert took < 10
    assert left == []
    assert os.listdir(where / "tmp") == []


@pytest.mark.parametrize("group", [True, False], ids=["group", "parent-alone"])
def test_ctrl_c_while_both_children_work(project, group):
    _quiet_130(_interrupted(project, ("words", "index"), waits="words,index", group=group), project)


@pytest.mark.parametrize("group", [True, False], ids=["group", "parent-alone"])
def test_ctrl_c_while_waiting_for_the_words_child(project, group):
    # The index is made: the parent waits for the words alone. It used to wait them out (two
    # minutes here) when the Ctrl-C reached the parent only, and leave the child unreaped.
    _quiet_130(_interrupted(project, ("words", "index"), waits="words", group=group), project)


@pytest.mark.parametrize("group", [True, False], ids=["group", "parent-alone"])
def test_ctrl_c_while_the_index_child_and_its_own_child_read_the_modules(project, group):
    # On a large project the index's child forks one to read half the modules (`wrapper_reads`).
    # The run kills the index's child: its own child, busy, went on (two minutes here).
    run = _interrupted(project, ("words", "reads"), waits="reads", group=group, apart=True)
    assert len([m for m in os.listdir(project / "marks") if m.startswith("reads.")]) == 2
    _quiet_130(run, project)


def test_ctrl_c_while_the_index_child_works(project):
    _quiet_130(_interrupted(project, ("words", "index"), waits="index", group=False), project)


@pytest.mark.parametrize("step", ["words", "index"])
def test_ctrl_c_as_a_child_starts_its_work(project, step):
    _quiet_130(_interrupted(project, (step,), interrupts=step), project)


def test_ctrl_c_as_the_words_child_is_handed_back(project):
    # Between the fork's return and the run keeping the child where its `except` stops it, a
    # Ctrl-C lost the child: it went on cutting (two minutes here), or, killed by the group's
    # Ctrl-C, stayed a zombie until the container's first process reaped it (1 run in ~75 of
    # `test_ctrl_c_as_a_child_starts_its_work[index]` under load).
    _quiet_130(_interrupted(project, ("words-forked",), waits="words", interrupts="words-forked:alone"), project)


def test_ctrl_c_as_the_run_starts_waiting_for_the_words_child(project):
    # Between the index's making and `Pending.wait` entering its own guard: the run's `except`
    # that stops the child ended before the wait, so the busy child went on cutting.
    run = _interrupted(project, ("words-wait",), waits="words", interrupts="words-wait:alone")
    _quiet_130(run, project)


def test_ctrl_c_as_the_reader_child_is_handed_back(project):
    # The same between `forked_call.spawn`'s return and `FirstPart` keeping the reader's pid.
    run = _interrupted(project, ("reader-forked",), waits="reads", interrupts="reader-forked:alone", apart=True)
    _quiet_130(run, project)


def test_ctrl_c_as_a_worker_starts_is_no_traceback(project):
    # Sent before the worker's initializer ran: it printed "Exception in initializer" and a
    # KeyboardInterrupt traceback. The workers are forked with Ctrl-C held until it ignores it.
    _quiet_130(_interrupted(project, ("worker",), interrupts="worker"), project)


def test_a_held_ctrl_c_is_raised_on_release():
    held = held_interrupts.hold()
    # To this thread: a signal sent to the process may be taken by a thread an earlier test
    # left running, which does not hold it, and raise here before the release.
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)
    time.sleep(0.05)  # not delivered while held
    with pytest.raises(KeyboardInterrupt):
        held_interrupts.release(held)
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_a_child_forked_while_held_ends_on_ctrl_c_without_python():
    held = held_interrupts.hold()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.kill(os.getpid(), signal.SIGINT)
            held_interrupts.release_in_child(held)
            os._exit(0)  # not reached: the signal ended it
        finally:
            os._exit(3)  # KeyboardInterrupt would land here
    held_interrupts.release(held)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT


def test_a_failing_index_unmaps_the_words_and_reaps_their_child(tmp_path, monkeypatch):
    for i in range(runner.MIN_PARALLEL_FILES):
        (tmp_path / f"m{i}.py").write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text("")
    todo = sorted(str(p) for p in tmp_path.glob("m*.py"))
    started: list[shared_words.Pending] = []
    original = shared_words.start

    def start(*args):
        pending = original(*args)
        started.append(pending)
        return pending

    def enable(store, paths, listed, meanwhile, apart):
        meanwhile()  # the words' child is forked while the index child works
        raise RuntimeError("the index failed")

    monkeypatch.setattr(shared_words, "start", start)
    monkeypatch.setattr(wrapper_index, "enable", enable)
    settings = Settings(select=("QL101", "QL102"))
    with (
        pytest.raises(RuntimeError, match="the index failed"),
        runner._wrapper_index(None, todo, settings, {}, parallel=True),
    ):
        pass
    (pending,) = started
    assert pending.blob.closed
    with pytest.raises(ChildProcessError):
        os.waitpid(pending.pid, os.WNOHANG)  # reaped already
    assert project_words._SHARED is None
    assert not wrapper_index._ENABLED


def test_a_ctrl_c_python_could_not_raise_is_kept_and_raised(monkeypatch, capsys):
    # Landing in a callback (an import's module-lock weakref), KeyboardInterrupt is "ignored"
    # by Python: printed, dropped, and the run went on to its end with exit 1.
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    lost_interrupts.keep_lost_interrupts()

    class Interrupted:
        def __del__(self):
            raise KeyboardInterrupt

    Interrupted()
    assert capsys.readouterr().err == ""
    with pytest.raises(KeyboardInterrupt):
        lost_interrupts.raise_if_lost()
    lost_interrupts.raise_if_lost()  # raised once


def test_a_ctrl_c_lost_in_a_callback_ends_the_run_with_130(tmp_path, monkeypatch):
    from qlint import cli

    (tmp_path / "m.py").write_text("x = 1\n")
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    monkeypatch.setattr(lost_interrupts, "_lost", True)
    assert cli.main(["check", "--no-cache", str(tmp_path)]) == 130


def test_the_suite_gets_ctrl_c_when_a_shell_started_it_in_the_background():
    # `nohup pytest &` in a script starts pytest with SIGINT ignored, which every child kept:
    # the Ctrl-C tests above all failed together. The conftest gives Ctrl-C back.
    test = "tests/test_interrupted_start.py::test_a_held_ctrl_c_is_raised_on_release"
    pytest_argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test]
    ignoring = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    ignoring += f"os.execv({pytest_argv[0]!r}, {pytest_argv!r})"
    run = subprocess.run([sys.executable, "-c", ignoring], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_index_child_is_forked_before_the_words_child(tmp_path, monkeypatch):
    # The index child sets the pace of a parallel run's start (ExecuTorch: 0.8 s of CPU before
    # a worker can start, the words' child 0.4 s): it goes first, and what the words' child
    # needs (the modules listed and keyed) is done while it works, not before it is forked.
    from qlint.analysis import forked_call

    for i in range(runner.MIN_PARALLEL_FILES):
        (tmp_path / f"m{i}.py").write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text("")
    todo = sorted(str(p) for p in tmp_path.glob("m*.py"))
    order: list[str] = []
    real_call, real_start = forked_call.call, shared_words.start

    def call(work, meanwhile=None):  # forks the index child, then runs `meanwhile`
        order.append("index")
        return real_call(work, meanwhile)

    def start(*args):
        order.append("words")
        return real_start(*args)

    monkeypatch.setattr(forked_call, "call", call)
    monkeypatch.setattr(shared_words, "start", start)
    with runner._wrapper_index(None, todo, Settings(select=("QL101", "QL102")), {}, parallel=True):
        assert project_words._SHARED is not None  # the words were cut, and are shared
    assert order == ["index", "words"]
    assert project_words._SHARED is None and not wrapper_index._ENABLED


def test_the_keys_taken_for_the_words_are_the_runs_and_the_workers_inherit_them(tmp_path):
    # A run whose files hold still takes each module's key once (`ProjectIndex.run_keys`): the
    # keys the words' child is given are those, taken in the parent before the workers fork,
    # not taken again by every process at its first project scan.
    from qlint.analysis.names.project import ProjectIndex

    for i in range(runner.MIN_PARALLEL_FILES):
        (tmp_path / f"m{i}.py").write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text("")
    todo = sorted(str(p) for p in tmp_path.glob("m*.py"))
    kept = str(tmp_path / "m0.py")
    with ProjectIndex.contents_fixed():
        ProjectIndex.run_keys[kept] = ("taken", "before")
        with runner._wrapper_index(None, todo, Settings(select=("QL101", "QL102")), {}, parallel=True):
            keys = dict(ProjectIndex.run_keys)
    assert set(todo) <= set(keys)
    assert keys[kept] == ("taken", "before")  # a key is taken once in a run
    st = os.stat(todo[1])
    assert keys[todo[1]] == (st.st_mtime_ns, st.st_size)
    assert ProjectIndex.run_keys == {}  # outside the run, nothing is kept


def test_a_run_whose_files_may_change_keeps_no_key_for_the_words(tmp_path):
    from qlint.analysis.names.project import ProjectIndex

    for i in range(runner.MIN_PARALLEL_FILES):
        (tmp_path / f"m{i}.py").write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text("")
    todo = sorted(str(p) for p in tmp_path.glob("m*.py"))
    with runner._wrapper_index(None, todo, Settings(select=("QL101", "QL102")), {}, parallel=True):
        assert ProjectIndex.run_keys == {}

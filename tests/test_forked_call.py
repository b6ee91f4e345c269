"""Work done in a forked child (`forked_call`): its answer comes back, its side effects and its
garbage stay in the child, and a child that fails leaves the work to the caller."""

from __future__ import annotations

import os
import sys
import time

import pytest

from qlint.analysis import forked_call

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="fork is used on Linux only")


def test_the_answer_comes_back_and_the_work_ran_elsewhere():
    seen: list[int] = []

    def work():
        seen.append(os.getpid())
        return (frozenset({"insert_op", "Rewriter"}), "digest", os.getpid())

    names, digest, pid = forked_call.call(work)
    assert names == frozenset({"insert_op", "Rewriter"}) and digest == "digest"
    assert pid != os.getpid()
    assert seen == []  # appended in the child's copy of the list only


def test_a_failing_child_leaves_the_work_to_the_caller():
    calls = []

    def work():
        calls.append(os.getpid())
        if os.getpid() != parent:
            raise RuntimeError("only in the child")
        return "here"

    parent = os.getpid()
    assert forked_call.call(work) == "here"
    assert calls == [parent]  # the child's attempt is not seen here; the caller's is


def test_an_exception_is_met_by_the_caller_as_without_a_child():
    def work():
        raise ValueError("bad module")

    with pytest.raises(ValueError, match="bad module"):
        forked_call.call(work)


def test_a_result_marshal_cannot_write_is_worked_out_here():
    class Opaque:
        pass

    assert isinstance(forked_call.call(Opaque), Opaque)


def test_a_killed_child_leaves_the_work_to_the_caller():
    parent = os.getpid()

    def work():
        if os.getpid() != parent:
            os._exit(9)
        return [1, 2]

    assert forked_call.call(work) == [1, 2]


def test_nothing_is_printed_twice(capfd):
    """The child never flushes what the caller had buffered (`os._exit`)."""
    sys.stdout.write("once")
    forked_call.call(lambda: None)
    sys.stdout.flush()
    assert capfd.readouterr().out == "once"


def test_the_callers_own_work_runs_here_while_the_child_works(tmp_path):
    """`meanwhile` overlaps the child: the child waits for what it leaves, which it would never
    see if it ran only after the child's answer came back."""
    signal = tmp_path / "meanwhile-ran"
    ran: list[int] = []

    def meanwhile():
        ran.append(os.getpid())
        signal.write_text("")

    def work():
        deadline = time.monotonic() + 20
        while not signal.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return (signal.exists(), os.getpid())

    seen, pid = forked_call.call(work, meanwhile)
    assert seen and pid != os.getpid()
    assert ran == [os.getpid()]


def test_the_callers_own_work_runs_once_whatever_becomes_of_the_child(monkeypatch):
    parent = os.getpid()
    ran: list[int] = []

    def failing():
        if os.getpid() != parent:
            raise RuntimeError("only in the child")
        return "here"

    assert forked_call.call(failing, lambda: ran.append(os.getpid())) == "here"
    assert ran == [parent]
    monkeypatch.setattr(forked_call.os, "fork", lambda: (_ for _ in ()).throw(OSError("no fork")))
    assert forked_call.call(lambda: "here too", lambda: ran.append(os.getpid())) == "here too"
    assert ran == [parent, parent]


def test_a_failure_of_the_callers_own_work_stops_and_reaps_the_child(monkeypatch):
    forked: list[int] = []
    real_fork = os.fork

    def fork():
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    def work():
        time.sleep(30)
        return None

    def meanwhile():
        raise KeyError("the caller's own failure")

    monkeypatch.setattr(forked_call.os, "fork", fork)
    started = time.monotonic()
    with pytest.raises(KeyError):
        forked_call.call(work, meanwhile)
    assert time.monotonic() - started < 20  # the child was not waited for
    (pid,) = forked
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped already

"""Work done in a forked child (`forked_call`): its answer comes back, its side effects and its
garbage stay in the child, and a child that fails leaves the work to the caller."""

from __future__ import annotations

import os
import sys

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

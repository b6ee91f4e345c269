"""The runtime worker never hangs qlint: timeouts, hangs, kills and crashes, for real.

A check that sleeps past its timeout is interrupted inside the worker (inconclusive,
worker kept); one stuck where the worker's timer cannot reach (C++-like) is killed by the
client's deadline (inconclusive, worker restarted); a worker killed mid-check is noticed
at once (inconclusive, restarted). These run a stand-in check body in a worker that does
not import torch, so restarts are cheap; one test kills the real torch worker while it
builds its reference graphs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from qlint.runtime import checks
from qlint.runtime.client import MAX_RESTARTS, RuntimeChecker
from tests.runtime_support import LIGHT_WORKER, STANDIN_CODE, STANDIN_MODULE, finding, standin

ROOT = Path(__file__).resolve().parents[1]
# The bound on a wait the checker cut short: far above what a loaded machine adds to the 1 s
# timeout (seconds, when a 2-core machine runs the suite beside other work), far below the
# stand-ins' 30 s, which a missed timeout or kill would wait out.
UNDER_THE_STANDINS_SLEEP = 15
posix_only = pytest.mark.skipif(os.name != "posix", reason="SIGALRM and killpg are POSIX")


def kill_during_the_next_check(checker: RuntimeChecker, seconds: float) -> None:
    """SIGKILL the worker `seconds` after the next check request is written to it. Timed
    from the request, not from the call to `verdict`: what it does before it asks (imports,
    the request and its key) took 1.3 s on a loaded machine, so a kill timed from the call
    hit an idle worker and the check ran, unharmed, in a new one."""
    worker = checker.worker
    sent, pid = worker.request, worker.pid

    def request(method, params, timeout):
        if method == "check":
            worker.request = sent  # once
            threading.Timer(seconds, os.kill, (pid, signal.SIGKILL)).start()
        return sent(method, params, timeout)

    worker.request = request


@pytest.fixture
def light(tmp_path, monkeypatch):
    monkeypatch.setitem(checks.CHECKS, STANDIN_CODE, STANDIN_MODULE)
    checker = RuntimeChecker(tmp_path, timeout=1.0, grace=1.5, worker_argv=LIGHT_WORKER)
    yield checker
    checker.close()


@posix_only
def test_a_check_that_sleeps_past_its_timeout_is_inconclusive_and_the_worker_kept(light):
    assert light.verdict(standin("sleep", 0.0)).verdict == "confirmed"
    pid = light.worker.pid
    start = time.monotonic()
    v = light.verdict(standin("sleep", 30.0))
    assert time.monotonic() - start < UNDER_THE_STANDINS_SLEEP
    assert v.verdict == "inconclusive"
    assert v.evidence == "timeout: the check did not finish within 1 s"
    assert len(list(light.cache.directory.rglob("*.json"))) == 1  # the first verdict only: a timeout is not kept
    after = light.verdict(standin("sleep", 0.0))
    assert after.verdict == "confirmed" and light.worker.pid == pid


@posix_only
def test_a_hung_check_is_inconclusive_and_the_worker_restarts(light):
    light.verdict(standin("sleep", 0.0))
    pid = light.worker.pid
    start = time.monotonic()
    v = light.verdict(standin("hang", 30.0))
    elapsed = time.monotonic() - start
    assert 2.0 < elapsed < UNDER_THE_STANDINS_SLEEP, elapsed  # timeout 1 s + grace 1.5 s, then a kill
    assert v.verdict == "inconclusive"
    assert "did not answer within 2.5 s" in v.evidence and "hung" in v.evidence
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    after = light.verdict(standin("sleep", 0.0))
    assert after.verdict == "confirmed"
    assert light.worker.pid != pid


def test_a_worker_killed_mid_check_is_noticed_at_once(light):
    light.verdict(standin("sleep", 0.0))
    kill_during_the_next_check(light, 0.3)
    start = time.monotonic()
    v = light.verdict(standin("sleep", 30.0), timeout=60)
    assert time.monotonic() - start < UNDER_THE_STANDINS_SLEEP
    assert v.verdict == "inconclusive"
    assert f"exited with code {-signal.SIGKILL}" in v.evidence and "restarts" in v.evidence
    assert light.verdict(standin("sleep", 0.0)).verdict == "confirmed"


def test_repeated_crashes_stop_the_restarts(light):
    for _ in range(MAX_RESTARTS):
        v = light.verdict(standin("crash"))
        assert v.verdict == "inconclusive" and "exited with code 3" in v.evidence
    v = light.verdict(standin("crash"))
    assert v.verdict == "inconclusive"  # unjudged, with the reason: not "no check exists"
    assert "failed 3 times in a row; not restarting it again (last: " in v.evidence
    assert "exited with code 3" in v.evidence
    assert not list(light.cache.directory.rglob("*.json"))  # never cached: a fixed worker judges it later


def test_transient_verdicts_are_not_cached(light, tmp_path):
    light.verdict(standin("crash"))
    assert not list(tmp_path.rglob("*.json"))
    assert light.verdict(standin("sleep", 0.0)).verdict == "confirmed"
    assert len(list(tmp_path.rglob("*.json"))) == 1


def test_the_real_worker_killed_while_building_graphs(tmp_path):
    """Kill the torch worker in the middle of its first check, then check again."""
    with RuntimeChecker(tmp_path, timeout=120) as checker:
        checker.worker.start()
        pid = checker.worker.pid
        kill_during_the_next_check(checker, 0.5)
        diag = finding("quantized_decomposed", "quantize_per_channel", fix=".default")
        v = checker.verdict(diag, verify_fix=True)
        assert v.verdict == "inconclusive", v.evidence
        assert "exited with code" in v.evidence
        again = checker.verdict(diag, verify_fix=True)
        assert again.verdict == "confirmed", again.evidence
        assert checker.worker.pid != pid


def test_the_worker_exits_when_qlint_dies(tmp_path):
    """qlint killed with SIGKILL cannot clean up: the worker notices its closed stdin."""
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from qlint.runtime import checks
        checks.CHECKS[{STANDIN_CODE!r}] = {STANDIN_MODULE!r}
        from qlint.runtime.client import RuntimeChecker
        from tests.runtime_support import LIGHT_WORKER, standin
        checker = RuntimeChecker(None, worker_argv=LIGHT_WORKER)
        checker.verdict(standin("sleep", 0.0))
        print(checker.worker.pid, flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        worker_pid = int(proc.stdout.readline())
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(worker_pid, 0)
        except ProcessLookupError:
            return
        # A zombie still answers kill(0); it is gone once nobody can wait for it.
        if _is_zombie(worker_pid):
            return
        time.sleep(0.1)
    pytest.fail("the worker outlived qlint")


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return False


def test_a_worker_that_cannot_start_is_inconclusive_with_the_reason(tmp_path):
    broken = [sys.executable, "-c", "raise ImportError('libtorch_cpu.so: cannot open shared object file')"]
    with RuntimeChecker(tmp_path, worker_argv=broken) as checker:
        v = checker.verdict(finding("aten", "relu", fix=".default"))
    assert v.verdict == "inconclusive"
    assert v.evidence == (
        "the runtime worker failed to start: the runtime worker exited with code 1 "
        "(ImportError: libtorch_cpu.so: cannot open shared object file)"
    )
    assert not list(tmp_path.rglob("*.json"))  # not cached: the next check tries again


def test_a_worker_whose_interpreter_does_not_exist_is_inconclusive(tmp_path):
    missing = tmp_path / "no-such-venv" / "bin" / "python"
    with RuntimeChecker(tmp_path, worker_argv=[str(missing), "-c", "pass"]) as checker:
        first = checker.verdict(finding("aten", "relu", fix=".default"))
        assert first.verdict == "inconclusive"
        assert first.evidence.startswith("the runtime worker failed to start: ")
        assert str(missing) in first.evidence
        for _ in range(MAX_RESTARTS):
            last = checker.verdict(finding("aten", "relu", fix=".default"))
    assert last.verdict == "inconclusive"
    assert "not restarting it again (last: the runtime worker failed to start: " in last.evidence

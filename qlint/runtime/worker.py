"""The runtime worker: imports torch and torchao once, then serves checks until stdin closes.

Protocol: one JSON object per line. The worker first writes
`{"id": 0, "result": {"hello": {...versions, pid}}}` once its imports are done; then, for
each request `{"id": n, "method": "check", "params": {...}}` it writes
`{"id": n, "result": {verdict, evidence, fix_verified, seconds}}`. `{"method": "shutdown"}`
or end of input stops it.

Everything torch, its extensions and the checks print goes to stderr: the real stdout file
descriptor is kept private for the protocol, so a stray `print` cannot corrupt a reply.

A check gets `params["timeout"]` seconds. On POSIX an interval timer interrupts it with
`CheckTimeout` between Python bytecodes and the worker answers `inconclusive` (timeout) and
keeps serving with its caches intact. Code stuck inside C++ cannot be interrupted that
way; the client's own, slightly longer deadline kills the worker then.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import time
import traceback
import warnings
from contextlib import contextmanager
from typing import Any, TextIO

from qlint.runtime.checks import check_module, evidence_problem


class CheckTimeout(BaseException):
    """Raised inside a check when its time is up (BaseException: `except Exception` in a
    check or in torch must not swallow it)."""


@contextmanager
def _deadline(seconds: float | None):
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum, frame):
        raise CheckTimeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _versions() -> dict[str, Any]:
    from qlint.runtime.cache import installed_versions

    return installed_versions()


def run_check(params: dict[str, Any]) -> dict[str, Any]:
    """Run one check under its deadline; never raises (a failure is `inconclusive`)."""
    code = params.get("code", "")
    timeout = params.get("timeout")
    start = time.perf_counter()
    module = check_module(code)
    if module is None:
        return {"verdict": "skipped", "evidence": f"{code} has no runtime check yet", "fix_verified": None}
    problem = evidence_problem(code, params.get("evidence"))
    if problem is not None:
        return {"verdict": "skipped", "evidence": f"malformed evidence for {code}: {problem}", "fix_verified": None}
    try:
        with _deadline(timeout):
            record = importlib.import_module(module).run(params)
    except CheckTimeout:
        # The check ran and did not finish: nothing is known about the finding, which is
        # `inconclusive` (not `skipped`, which means no check applies here).
        record = {
            "verdict": "inconclusive",
            "evidence": f"timeout: the check did not finish within {timeout:g} s",
            "fix_verified": None,
            "transient": True,
        }
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        record = {
            "verdict": "inconclusive",
            "evidence": f"the check failed: {type(exc).__name__}: {exc}",
            "fix_verified": None,
            "transient": True,
        }
    record["seconds"] = round(time.perf_counter() - start, 3)
    return record


def serve(stdin: TextIO, out: TextIO) -> None:
    def reply(message: dict[str, Any]) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    reply({"id": 0, "result": {"hello": {**_versions(), "pid": os.getpid()}}})
    for line in stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            reply({"id": None, "error": "invalid JSON"})
            continue
        method = message.get("method")
        if method == "shutdown":
            break
        if method == "check":
            reply({"id": message.get("id"), "result": run_check(message.get("params") or {})})
        else:
            reply({"id": message.get("id"), "error": f"unknown method {method!r}"})


def main(preload: bool = True) -> None:
    # The user's working directory must not shadow anything: a `torch/` source checkout
    # there would otherwise be imported instead of the installed torch.
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]
    # Keep the real stdout for the protocol; everything else that writes to fd 1 or
    # sys.stdout (C++ logging, prints in torch or in a user's model factory) goes to stderr.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    warnings.simplefilter("ignore")
    if preload:
        # The one cold cost, paid before the hello; it also registers the
        # quantized_decomposed and torchao op namespaces the checks resolve.
        import torch  # noqa: F401
        import torchao.quantization.pt2e  # noqa: F401

    serve(sys.stdin, protocol)


if __name__ == "__main__":
    main()

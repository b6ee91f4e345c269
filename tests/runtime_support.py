"""Shared pieces of the runtime tests: one warm worker for the whole session, findings
built the way QL101/QL102 build them, and a stand-in check for the process-control tests.

The stand-in (`run`, registered under a code no rule uses) lets the tests make a check
sleep, hang where the worker's timer cannot interrupt it, or crash, inside a real worker
process spoken to over the real protocol. Only the check body is a stand-in.
"""

from __future__ import annotations

import atexit
import functools
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from qlint.diagnostic import Applicability, Diagnostic, Edit, Fix, Range
from qlint.runtime.client import RuntimeChecker

STANDIN_CODE = "QL999"
STANDIN_MODULE = "tests.runtime_support"
# A worker that serves the stand-in without importing torch: process control is what these
# tests check, and a restart then costs a fraction of a second instead of seconds.
LIGHT_WORKER = [
    sys.executable,
    "-c",
    f"from qlint.runtime.checks import CHECKS; CHECKS[{STANDIN_CODE!r}] = {STANDIN_MODULE!r}; "
    "from qlint.runtime.worker import main; main(preload=False)",
]


@functools.cache
def shared_checker() -> RuntimeChecker:
    """One worker for every runtime test of the session (torch and torchao import once)."""
    directory = Path(tempfile.mkdtemp(prefix="qlint-runtime-tests-"))
    checker = RuntimeChecker(directory, timeout=120)
    checker.cache = None  # every test really runs its check
    atexit.register(checker.close)
    return checker


def finding(
    namespace: str,
    op: str,
    *,
    kind: str = "comparison",
    fix: str | None = None,
    overload: str | None = None,
    dialect: str = "aten",
    code: str = "QL101",
    spelled: str | None = None,
) -> Diagnostic:
    """A finding shaped like the rule's: range on the packet expression, fix as its edits
    (`.default` appended, or a replacement text listing elements)."""
    spelled = spelled or f"torch.ops.{namespace}.{op}"
    where = Range.of(7, 8, 7, 8 + len(spelled))
    edits: tuple[Edit, ...] = ()
    if fix is not None:
        edits = (Edit(Range(where.end, where.end), fix),) if fix.startswith(".") else (Edit(where, fix),)
    return Diagnostic(
        code,
        "packet-matcher" if code == "QL101" else "packet-insertion",
        f"`{spelled}` is an OpOverloadPacket",
        "snippet.py",
        where,
        Fix(Applicability.SAFE, "Use the overload", edits) if fix is not None else None,
        evidence={
            "kind": kind,
            "ops": [{"namespace": namespace, "op": op, "overload": overload, "dialect": dialect}],
            "carried": [],
            "overloads": [],
        },
    )


def standin(mode: str, seconds: float = 0.0) -> Diagnostic:
    return Diagnostic(
        STANDIN_CODE, "standin", mode, "snippet.py", Range.of(1, 0, 1, 1), evidence={"mode": mode, "seconds": seconds}
    )


def run(params: dict) -> dict:
    """The stand-in check, executed inside the worker."""
    mode, seconds = params["evidence"]["mode"], params["evidence"]["seconds"]
    if mode == "hang":
        # What a check stuck in C++ looks like to the worker: its timer cannot interrupt.
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
    if mode == "crash":
        os._exit(3)
    time.sleep(seconds)
    return {"verdict": "confirmed", "evidence": f"slept {seconds} s in pid {os.getpid()}", "fix_verified": None}

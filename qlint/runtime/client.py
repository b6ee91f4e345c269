"""The linter side of the runtime checker: a worker process, its deadlines, and verdicts.

Nothing here imports torch. `WorkerProcess` speaks the line-delimited JSON protocol of
`qlint.runtime.worker`; `RuntimeChecker` turns findings into verdicts through the on-disk
cache and the worker, and makes sure that a killed, crashed or hanging worker never hangs
qlint: a crash becomes `inconclusive` and the worker restarts on the next check; a worker
that does not answer within the check's timeout plus a grace period is killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qlint import DISTRIBUTION
from qlint.diagnostic import Diagnostic, RuntimeVerdict
from qlint.runtime.cache import VerdictCache, checker_fingerprint, installed_versions
from qlint.runtime.checks import has_check, runs_user_models
from qlint.runtime.request import build_request, request_key

DEFAULT_TIMEOUT = 60.0
STARTUP_TIMEOUT = 180.0
MAX_RESTARTS = 3  # consecutive failures before the worker is no longer restarted
# The worker runs in qlint's own package root, so the working directory that Python puts
# first on sys.path for `-c` holds only qlint while this line imports it; `main` then drops
# that entry. The user's directory (a `torch/` source checkout, say) never shadows anything.
WORKER_BOOT = "from qlint.runtime.worker import main; main()"


class WorkerDied(Exception):
    """The worker exited (crash, kill) before answering."""


class WorkerHung(Exception):
    """The worker did not answer before the deadline; it has been killed."""


def _last_error(path: Path | None) -> str:
    """The last `SomeError: message` line the worker logged (its traceback's last line)."""
    if path is None:
        return ""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[-200:]
    except OSError:
        return ""
    errors = [line.strip() for line in lines if re.match(r"^\s*[A-Za-z_.]*(Error|Exception|Interrupt)\b", line)]
    return errors[-1][:300] if errors else ""


class WorkerProcess:
    """One worker child process (`python -c WORKER_BOOT`) and a thread that reads its replies.

    The reader thread turns stdout lines into queue items (None at end of file), so every
    wait has a deadline and a dead worker is noticed at once, on every platform.
    """

    def __init__(self, argv: Sequence[str] | None = None, log_path: Path | None = None):
        self.argv = list(argv) if argv else [sys.executable, "-c", WORKER_BOOT]
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self.hello: dict[str, Any] = {}
        self._replies: queue.Queue = queue.Queue()
        self._next_id = 1
        self._temporary_log = False  # a log of our own in the temp directory, removed on close

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self, timeout: float = STARTUP_TIMEOUT) -> dict[str, Any]:
        env = dict(os.environ)
        # The worker must import this very qlint, also when it runs from a source tree.
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        env.setdefault("PYTHONUNBUFFERED", "1")
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="qlint-runtime-", suffix=".log")
            os.close(fd)
            self.log_path, self._temporary_log = Path(name), True
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        # One log per worker life: the tail of it explains a crash.
        log = open(self.log_path, "wb")  # noqa: SIM115 - handed to the child, closed below
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=env,
                cwd=package_root,
                # Its own process group, so a kill reaches anything it spawned.
                start_new_session=(os.name == "posix"),
            )
        finally:
            log.close()
        self._replies = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc, self._replies), daemon=True).start()
        reply = self._wait(0, timeout, what="start")
        self.hello = reply.get("result", {}).get("hello", {})
        return self.hello

    @staticmethod
    def _read(proc: subprocess.Popen, replies: queue.Queue) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            try:
                replies.put(json.loads(raw))
            except ValueError:
                continue  # not a protocol line; cannot happen unless fd 1 leaks
        replies.put(None)

    def _wait(self, want_id: int, timeout: float, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise WorkerHung(f"the runtime worker did not {what} within {timeout:g} s")
            try:
                reply = self._replies.get(timeout=remaining)
            except queue.Empty:
                continue
            if reply is None:
                code = self.proc.wait() if self.proc is not None else None
                self.proc = None
                error = _last_error(self.log_path)
                raise WorkerDied(f"the runtime worker exited with code {code}" + (f" ({error})" if error else ""))
            if reply.get("id") == want_id:
                return reply

    def request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        if not self.alive:
            raise WorkerDied("the runtime worker is not running")
        assert self.proc is not None and self.proc.stdin is not None
        message_id = self._next_id
        self._next_id += 1
        try:
            self.proc.stdin.write((json.dumps({"id": message_id, "method": method, "params": params}) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.kill()
            raise WorkerDied("the runtime worker closed its input") from None
        reply = self._wait(message_id, timeout, what="answer")
        if "error" in reply:
            raise WorkerDied(f"protocol error: {reply['error']}")
        return reply["result"]

    def kill(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if os.name == "posix":
                os.killpg(proc.pid, signal.SIGKILL)  # the group this process created
            else:
                proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)

    def close(self) -> None:
        """Ask politely, then make sure: closing stdin ends the serve loop."""
        proc = self.proc
        if proc is not None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(timeout=5)
                self.proc = None
            except (OSError, subprocess.TimeoutExpired):
                self.kill()
        if self._temporary_log and self.log_path is not None:
            with contextlib.suppress(OSError):
                self.log_path.unlink()
            self.log_path, self._temporary_log = None, False


def _verdict(record: dict[str, Any]) -> RuntimeVerdict:
    return RuntimeVerdict(
        verdict=record["verdict"],
        evidence=record.get("evidence", ""),
        fix_verified=record.get("fix_verified"),
        seconds=float(record.get("seconds", 0.0)),
    )


def _skipped(reason: str) -> RuntimeVerdict:
    return RuntimeVerdict("skipped", reason, None, 0.0)


def _inconclusive(reason: str, seconds: float = 0.0) -> RuntimeVerdict:
    return RuntimeVerdict("inconclusive", reason, None, round(seconds, 3))


class RuntimeChecker:
    """Verdicts for findings, one worker kept warm across calls (the language server keeps
    one for the whole session). Use as a context manager, or call `close()`."""

    def __init__(
        self,
        cache_dir: Path | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        grace: float = 10.0,
        startup_timeout: float = STARTUP_TIMEOUT,
        worker_argv: Sequence[str] | None = None,
        models: tuple[str, ...] = (),
        root: Path | None = None,
        versions: dict[str, str | None] | None = None,
    ):
        self.timeout = timeout
        self.grace = grace
        self.startup_timeout = startup_timeout
        self.models = models  # `[tool.qlint.runtime] models`: user factories, opt-in
        self.root = root  # where those factories' modules are imported from
        self.versions = versions if versions is not None else installed_versions()
        self.cache = VerdictCache(cache_dir) if cache_dir is not None else None
        self.log_path = (cache_dir / "worker.log") if cache_dir is not None else None
        self.worker = WorkerProcess(worker_argv, self.log_path)
        self.crashes = 0  # consecutive
        self.last_failure = ""  # why the worker last failed to start or answer
        self._memo: dict[str, RuntimeVerdict] = {}  # deterministic verdicts of this process

    def __enter__(self) -> RuntimeChecker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.worker.close()

    def unavailable(self) -> str | None:
        """Why no check can run at all here, or None."""
        missing = [name for name in ("torch", "torchao") if not self.versions.get(name)]
        if missing:
            return f'{" and ".join(missing)} not installed (pip install "{DISTRIBUTION}[runtime]")'
        return None

    def verdict(self, diag: Diagnostic, *, verify_fix: bool = True, timeout: float | None = None) -> RuntimeVerdict:
        if not has_check(diag.code):
            return _skipped(f"{diag.code} has no runtime check yet")
        reason = self.unavailable()
        if reason is not None:
            return _skipped(reason)
        uses_models = bool(self.models) and runs_user_models(diag.code)
        request = build_request(
            diag,
            verify_fix=verify_fix,
            models=self.models if uses_models else (),
            root=str(self.root) if self.root is not None else None,
        )
        key = request_key(request, self.versions, checker_fingerprint())
        if key in self._memo:
            return self._memo[key]
        # A check that runs the user's own model depends on their code, not only on the
        # request: never answer it from the disk cache.
        cacheable = not uses_models
        if self.cache is not None and cacheable:
            hit = self.cache.get(key)
            if hit is not None:
                self._memo[key] = hit
                return hit
        result, transient = self._ask(request, timeout if timeout is not None else self.timeout)
        if not transient:
            self._memo[key] = result
            if self.cache is not None and cacheable:
                self.cache.put(key, result)
        return result

    def _ask(self, request: dict[str, Any], timeout: float) -> tuple[RuntimeVerdict, bool]:
        """The worker's verdict, and whether it is transient (timeout, crash: not cached)."""
        # A worker that cannot run (it does not start, or keeps dying) leaves the finding
        # unjudged, not out of scope: `inconclusive` with the reason, so the editor and the
        # CLI say why no verdict came, where `skipped` would read as "no check exists".
        if self.crashes >= MAX_RESTARTS:
            reason = f"the runtime worker failed {self.crashes} times in a row; not restarting it again"
            if self.last_failure:
                reason += f" (last: {self.last_failure})"
            return _inconclusive(reason), True
        start = time.perf_counter()
        if not self.worker.alive:
            try:
                self.worker.start(self.startup_timeout)
            except (WorkerDied, WorkerHung, OSError) as exc:
                self.crashes += 1
                self.last_failure = f"the runtime worker failed to start: {exc}"
                return _inconclusive(self.last_failure, time.perf_counter() - start), True
        try:
            record = self.worker.request("check", {**request, "timeout": timeout}, timeout + self.grace)
        except (WorkerHung, WorkerDied) as exc:
            self.crashes += 1
            how = "hung; it was killed" if isinstance(exc, WorkerHung) else "died during the check"
            self.last_failure = f"{exc} ({how} and restarts on the next check)"
            return _inconclusive(self.last_failure, time.perf_counter() - start), True
        self.crashes = 0
        return _verdict(record), bool(record.get("transient"))

    def attach(
        self, diagnostics: Sequence[Diagnostic], *, verify_fixes: bool, timeout: float | None = None
    ) -> list[Diagnostic]:
        return [d.with_runtime(self.verdict(d, verify_fix=verify_fixes, timeout=timeout)) for d in diagnostics]

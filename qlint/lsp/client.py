"""A small LSP client over stdio, for driving `qlint server` from scripts.

The test suite and `benchmarks/lsp_bench.py` use it. It is written against the wire format
(Content-Length framing, JSON-RPC 2.0), not pygls, so the server's output is checked
independently of the library that produces it. A reader thread files every message with
the time it arrived; requests from the server are answered with null; every wait is
bounded, so a server that hangs fails its caller instead of hanging it. Standard library
only: it never imports the server.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

DEFAULT_TIMEOUT = 10.0
# The reply to `initialize` waits for a fresh interpreter to import the server; on a loaded
# machine that alone can pass DEFAULT_TIMEOUT. A healthy server answers at once, so the long
# wait costs nothing.
STARTUP_TIMEOUT = 60.0
Predicate = Callable[[dict], bool]


class LspTimeout(AssertionError):
    """No matching message in time (an AssertionError: in a test it is a failure)."""


class LspErrorReply(AssertionError):
    """The server answered a request with an error."""


def server_env() -> dict[str, str]:
    """This process's environment, with the qlint it imported first on PYTHONPATH: the
    server it starts runs the same code (a checkout, not some installed copy)."""
    here = str(Path(__file__).resolve().parents[2])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}


class LspClient:
    """JSON-RPC over the server's stdin/stdout."""

    def __init__(self, cwd: Path, argv: list[str] | None = None, env: dict[str, str] | None = None):
        self.proc = subprocess.Popen(
            argv or [sys.executable, "-m", "qlint", "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env if env is not None else server_env(),
        )
        self.inbox: queue.Queue[tuple[float, dict]] = queue.Queue()
        self.received: list[dict] = []  # every notification, in order
        self.requests: list[dict] = []  # every request from the server (each answered with null)
        self.stderr: list[bytes] = []
        self.arrived = 0.0  # perf_counter() when the last message a wait returned was read
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                header = out.readline()
                if not header:
                    return
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            body = out.read(length)
            self.inbox.put((time.perf_counter(), json.loads(body)))

    # -- sending --------------------------------------------------------------------------

    @staticmethod
    def frame(message: dict) -> bytes:
        body = json.dumps(message).encode("utf-8")
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    def send(self, *messages: dict) -> float:
        """Several messages go out in one write: the server reads them back to back.
        Returns perf_counter() right after the write."""
        self.proc.stdin.write(b"".join(self.frame(m) for m in messages))
        self.proc.stdin.flush()
        return time.perf_counter()

    def notify(self, method: str, params) -> float:
        return self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params=None, timeout: float | None = None):
        if timeout is None:
            timeout = STARTUP_TIMEOUT if method == "initialize" else DEFAULT_TIMEOUT
        self._next_id += 1
        msg_id = self._next_id
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        reply = self.wait(lambda m: m.get("id") == msg_id and "method" not in m, timeout, f"reply to {method}")
        if "error" in reply:
            raise LspErrorReply(reply["error"])
        return reply["result"]

    # -- waiting --------------------------------------------------------------------------

    def wait(self, predicate: Predicate, timeout: float = DEFAULT_TIMEOUT, what: str = "a message") -> dict:
        """The next message that matches (answering the server's requests meanwhile)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                err = b"".join(self.stderr).decode(errors="replace")[-2000:]
                raise LspTimeout(f"timed out waiting for {what}; server stderr:\n{err}")
            try:
                stamp, message = self.inbox.get(timeout=remaining)
            except queue.Empty:
                continue
            if "method" in message and "id" in message:  # a request from the server
                self.requests.append(message)
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "method" in message:
                self.received.append(message)
            if predicate(message):
                self.arrived = stamp
                return message

    def poll(self, until: float) -> list[tuple[float, dict]]:
        """Every message that arrives before `perf_counter()` reaches `until`, with the time
        it was read (filed and answered as `wait` does): for clients that keep typing
        whatever the server publishes."""
        got = []
        while True:
            remaining = until - time.perf_counter()
            try:
                stamp, message = (
                    self.inbox.get(timeout=max(remaining, 0.0)) if remaining > 0 else self.inbox.get_nowait()
                )
            except queue.Empty:
                return got
            if "method" in message and "id" in message:
                self.requests.append(message)
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "method" in message:
                self.received.append(message)
            got.append((stamp, message))

    def wait_for(self, method: str, predicate=lambda params: True, timeout: float = DEFAULT_TIMEOUT, since: int = 0):
        """The params of the first notification that matches, among those received from
        index `since` on or arriving."""
        for message in self.received[since:]:
            if message["method"] == method and predicate(message["params"]):
                return message["params"]
        return self.wait(lambda m: m.get("method") == method and predicate(m["params"]), timeout, method)["params"]

    def diagnostics(self, uri: str, version: int, timeout: float = DEFAULT_TIMEOUT) -> list[dict]:
        def wanted(params: dict) -> bool:
            return params["uri"] == uri and params.get("version") == version

        return self.wait_for("textDocument/publishDiagnostics", wanted, timeout)["diagnostics"]

    def server_request(self, method: str, timeout: float = DEFAULT_TIMEOUT) -> dict:
        for message in self.requests:
            if message["method"] == method:
                return message
        return self.wait(lambda m: m.get("method") == method and "id" in m, timeout, method)

    def debug_timings_until(
        self, condition: Predicate, timeout: float = STARTUP_TIMEOUT, what: str = "the server's checks"
    ) -> tuple[dict, list[dict]]:
        """Ask `qlint/debugTimings` until its reply meets `condition` (polled, every 10 ms):
        that reply, and the checks that ended meanwhile (each reply takes its own)."""
        deadline = time.monotonic() + timeout
        ended: list[dict] = []
        while True:
            reply = self.request("qlint/debugTimings")
            ended += reply["checks"]
            if condition(reply):
                return reply, ended
            if time.monotonic() > deadline:
                raise LspTimeout(f"timed out waiting for {what}; last: {reply}")
            time.sleep(0.01)

    def idle(self, timeout: float = STARTUP_TIMEOUT) -> list[dict]:
        """Wait until no check is running or due (the rechecks an edit set off have run);
        every notification those checks sent has arrived by then (one stream, in order).
        The checks that ended meanwhile."""
        return self.debug_timings_until(lambda r: r["running"] is None and not r["due"], timeout, "no check due")[1]

    # -- the usual conversation -----------------------------------------------------------

    def initialize(self, root: Path, encodings: list[str] | None = None, capabilities: dict | None = None) -> dict:
        if capabilities is None:
            capabilities = {
                "workspace": {"workspaceEdit": {"documentChanges": True}},
                "textDocument": {"publishDiagnostics": {"dataSupport": True, "relatedInformation": True}},
            }
        if encodings:
            capabilities["general"] = {"positionEncodings": encodings}
        result = self.request(
            "initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": capabilities}
        )
        self.notify("initialized", {})
        return result

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = path.as_uri()
        item = {"uri": uri, "languageId": "python", "version": version, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": item})
        return uri

    @staticmethod
    def change(uri: str, version: int, text: str) -> dict:
        """A whole-text didChange (to `send`, possibly with others in one write)."""
        return {
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        }

    def code_actions(self, uri: str, diagnostics: list[dict], only: list[str] | None = None) -> list[dict]:
        origin = {"line": 0, "character": 0}
        rng = diagnostics[0]["range"] if diagnostics else {"start": origin, "end": origin}
        context: dict = {"diagnostics": diagnostics}
        if only is not None:
            context["only"] = only
        params = {"textDocument": {"uri": uri}, "range": rng, "context": context}
        return self.request("textDocument/codeAction", params) or []

    def rss_kb(self) -> int:
        """The server's resident memory (Linux)."""
        with open(f"/proc/{self.proc.pid}/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))

    def shutdown(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        """The polite end: `shutdown`, `exit`, and the server's exit code."""
        self.request("shutdown", None, timeout)
        self.notify("exit", None)
        return self.proc.wait(timeout=timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=DEFAULT_TIMEOUT)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            stream.close()

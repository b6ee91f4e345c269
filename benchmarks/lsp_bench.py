"""Language-server latency and memory: edit -> publishDiagnostics, next to `qlint check`.

Targets (issue 11): p95 ≤ 100 ms from the edit to the publish, debounce included, on a
~2,000-line module with findings; resident memory grows ≤ 10 % over 1,000 edits.

    python benchmarks/lsp_bench.py                 # a generated 2,000-line backend module
    python benchmarks/lsp_bench.py FILE --edits 200

The server is the real `qlint server` process over stdio. Each timed edit is one keystroke
(an incremental change of one line), sent after the previous version was published; the
time runs from writing the change to reading the publish for that version. The plain
`qlint check` of the same file (a fresh process, no cache) runs in the same session, so a
loaded machine slows both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from queue import Empty, Queue

ROOT = Path(__file__).resolve().parents[1]

BLOCK = '''

def fold_{i}(gm):
    """Fold the quantize op of weight {i} into its constant."""
    changed = False
    for node in list(gm.graph.nodes):
        if node.op != "call_function":
            continue
        if node.target in (torch.ops.aten.linear.default, torch.ops.aten.conv2d.default):
            weight = node.args[1]
            if getattr(weight, "target", None) == torch.ops.quantized_decomposed.dequantize_per_tensor.default:
                scale, zero_point = weight.args[1], weight.args[2]
                node.meta["qparams_{i}"] = (scale, zero_point)
                changed = True
        elif str(node.target).startswith("aten.relu"):
            node.meta["fused_{i}"] = True
    if changed:
        gm.graph.lint()
        gm.recompile()
    return changed
'''
FINDINGS = """

def is_dequant(node):
    return node.target == torch.ops.quantized_decomposed.dequantize_per_tensor


def is_relu(node):
    return node.target == torch.ops.aten.relu


CHOOSE = {torch.ops.torchao.choose_qparams_affine}


def count_choose(gm):
    return sum(1 for n in gm.graph.nodes if n.target in CHOOSE)
"""


def generated_module(lines: int = 2000) -> str:
    text = '"""A backend pass module (generated for the benchmark)."""\n\nimport torch\n' + FINDINGS
    i = 0
    while text.count("\n") < lines:
        text += BLOCK.format(i=i)
        i += 1
    return text


class Server:
    """`qlint server` and a reader thread that timestamps every message."""

    def __init__(self, cwd: Path):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "qlint", "server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            env=env,
        )
        self.inbox: Queue = Queue()
        self._id = 0
        threading.Thread(target=self._read, daemon=True).start()

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
            message = json.loads(out.read(length))
            self.inbox.put((time.perf_counter(), message))

    def send(self, message: dict) -> float:
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return time.perf_counter()

    def request(self, method: str, params) -> dict:
        self._id += 1
        self.send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self._id and "method" not in m)[1]

    def notify(self, method: str, params) -> float:
        return self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, predicate, timeout: float = 120.0) -> tuple[float, dict]:
        deadline = time.monotonic() + timeout
        while True:
            try:
                stamp, message = self.inbox.get(timeout=max(deadline - time.monotonic(), 0.001))
            except Empty:
                raise SystemExit("the server did not answer in time") from None
            if "method" in message and "id" in message:  # a request from the server
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            if predicate(message):
                return stamp, message

    def published(self, uri: str, version: int) -> tuple[float, dict]:
        def match(m: dict) -> bool:
            p = m.get("params") or {}
            return m.get("method") == "textDocument/publishDiagnostics" and p["uri"] == uri and p["version"] == version

        return self.wait(match)

    def rss_kb(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:"))

    def close(self) -> None:
        self.request("shutdown", None)
        self.notify("exit", None)
        self.proc.wait(timeout=30)


def keystroke(uri: str, version: int, line: int) -> dict:
    """Type one character into a comment line (`line` is 0-based), after its `# `."""
    pos = {"line": line, "character": 2}
    change = {"range": {"start": pos, "end": pos}, "text": "x"}
    return {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def cli_check(path: Path, runs: int = 3) -> tuple[float, int]:
    """Median wall time of `qlint check --no-cache FILE` and its finding count."""
    times, count = [], 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    for _ in range(runs):
        start = time.perf_counter()
        cmd = [sys.executable, "-m", "qlint", "check", "--no-cache", "--exit-zero", "--output-format", "json"]
        cmd.append(str(path))
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=path.parent, check=True).stdout
        times.append(time.perf_counter() - start)
        count = len(json.loads(out))
    return statistics.median(times), count


def engine_check(path: Path, text: str, runs: int = 10) -> float:
    """Median seconds of the engine alone on the same text, in this process (what the
    server cannot avoid; the rest of its latency is its own)."""
    from qlint.analysis.names.project import ProjectIndex
    from qlint.config import load_settings
    from qlint.engine import check_source

    settings = load_settings([str(path.parent)])
    project = ProjectIndex()
    times = []
    for i in range(runs):
        start = time.perf_counter()
        check_source(f"# {'x' * i}\n" + text, str(path), settings, project)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", help="a Python module (default: a generated 2,000-line one)")
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--memory-edits", type=int, default=1000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="qlint-lsp-bench-") as tmp:
        work = Path(tmp)
        text = Path(args.file).read_text() if args.file else generated_module()
        path = work / "module.py"
        path.write_text("# " + "\n" + text)  # line 0: a comment to type into
        text = path.read_text()
        uri = path.as_uri()

        cli_seconds, findings = cli_check(path)
        engine_seconds = engine_check(path, text)

        server = Server(work)
        caps = {"textDocument": {"publishDiagnostics": {"dataSupport": True}}}
        server.request("initialize", {"processId": os.getpid(), "rootUri": work.as_uri(), "capabilities": caps})
        server.notify("initialized", {})
        start = server.notify(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}
        )
        opened, message = server.published(uri, 1)
        published = len(message["params"]["diagnostics"])

        version = 1
        for _ in range(10):  # warm-up: the adaptive pause learns the check's cost
            version += 1
            server.notify("textDocument/didChange", keystroke(uri, version, 0))
            server.published(uri, version)

        latencies = []
        for _ in range(args.edits):
            version += 1
            sent = server.notify("textDocument/didChange", keystroke(uri, version, 0))
            received, _ = server.published(uri, version)
            latencies.append(received - sent)

        rss_before = server.rss_kb()
        burst = 5  # typing faster than the server checks: coalesced into one check per burst
        for _ in range(args.memory_edits // burst):
            for _ in range(burst):
                version += 1
                server.notify("textDocument/didChange", keystroke(uri, version, 0))
            server.published(uri, version)
        rss_after = server.rss_kb()
        server.close()

    ms = [1000 * s for s in latencies]
    print(f"module: {text.count(chr(10))} lines, {findings} findings (server published {published})")
    print(f"qlint check (fresh process, no cache), median of 3: {1000 * cli_seconds:.0f} ms")
    print(f"server open -> first publish: {1000 * (opened - start):.0f} ms")
    print(
        f"edit -> publish over {len(ms)} edits: p50 {percentile(ms, 0.5):.1f} ms, "
        f"p95 {percentile(ms, 0.95):.1f} ms, max {max(ms):.1f} ms (target p95 <= 100 ms)"
    )
    print(f"engine alone (check_source in this process), median of 10: {1000 * engine_seconds:.1f} ms")
    print(
        f"p50 relative to the plain check: {percentile(ms, 0.5) / (1000 * cli_seconds):.2f}x; "
        f"server's own share of p50: {percentile(ms, 0.5) - 1000 * engine_seconds:.1f} ms"
    )
    growth = 100 * (rss_after - rss_before) / rss_before
    print(
        f"server RSS: {rss_before / 1024:.1f} MiB before, {rss_after / 1024:.1f} MiB after "
        f"{args.memory_edits} edits ({growth:+.1f} %, target <= 10 %)"
    )


if __name__ == "__main__":
    main()

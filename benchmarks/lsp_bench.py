"""Language-server latency and memory: edit -> publishDiagnostics, next to `qlint check`.

Targets (issue 11): p95 ≤ 100 ms from the edit to the publish, debounce included, on a
~2,000-line module with findings; resident memory grows ≤ 10 % over 1,000 edits.

    python benchmarks/lsp_bench.py                 # a generated 2,000-line backend module
    python benchmarks/lsp_bench.py FILE --edits 200
    python benchmarks/lsp_bench.py --server-cmd "python /elsewhere/run_server.py"   # compare builds

The server is the real `qlint server` process over stdio, driven by `qlint.lsp.client`.
Each timed edit is one keystroke (an incremental change of one line), sent after the
previous version was published; the time runs from writing the change to reading the
publish for that version. The plain `qlint check` of the same file (a fresh process, no
cache) and the engine alone (`check_source` in this process, right after each edit's
publish) are measured in the same session, so a loaded machine slows all of them alike:
the ratios are the figures to compare across runs.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: this checkout's qlint, client and server alike

from qlint.lsp.client import LspClient, server_env  # noqa: E402

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
    for _ in range(runs):
        start = time.perf_counter()
        cmd = [sys.executable, "-m", "qlint", "check", "--no-cache", "--exit-zero", "--output-format", "json"]
        cmd.append(str(path))
        out = subprocess.run(cmd, capture_output=True, text=True, env=server_env(), cwd=path.parent, check=True).stdout
        times.append(time.perf_counter() - start)
        count = len(json.loads(out))
    return statistics.median(times), count


class Engine:
    """The engine alone on the same text, in this process, with the collector handled as
    the server handles it (paused by `check_source`, the start-up state frozen by
    `qlint.lsp.heap`): what the server cannot avoid; the rest of its latency is its own.
    Timed right after each server edit, so both meet the same load."""

    def __init__(self, path: Path, text: str):
        from qlint.analysis.names.project import ProjectIndex
        from qlint.config import load_settings
        from qlint.engine import check_source
        from qlint.lsp import heap

        self.check_source = check_source
        self.path, self.text = str(path), text
        self.settings = load_settings([str(path.parent)])
        self.project = ProjectIndex()
        check_source(text, self.path, self.settings, self.project)
        heap.settle()
        self.runs = 0

    def once(self) -> float:
        self.runs += 1
        text = f"# {'x' * self.runs}\n" + self.text
        start = time.perf_counter()
        self.check_source(text, self.path, self.settings, self.project)  # pauses the collector itself
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", help="a Python module (default: a generated 2,000-line one)")
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--memory-edits", type=int, default=1000)
    parser.add_argument(
        "--server-cmd", help="start the server with this command instead (e.g. another checkout's, to compare)"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="qlint-lsp-bench-") as tmp:
        work = Path(tmp)
        text = Path(args.file).read_text() if args.file else generated_module()
        path = work / "module.py"
        path.write_text("# " + "\n" + text)  # line 0: a comment to type into
        text = path.read_text()

        cli_seconds, findings = cli_check(path)
        engine = Engine(path, text)

        server = LspClient(work, shlex.split(args.server_cmd) if args.server_cmd else None)
        server.initialize(work, capabilities={"textDocument": {"publishDiagnostics": {"dataSupport": True}}})
        start = time.perf_counter()
        uri = server.open(path, text)
        published = len(server.diagnostics(uri, 1, timeout=120))
        opened = server.arrived - start

        version = 1
        for _ in range(10):  # warm-up
            version += 1
            server.notify("textDocument/didChange", keystroke(uri, version, 0))
            server.diagnostics(uri, version, timeout=120)

        latencies, alone = [], []
        for _ in range(args.edits):
            version += 1
            sent = server.notify("textDocument/didChange", keystroke(uri, version, 0))
            server.diagnostics(uri, version, timeout=120)
            latencies.append(server.arrived - sent)
            alone.append(engine.once())

        rss_before = server.rss_kb()
        burst = 5  # typing faster than the server checks: coalesced into one check per burst
        for _ in range(args.memory_edits // burst):
            for _ in range(burst):
                version += 1
                server.notify("textDocument/didChange", keystroke(uri, version, 0))
            server.diagnostics(uri, version, timeout=120)
            server.received.clear()  # the client's own memory is not the server's
        rss_after = server.rss_kb()
        server.shutdown()
        server.close()

    ms = [1000 * s for s in latencies]
    p50, p95 = percentile(ms, 0.5), percentile(ms, 0.95)
    engine_ms = [1000 * s for s in alone]
    e50, e95 = percentile(engine_ms, 0.5), percentile(engine_ms, 0.95)
    own = statistics.median(a - b for a, b in zip(ms, engine_ms, strict=True))
    cli_ms = 1000 * cli_seconds
    print(f"module: {text.count(chr(10))} lines, {findings} findings (server published {published})")
    print(f"qlint check (fresh process, no cache), median of 3: {cli_ms:.0f} ms")
    print(f"engine alone (check_source here, after each edit): p50 {e50:.1f} ms, p95 {e95:.1f} ms")
    print(f"server open -> first publish: {1000 * opened:.0f} ms")
    print(
        f"edit -> publish over {len(ms)} edits: p50 {p50:.1f} ms, p95 {p95:.1f} ms, max {max(ms):.1f} ms "
        "(target p95 <= 100 ms)"
    )
    print(
        f"ratios: p50/check {p50 / cli_ms:.2f}, p95/check {p95 / cli_ms:.2f}; "
        f"p50/engine p50 {p50 / e50:.2f}, p95/engine p95 {p95 / e95:.2f}; "
        f"server's own share (median of edit - engine, pairwise): {own:.1f} ms"
    )
    growth = 100 * (rss_after - rss_before) / rss_before
    print(
        f"server RSS: {rss_before / 1024:.1f} MiB before, {rss_after / 1024:.1f} MiB after "
        f"{args.memory_edits} edits ({growth:+.1f} %, target <= 10 %)"
    )


if __name__ == "__main__":
    main()

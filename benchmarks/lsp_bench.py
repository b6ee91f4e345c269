"""Language-server latency and memory: edit -> publishDiagnostics, next to `qlint check`.

Targets (issue 11): p95 ≤ 100 ms from the edit to the publish, debounce included, on a
~2,000-line module with findings; resident memory grows ≤ 10 % over 1,000 edits.

    python benchmarks/lsp_bench.py                      # a generated 2,000-line backend module
    python benchmarks/lsp_bench.py FILE --in-place      # a module of a real project, where it is
    python benchmarks/lsp_bench.py --baseline /work/main   # also another checkout, same run

The server is the real `qlint server` process over stdio, driven by `qlint.lsp.client`.
Two edit patterns:

- isolated keystrokes: one character typed into a comment, the next only after the
  publish of the previous version (the pure cost of one edit);
- typing: statements typed character by character into function bodies (a new line,
  then each key; the text is often not valid Python halfway), at human inter-key
  intervals (lognormal, median 130 ms, 35-600 ms, seeded), never waiting for the server.
  A keystroke that arrives while the server checks the previous version makes that
  check stale; the user then waits for the next one. Two figures: per keystroke (to the
  first publish that covers it) and per publish (from the oldest keystroke it was the
  first to cover: how long the diagnostics on screen were out of date).

Where the time goes comes from the server's own stamps (`qlint/debugTimings`, on the same
monotonic clock): the wait before the check (debounce, coalescing, the check already
running), the engine, the server's work around it, the hand-off to the transport, the pipe.
`--baseline DIR` starts a second server from another checkout (its PYTHONPATH) and runs the
same edits on it, interleaved in blocks, so a loaded machine slows both alike: compare the
ratios. The plain `qlint check` of the file (a fresh process, no cache) and the engine
alone in this process are measured in the same session too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: this checkout's qlint, client and server alike

from qlint.analysis.names.package_map import project_root  # noqa: E402
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


TYPED = [
    "scale_{k} = weight.args[1] if len(weight.args) > 1 else None",
    'node.meta["seen_{k}"] = node.target == torch.ops.aten.sigmoid',
    "hits_{k} = [n for n in gm.graph.nodes if n.target is torch.ops.aten.relu.default]",
]


def keystroke(uri: str, version: int, line: int, character: int = 2, text: str = "x") -> dict:
    """Type `text` at (`line`, `character`), 0-based (by default into line 0's comment)."""
    pos = {"line": line, "character": character}
    change = {"range": {"start": pos, "end": pos}, "text": text}
    return {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}


@dataclass
class Doc:
    """One server and its copy of the buffer."""

    name: str
    client: LspClient
    uri: str
    lines: list[str]
    version: int = 1
    isolated: list[float] = field(default_factory=list)
    per_key: list[float] = field(default_factory=list)
    per_publish: list[float] = field(default_factory=list)
    checks: list[dict] = field(default_factory=list)  # the server's stamps of the typing sessions
    isolated_checks: list[dict] = field(default_factory=list)
    sent: dict[int, float] = field(default_factory=dict)
    publishes: list[tuple[int, float]] = field(default_factory=list)

    def edit(self, line: int, character: int, text: str) -> int:
        self.version += 1
        self.sent[self.version] = self.client.notify(
            "textDocument/didChange", keystroke(self.uri, self.version, line, character, text)
        )
        body = self.lines[line]
        self.lines[line : line + 1] = (body[:character] + text + body[character:]).split("\n")
        return self.version

    def collect(self, until: float) -> None:
        for stamp, message in self.client.poll(until):
            params = message.get("params") or {}
            if message.get("method") == "textDocument/publishDiagnostics" and params.get("uri") == self.uri:
                self.publishes.append((params.get("version"), stamp))

    def settle(self, timeout: float = 120) -> None:
        """Wait for the publish of the newest version."""
        end = time.perf_counter() + timeout
        while not any(v == self.version for v, _ in self.publishes[-3:]):
            if time.perf_counter() > end:
                raise TimeoutError(f"{self.name}: no publish of version {self.version}")
            self.collect(time.perf_counter() + 0.05)

    def timings(self) -> list[dict]:
        """The server's stamps since the last call ([] from a server without the method)."""
        with contextlib.suppress(AssertionError):  # an older checkout
            return self.client.request("qlint/debugTimings")["checks"]
        return []


def typing_session(doc: Doc, rng: random.Random, statement: str) -> None:
    """Open a line above a `return` in some function and type `statement` into it, key by
    key (the new line and its indentation arrive as one change, as editors send them)."""
    anchors = [i for i, line in enumerate(doc.lines) if line.lstrip().startswith("return ") and line[:1] == " "]
    line = rng.choice(anchors)
    indent = doc.lines[line][: len(doc.lines[line]) - len(doc.lines[line].lstrip())]
    doc.publishes.clear()
    doc.sent.clear()
    first = doc.version + 1
    for i, key in enumerate([indent + "\n", *statement]):
        doc.edit(line, 0 if i == 0 else len(indent) + i - 1, key)
        gap = min(0.6, max(0.035, rng.lognormvariate(math.log(0.13), 0.45)))
        doc.collect(time.perf_counter() + gap)
    doc.settle()
    published = sorted(doc.publishes)
    for v in range(first, doc.version + 1):
        arrival = min(t for pv, t in published if pv is not None and pv >= v)
        doc.per_key.append(arrival - doc.sent[v])
    covered = first - 1
    for pv, arrival in published:
        if pv is None or pv <= covered:
            continue
        doc.per_publish.append(arrival - doc.sent[covered + 1])
        covered = pv


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

    def __init__(self, path: Path, text: str, workspace: Path | None = None):
        from qlint.analysis.names.project import ProjectIndex
        from qlint.config import load_settings
        from qlint.engine import check_source
        from qlint.lsp import heap

        self.check_source = check_source
        self.path, self.text = str(path), text
        self.settings = load_settings([str(path.parent)])
        self.project = ProjectIndex()
        if workspace is not None:  # as the server whose client watches the workspace
            self.project.watch([str(workspace)])
        check_source(text, self.path, self.settings, self.project)
        heap.settle()
        self.runs = 0

    def once(self) -> float:
        self.runs += 1
        text = f"# {'x' * self.runs}\n" + self.text
        start = time.perf_counter()
        self.check_source(text, self.path, self.settings, self.project)  # pauses the collector itself
        return time.perf_counter() - start


def start(
    name: str, work: Path, path: Path, text: str, argv: list[str] | None, env: dict | None, watching: bool = True
) -> Doc:
    client = LspClient(work, argv, env)
    capabilities: dict = {"textDocument": {"publishDiagnostics": {"dataSupport": True}}}
    if watching:  # as VS Code and eglot do: the server may keep what it read between keystrokes
        capabilities["workspace"] = {"didChangeWatchedFiles": {"dynamicRegistration": True}}
    client.initialize(work, capabilities=capabilities)
    if watching:
        client.server_request("client/registerCapability")
    uri = client.open(path, text)
    client.diagnostics(uri, 1, timeout=120)
    doc = Doc(name, client, uri, text.split("\n"))
    for _ in range(10):  # warm-up
        doc.edit(0, 2, "x")
        client.diagnostics(uri, doc.version, timeout=120)
    doc.timings()
    return doc


def isolated(doc: Doc, edits: int, engine: Engine | None, alone: list[float]) -> None:
    for _ in range(edits):
        version = doc.edit(0, 2, "x")
        doc.client.diagnostics(doc.uri, version, timeout=120)
        doc.isolated.append(doc.client.arrived - doc.sent[version])
        if engine is not None:
            alone.append(engine.once())


def memory(doc: Doc, edits: int) -> tuple[int, int]:
    before = doc.client.rss_kb()
    burst = 5  # typing faster than the server checks: coalesced into one check per burst
    for _ in range(edits // burst):
        for _ in range(burst):
            doc.edit(0, 2, "x")
        doc.client.diagnostics(doc.uri, doc.version, timeout=120)
        doc.client.received.clear()  # the client's own memory is not the server's
    return before, doc.client.rss_kb()


def ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    got = [1000 * v for v in values]
    return f"p50 {percentile(got, 0.5):6.1f}  p95 {percentile(got, 0.95):6.1f}  max {max(got):6.1f} ms (n={len(got)})"


def breakdown(checks: list[dict]) -> list[str]:
    """Where the published edits' time went, from the server's stamps (seconds -> ms)."""
    done = [c for c in checks if c["published"] is not None and c["first_edit"] is not None and c["why"] == "edit"]
    stale = [c for c in checks if c["published"] is None and c["why"] == "edit"]
    if not done:
        return ["  (the server gave no timings: an older checkout)"]
    parts = {
        "wait before the check (coalescing, the check already running)": [c["started"] - c["first_edit"] for c in done],
        "engine (check_source)": [c["engine"] for c in done],
        "server work around the engine (overlay, settings, LSP conversion)": [c["work"] - c["engine"] for c in done],
        "thread hand-offs and publish (to the transport)": [c["published"] - c["started"] - c["work"] for c in done],
    }
    total = sum(sum(v) for v in parts.values())
    lines = [f"  {name}: {ms(v)}, {100 * sum(v) / total:.0f} % of the total" for name, v in parts.items()]
    cpu = [c.get("engine_cpu", 0.0) for c in done]
    wall = sum(c["engine"] for c in done)
    lines.append(f"  engine CPU time: {ms(cpu)} ({100 * sum(cpu) / wall:.0f} % of its wall time: the rest is the load)")
    cancelled = [c for c in stale if c.get("cancelled")]
    lines.append(
        f"  checks made stale by a newer keystroke: {len(stale)} ({len(cancelled)} stopped between rules), "
        f"{1000 * sum(c['work'] for c in stale):.0f} ms of work in all"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", help="a Python module (default: a generated 2,000-line one)")
    parser.add_argument("--in-place", action="store_true", help="check FILE where it is, in its project")
    parser.add_argument("--edits", type=int, default=200, help="isolated keystrokes")
    parser.add_argument("--sessions", type=int, default=12, help="statements typed (about 60 keys each)")
    parser.add_argument("--memory-edits", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--server-cmd", help="start this server instead (a command line)")
    parser.add_argument("--baseline", help="another checkout: its server gets the same edits, interleaved")
    parser.add_argument("--unwatched", action="store_true", help="a client that watches no files for the server")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="qlint-lsp-bench-") as tmp:
        work = Path(tmp)
        if args.in_place and args.file:
            # The server only reads the file; the edits stay in its memory.
            path = Path(args.file).resolve()
            text = "# \n" + path.read_text()
            work = Path(project_root(str(path)) or path.parent)  # the folder an editor opens
        else:
            text = Path(args.file).read_text() if args.file else generated_module()
            path = work / "module.py"
            path.write_text("# " + "\n" + text)  # line 0: a comment to type into
            text = path.read_text()

        cli_seconds, findings = cli_check(path)
        engine = Engine(path, text, None if args.unwatched else work)

        argv = shlex.split(args.server_cmd) if args.server_cmd else None
        docs = [start("this", work, path, text, argv, None, not args.unwatched)]
        if args.baseline:
            env = {**server_env(), "PYTHONPATH": str(Path(args.baseline).resolve())}
            docs.append(start("baseline", work, path, text, None, env, not args.unwatched))
        alone: list[float] = []
        for _ in range(args.edits // 5):  # interleaved in blocks of 5: both servers meet the same load
            for doc in docs:
                isolated(doc, 5, engine if doc is docs[0] else None, alone)
        for doc in docs:
            doc.isolated_checks = doc.timings()
        for session in range(args.sessions):
            for doc in docs:
                rng = random.Random(args.seed * 1000 + session)  # the same keys and gaps for each server
                typing_session(doc, rng, rng.choice(TYPED).format(k=session))
                time.sleep(0.5)  # a pause: the importers' rechecks, if any, run now
        for doc in docs:
            doc.checks = doc.timings()
        rss_before, rss_after = memory(docs[0], args.memory_edits)
        for doc in docs:
            doc.client.shutdown()
            doc.client.close()

    cli_ms = 1000 * cli_seconds
    print(f"module: {text.count(chr(10))} lines, {findings} findings ({path if args.in_place else 'generated'})")
    print(f"qlint check (fresh process, no cache), median of 3: {cli_ms:.0f} ms")
    print(f"engine alone (check_source in this process, after each isolated edit): {ms(alone)}")
    for doc in docs:
        print(f"[{doc.name}]")
        print(f"  isolated keystrokes, edit -> publish: {ms(doc.isolated)}")
        print(f"  typing, keystroke -> first publish covering it: {ms(doc.per_key)}")
        print(f"  typing, oldest uncovered keystroke -> publish: {ms(doc.per_publish)}")
        for what, checks in (("isolated keystrokes'", doc.isolated_checks), ("typed edits'", doc.checks)):
            print(f"  where the {what} time went (server stamps):")
            for line in breakdown(checks):
                print("  " + line)
    mine = docs[0]
    p95 = percentile(mine.isolated, 0.95)
    print(
        f"ratios: isolated p50 / qlint check {percentile(mine.isolated, 0.5) * 1000 / cli_ms:.2f}; "
        f"isolated p95 / engine-alone p95 {p95 / percentile(alone, 0.95):.2f}"
    )
    if len(docs) > 1:
        base = docs[1]
        for label, q in (("p50", 0.5), ("p95", 0.95)):
            print(
                f"this / baseline, same run, {label}: isolated "
                f"{percentile(mine.isolated, q) / percentile(base.isolated, q):.2f}, typing per keystroke "
                f"{percentile(mine.per_key, q) / percentile(base.per_key, q):.2f}, typing per publish "
                f"{percentile(mine.per_publish, q) / percentile(base.per_publish, q):.2f}"
            )
    growth = 100 * (rss_after - rss_before) / rss_before
    print(
        f"server RSS: {rss_before / 1024:.1f} MiB before, {rss_after / 1024:.1f} MiB after "
        f"{args.memory_edits} edits ({growth:+.1f} %, target <= 10 %)"
    )
    print("targets: p95 <= 100 ms edit -> publish, debounce included; memory growth <= 10 %")


if __name__ == "__main__":
    main()

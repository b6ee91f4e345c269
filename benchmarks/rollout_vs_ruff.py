"""Time one `qlint check` over several repositories against `ruff check --select ALL` over
the same roots, in the same run (timings on a shared machine are only comparable as ratios).

    python benchmarks/rollout_vs_ruff.py /tmp/ao /tmp/executorch /tmp/executorch-v0.4.0

Prints each tool's wall time (best of `--repeat`), the ratio, and qlint's per-repository
findings from its `--summary-json`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "summary.json"
        qlint_cmd = [sys.executable, "-m", "qlint", "check", "--no-cache", "--exit-zero", "-q"]
        qlint_cmd += ["--summary-json", str(summary), *args.roots]
        ruff_cmd = ["ruff", "check", "--select", "ALL", "--no-cache", "--exit-zero", *args.roots]
        qlint_s = min(timed(qlint_cmd) for _ in range(args.repeat))
        ruff_s = min(timed(ruff_cmd) for _ in range(args.repeat))
        data = json.loads(summary.read_text())
    print(f"qlint check (one run, {len(args.roots)} roots): {qlint_s:.1f} s")
    print(f"ruff check --select ALL --no-cache:        {ruff_s:.1f} s")
    print(f"ratio qlint / ruff: {qlint_s / ruff_s:.2f}")
    for repo in data["repositories"]:
        findings = ", ".join(f"{c} {n}" for c, n in repo["findings"].items()) or "none"
        print(f"  {repo['name']}: {repo['files_checked']} files, {findings}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

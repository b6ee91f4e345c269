"""qlint against ruff on the same tree, in one run: wall time and peak memory, with ratios.

Targets (issue 2): cold `qlint check` ≤ 1.0x `ruff check --select ALL --no-cache`; warm
`qlint check` ≤ 0.5x `ruff check --select E,F --no-cache`; qlint's peak memory ≤ ruff's.

    python benchmarks/bench_vs_ruff.py                  # the installed torch package tree
    python benchmarks/bench_vs_ruff.py PATH --runs 5

Peak memory is the largest sum of RSS over the whole process tree (qlint runs worker
processes, ruff threads), sampled every 10 ms from /proc.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def default_tree() -> str:
    # find_spec of a top-level package does not import it.
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torch is not installed; pass a PATH to benchmark on")
    return next(iter(spec.submodule_search_locations))


def _tree_kb(root: int) -> tuple[int, int]:
    """Resident (RSS) and proportional (PSS) KiB summed over the process tree. Forked
    workers share their parent's pages: RSS counts those once per process, PSS splits them."""
    rss = pss = 0
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/status") as fh:
                rss += next((int(line.split()[1]) for line in fh if line.startswith("VmRSS:")), 0)
            with open(f"/proc/{pid}/smaps_rollup") as fh:
                pss += next((int(line.split()[1]) for line in fh if line.startswith("Pss:")), 0)
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return rss, pss


def measure_tree(cmd: list[str], cwd: str, env: dict[str, str] | None = None) -> tuple[float, int, int]:
    """Wall seconds, peak tree RSS and peak tree PSS (KiB) of one run."""
    peak_rss = peak_pss = 0
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_rss, peak_pss
        while not done.is_set():
            rss, pss = _tree_kb(proc.pid)
            peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode != 0:  # every command runs with --exit-zero
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.decode()[-2000:]}")
    return elapsed, peak_rss, peak_pss


def measure(cmd: list[str], cwd: str, env: dict[str, str] | None = None) -> tuple[float, int]:
    """Wall seconds and peak tree RSS (KiB) of one run."""
    elapsed, rss, _ = measure_tree(cmd, cwd, env)
    return elapsed, rss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", nargs="?", default=None)
    parser.add_argument("--runs", type=int, default=3, help="runs per command; the median is reported")
    args = parser.parse_args()
    tree = os.path.abspath(args.tree or default_tree())
    ruff = shutil.which("ruff") or sys.exit("ruff is not installed")
    qlint = [sys.executable, "-m", "qlint", "check", "--exit-zero", "--quiet"]
    cache = tempfile.mkdtemp(prefix="qlint-bench-cache-")
    files = sum(1 for _, _, fs in os.walk(tree) for f in fs if f.endswith((".py", ".pyi")))
    # Run from a neutral directory so neither tool picks up this repository's config.
    cwd = tempfile.mkdtemp(prefix="qlint-bench-cwd-")
    commands = {
        "ruff --select ALL (cold)": [ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", tree],
        "ruff --select E,F (cold)": [ruff, "check", "--select", "E,F", "--no-cache", "--exit-zero", "-q", tree],
        "qlint (cold, --no-cache)": [*qlint, "--no-cache", tree],
        "qlint (warm cache)": [*qlint, "--cache-dir", cache, tree],
    }
    measure(commands["qlint (warm cache)"], cwd)  # fill the cache
    results: dict[str, tuple[float, int]] = {}
    for _ in range(args.runs):  # interleave so background load hits every command alike
        for name, cmd in commands.items():
            t, m = measure(cmd, cwd)
            results.setdefault(name, []).append((t, m))  # type: ignore[attr-defined]
    print(f"tree: {tree} ({files} Python files), {os.cpu_count()} cores, median of {args.runs} runs\n")
    print(f"{'command':28} {'wall s':>8} {'peak MiB':>9}")
    med = {}
    for name, runs in results.items():
        t = statistics.median(r[0] for r in runs)
        m = max(r[1] for r in runs) / 1024
        med[name] = (t, m)
        print(f"{name:28} {t:8.2f} {m:9.1f}")
    cold, warm = med["qlint (cold, --no-cache)"], med["qlint (warm cache)"]
    ruff_all, ruff_ef = med["ruff --select ALL (cold)"], med["ruff --select E,F (cold)"]
    checks = [
        ("cold qlint / ruff ALL (wall)", cold[0] / ruff_all[0], 1.0),
        ("warm qlint / ruff E,F (wall)", warm[0] / ruff_ef[0], 0.5),
        ("qlint peak / ruff ALL peak (memory)", max(cold[1], warm[1]) / ruff_all[1], 1.0),
        ("qlint peak / ruff E,F peak (memory)", max(cold[1], warm[1]) / ruff_ef[1], 1.0),
    ]
    print()
    for label, ratio, target in checks:
        print(f"{label:38} {ratio:6.2f}x  (target ≤ {target}x)  {'ok' if ratio <= target else 'MISSED'}")
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(cwd, ignore_errors=True)
    return 0 if all(ratio <= target for _, ratio, target in checks) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Where a cold whole-tree `qlint check` has its peak memory (issue 13: peak PSS <= ruff's).

`bench_trees.py` gives one number per run: the peak PSS summed over the process tree. This
script says what that number is made of, so a change can aim at it:

    python benchmarks/peak_memory.py /work/trees/ao /work/trees/executorch
    python benchmarks/peak_memory.py --per-file /work/trees/ao

For each tree, `ruff check --select ALL --no-cache` and `qlint check --no-cache` are run one
after the other (`--runs` times, interleaved); for qlint, the processes alive at its peak are
listed with their PSS and role (the parent; its pool workers, the children that live for the
checks; short-lived forked children: the words cut, the wrapper index, `forked_call`), with
when the peak came, and a coarse timeline of the total.

`--per-file` runs qlint once more with every check timed and measured in the process that
made it (the engine's `check_source`, wrapped in the parent before the workers fork): the
files whose check raised a worker's memory most (transient: what the check allocated at once)
and those after which a worker kept the most (retained: what the next check starts from,
after the freed pages went back). A worker's PSS only grows by the second kind.

Figures are PSS in MiB (`/proc/PID/smaps_rollup`), sampled every 10 ms, with each process's
RSS beside it and the highest sum of RSS, the figure `bench_trees.py` compares with ruff's
(a forked worker's pages shared with its parent count in both); a loaded machine slows the
runs but hardly changes them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

# Run as the `-c` program of the measured interpreter: wraps the engine's check (looked up
# at each call by the runner) before any worker forks, then runs the command line.
_PER_FILE_DRIVER = """
import os, sys, time
import qlint.engine as engine

def _pss():
    with open("/proc/self/smaps_rollup") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("Pss:"))

_check = engine.check_source

def check_source(source, path, *args, **kwargs):
    before, start = _pss(), time.perf_counter()
    try:
        return _check(source, path, *args, **kwargs)
    finally:
        line = f"{time.perf_counter() - start:.4f}\\t{before}\\t{_pss()}\\t{path}\\n"
        with open(os.path.join(os.environ["QLINT_PEAK_LOG"], f"{os.getpid()}.log"), "a") as fh:
            fh.write(line)

engine.check_source = check_source
from qlint.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _processes(root: int) -> dict[int, tuple[int, int, int]]:
    """pid -> (parent pid, PSS KiB, RSS KiB) for `root` and everything under it."""
    out: dict[int, tuple[int, int, int]] = {}
    stack = [(root, 0)]
    while stack:
        pid, parent = stack.pop()
        try:
            with open(f"/proc/{pid}/smaps_rollup") as fh:
                sizes = {k: int(v.split()[0]) for k, v in (line.split(":", 1) for line in fh if ":" in line)}
            out[pid] = (parent, sizes.get("Pss", 0), sizes.get("Rss", 0))
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    stack.extend((int(c), pid) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return out


class Run:
    """One command's samples: (seconds since start, {pid: (parent, PSS KiB, RSS KiB)})."""

    def __init__(self, cmd: list[str], env: dict[str, str] | None = None):
        self.samples: list[tuple[float, dict[int, tuple[int, int, int]]]] = []
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tempfile.gettempdir()
        )
        self.root = proc.pid
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                self.samples.append((time.perf_counter() - start, _processes(proc.pid)))
                done.wait(0.01)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, err = proc.communicate()
        self.wall = time.perf_counter() - start
        done.set()
        sampler.join()
        if proc.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.decode()[-2000:]}")

    @property
    def peak(self) -> tuple[float, dict[int, tuple[int, int, int]]]:
        """The sample where the processes' PSS adds up to the most."""
        return max(self.samples, key=lambda s: sum(p for _, p, _ in s[1].values()), default=(0.0, {}))

    @property
    def peak_rss(self) -> float:
        """The most the processes' RSS added up to (KiB): what `bench_trees.py` compares with
        ruff's, where a forked worker's pages shared with its parent count twice."""
        return max((sum(r for _, _, r in procs.values()) for _, procs in self.samples), default=0)

    def lifetimes(self) -> dict[int, tuple[float, float]]:
        seen: dict[int, tuple[float, float]] = {}
        for t, procs in self.samples:
            for pid in procs:
                first, _ = seen.get(pid, (t, t))
                seen[pid] = (first, t)
        return seen

    def role(self, pid: int, parent: int) -> str:
        if pid == self.root:
            return "parent"
        first, last = self.lifetimes()[pid]
        if parent != self.root:
            return f"forked by a worker ({last - first:.1f} s)"
        # Pool workers live from their fork to the end of the checks; the other children of
        # the parent (words cut, wrapper index) end before the checks start.
        return f"worker ({last - first:.1f} s)" if last - first > 0.5 * self.wall else f"child ({last - first:.1f} s)"


def _mib(kib: float) -> str:
    return f"{kib / 1024:6.1f}"


def report(label: str, tree: str, runs: int, qlint: list[str], env: dict[str, str]) -> None:
    ruff = shutil.which("ruff")
    print(f"== {label}: {tree}")
    for _ in range(runs):
        if ruff:
            r = Run([ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", tree])
            _, procs = r.peak
            pss = sum(p for _, p, _ in procs.values())
            print(f"   ruff ALL   peak {_mib(pss)} MiB (RSS {_mib(r.peak_rss)}), wall {r.wall:.2f} s")
        q = Run([*qlint, "--no-cache", tree], env)
        at, procs = q.peak
        total = sum(p for _, p, _ in procs.values())
        print(f"   qlint cold peak {_mib(total)} MiB at {at:.2f} s of {q.wall:.2f} s (RSS {_mib(q.peak_rss)}):")
        for pid, (parent, pss, rss) in sorted(procs.items(), key=lambda kv: -kv[1][1]):
            print(f"      {_mib(pss)} MiB  {q.role(pid, parent)}, RSS {_mib(rss).strip()} MiB")
        step = max(len(q.samples) // 12, 1)
        line = " ".join(f"{t:.1f}s:{sum(p for _, p, _ in ps.values()) / 1024:.0f}" for t, ps in q.samples[::step])
        print(f"      timeline (MiB): {line}")


def per_file(tree: str, python: str, env: dict[str, str], top: int, jobs: int | None = None) -> None:
    logs = tempfile.mkdtemp(prefix="qlint-peak-")
    try:
        run_env = dict(env, QLINT_PEAK_LOG=logs)
        cmd = [python, "-c", _PER_FILE_DRIVER, "check", "--exit-zero", "--quiet", "--no-cache", tree]
        if jobs:
            cmd.insert(-1, f"-j{jobs}")
        Run(cmd, run_env)
        rises, kept = [], []
        for name in sorted(os.listdir(logs)):
            with open(os.path.join(logs, name)) as fh:
                rows = [line.rstrip("\n").split("\t") for line in fh]
            rows = [(float(s), int(b), int(a), p) for s, b, a, p in rows]
            for i, (seconds, before, after, path) in enumerate(rows):
                rises.append((after - before, seconds, path, name))
                following = rows[i + 1][1] if i + 1 < len(rows) else after
                kept.append((following - before, seconds, path, name))
            last = rows[-1][2] if rows else 0
            print(f"   process {name[:-4]}: {len(rows)} checks, first {_mib(rows[0][1])} MiB, last {_mib(last)} MiB")
        for title, rows in (("transient (during the check)", rises), ("retained (next check starts from)", kept)):
            print(f"   largest rises, {title}:")
            for delta, seconds, path, name in sorted(rows, reverse=True)[:top]:
                print(f"      +{_mib(delta)} MiB  {seconds:6.2f} s  {os.path.relpath(path, tree)}  [{name[:-4]}]")
    finally:
        shutil.rmtree(logs, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--against", help="another qlint source tree (PYTHONPATH) to measure instead of this one")
    ap.add_argument("--per-file", action="store_true", help="also measure every check in its process")
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--jobs", "-j", type=int, help="qlint's -j (default: none, as a user runs it: `run_size` decides)")
    args = ap.parse_args()
    if not sys.platform.startswith("linux"):
        sys.exit("reads /proc: Linux only")
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiling qlint's sources is no part of a run (bench_trees.py)
    src = os.path.abspath(args.against) if args.against else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = src
    python = sys.executable
    qlint = [python, "-P", "-m", "qlint", "check", "--exit-zero", "--quiet"]
    if args.jobs:
        qlint.append(f"-j{args.jobs}")
    for tree in args.trees:
        report(os.path.basename(os.path.normpath(tree)), tree, args.runs, qlint, env)
        if args.per_file:
            per_file(tree, python, env, args.top, args.jobs)


if __name__ == "__main__":
    main()

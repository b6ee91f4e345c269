"""Instructions a cold run executes, process by process, for this checkout and another (issue 13).

    python benchmarks/instruction_counts.py [--against SRC] [-j N] [--cached] [--keep DIR] PATH [-- QLINT_ARGS...]

Runs `qlint check --no-cache -q --exit-zero -jN PATH` (N = 1 by default; QLINT_ARGS after
`--`, such as `--select QL101,QL102`, are added) under callgrind; with `--cached`, a cold run
that keeps its cache (`--cache-dir` an empty directory per side, instead of `--no-cache`): a
user's first run, which also writes what later runs read (the results, the summaries, the
wrapper-name index's record: stop 58's lane firstedit cost that run ~2% on ao, and
`--no-cache` counted none of it), with this checkout first on PYTHONPATH and, with
`--against SRC`, with SRC's, both byte-compiled, from an empty working directory, with one
fixed hash seed, the two side by side. Instruction counts, not times: on a machine shared with
other work (8 lanes on 2 cores) wall and CPU times are noise, and a count is the same run after
run.

A forked child starts with its parent's counters: callgrind's dump of a child also counts all
that the parent ran before the fork (ao -j1 at 8a3dd23: the wrapper index's child dumped
1.29 G instructions, of which 1.00 G its own), so the dumps of a run that forks (the wrapper
index's child, `forked_call`, the words' child, pool workers) do not add up to the run. Here
each child's counters are zeroed where it starts (`--zero-before=PyOS_AfterFork_Child`:
CPython calls that function in the child of `os.fork` only), so each dump counts its own
process's work and their sum is the run's. In a `-j1` run the parent waits for every child it
forks, so the sum is also the work on the run's path; counting the parent alone leaves the
wrapper index out (ao: 9% of the run).

Printed per checkout: the sum, and each process (the parent first, then the children by their
counts). `--keep DIR` keeps the dumps there (for `callgrind_annotate`); else they are removed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

_ZERO_IN_CHILD = "--zero-before=PyOS_AfterFork_Child"
_TOTAL = re.compile(rb"^(?:summary|totals):\s*(\d+)", re.M)


def command(out_dir: str, label: str, path: str, jobs: int, extra: list[str], cache: str | None = None) -> list[str]:
    """The callgrind command of one checkout's run; its processes dump to
    `out_dir/cg.<label>.<pid>.out`. `cache`: an empty directory the run keeps its cache in."""
    return [
        "valgrind",
        "--tool=callgrind",
        _ZERO_IN_CHILD,
        f"--callgrind-out-file={os.path.join(out_dir, f'cg.{label}.%p.out')}",
        sys.executable,
        "-m",
        "qlint",
        "check",
        *(["--cache-dir", cache] if cache is not None else ["--no-cache"]),
        "-q",
        "--exit-zero",
        f"-j{jobs}",
        *extra,
        os.path.abspath(path),
    ]


def dump_total(data: bytes) -> int | None:
    """The instructions a callgrind dump counts (its `summary:` or `totals:` line)."""
    m = _TOTAL.search(data)
    return int(m.group(1)) if m else None


def counts(out_dir: str, label: str, parent: int) -> list[tuple[str, int, int]]:
    """(role, pid, instructions) of each process of the run labelled `label`: the parent
    first, then its children, most instructions first. A dump without a total (a child still
    running when the parent was killed) is left out."""
    found = []
    pattern = re.compile(rf"^cg\.{re.escape(label)}\.(\d+)\.out$")
    for name in os.listdir(out_dir):
        m = pattern.match(name)
        if m is None:
            continue
        with open(os.path.join(out_dir, name), "rb") as fh:
            total = dump_total(fh.read())
        if total is not None:
            pid = int(m.group(1))
            found.append(("parent" if pid == parent else "child", pid, total))
    return sorted(found, key=lambda row: (row[0] != "parent", -row[2]))


def byte_compile(checkout: str) -> None:
    """Compile the checkout's qlint bytecode, as an install does: without it the first run
    compiles qlint's sources (~2.5 G instructions) and counts that too."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(checkout, "qlint")], check=True)


def _run(commands: dict[str, tuple[list[str], dict[str, str]]], cwd: str) -> dict[str, int]:
    """Start every command at once (two cores: the runs take turns less), wait for all; the
    pid of each one's parent process (valgrind runs the program in its own process)."""
    started = {
        label: subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for label, (cmd, env) in commands.items()
    }
    for proc in started.values():
        proc.wait()
    return {label: proc.pid for label, proc in started.items()}


def _report(label: str, checkout: str, rows: list[tuple[str, int, int]]) -> int:
    total = sum(n for _, _, n in rows)
    print(f"{label} ({checkout}): {total / 1e6:,.1f} M instructions in {len(rows)} processes")
    for role, pid, n in rows:
        print(f"   {n / 1e6:12,.1f} M  {role} {pid}")
    return total


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--against", metavar="SRC", help="another checkout, measured side by side")
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--keep", metavar="DIR", help="keep the callgrind dumps in DIR")
    parser.add_argument("--cached", action="store_true", help="a cold run keeping its cache, not --no-cache")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("instruction_counts: valgrind is not installed", file=sys.stderr)
        return 2
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    checkouts = {"this": here}
    if args.against:
        checkouts["against"] = os.path.abspath(args.against)
    out_dir = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="qlint-callgrind-")
    os.makedirs(out_dir, exist_ok=True)
    cwd = tempfile.mkdtemp(prefix="qlint-callgrind-cwd-")  # no config of this checkout is picked up
    try:
        commands = {}
        for label, checkout in checkouts.items():
            byte_compile(checkout)
            # Set and dict orders follow string hashes: with a random seed per run, the same
            # code measured 1.000x twice and 1.006x once (stop 59), noise as large as a lane's budget.
            env = dict(os.environ, PYTHONPATH=checkout, PYTHONHASHSEED="0")
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            cache = os.path.join(cwd, f"cache-{label}") if args.cached else None  # absent: empty
            commands[label] = (command(out_dir, label, args.path, args.jobs, extra, cache), env)
        parents = _run(commands, cwd)
        totals = {
            label: _report(label, checkouts[label], counts(out_dir, label, parents[label])) for label in checkouts
        }
        if totals.get("against"):
            print(f"this / against: {totals['this'] / totals['against']:.3f}x")
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(out_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

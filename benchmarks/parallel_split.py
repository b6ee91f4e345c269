"""Where a parallel cold run's CPU goes, process by process, and what the parent does alone (issue 13).

    python benchmarks/parallel_split.py [-j N] PATH

Runs `qlint check --no-cache -jN -q --exit-zero PATH` in this process (from PATH's directory
when PATH is a directory), every process writing down its clocks as it goes: the parent at
each phase (discovery, the wrapper index and what it loads for the workers meanwhile, the
pool's start, the last result, the output), and every process (the parent checks too) per
file it checks. Printed: the parent's phases on both clocks; per process, its files, its
checks' CPU and when its first and last file ran; the CPU of this process and of its
children (the workers, the wrapper index's child, the child that cuts the project's words).

Read the CPU figures: with other work on the machine the wall clock says only in which order
things happened. The parent's serial CPU is its CPU before its first file and after its last;
the run's CPU against a `-j1` run's says what running in parallel costs beyond the checks.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import shutil
import sys
import tempfile
import time


def _instrumented(log_dir: str):
    """Patches the runner so that every process logs its events under `log_dir`; returns
    a function that puts everything back."""
    from qlint import discovery, file_checks, runner, worker_pool

    def log(kind: str, **fields) -> None:
        with open(os.path.join(log_dir, f"{os.getpid()}.jsonl"), "a") as fh:
            fh.write(json.dumps({"k": kind, "w": time.perf_counter(), "c": time.process_time(), **fields}) + "\n")

    # Each patched where it is looked up: the runner's `_wrapper_index` and `_map`, the pool's
    # `_pool`, and the check the workers are handed by name (`file_checks`).
    where = {"_wrapper_index": runner, "_pool": worker_pool, "check_one_uncached": file_checks, "_map": runner}
    real = {name: getattr(module, name) for name, module in where.items()}
    real_discover = discovery.discover

    def discover(*args, **kwargs):
        log("discovery")
        found = real_discover(*args, **kwargs)
        log("discovered")
        return found

    @contextlib.contextmanager
    def wrapper_index(*args, **kwargs):
        log("index")
        with real["_wrapper_index"](*args, **kwargs):
            log("indexed")
            yield

    def pool(*args, **kwargs):
        log("pool")
        return real["_pool"](*args, **kwargs)

    def check_one(path, settings):
        wall, cpu = time.perf_counter(), time.process_time()
        out = real["check_one_uncached"](path, settings)
        log("file", w0=wall, c0=cpu)
        return out

    # Workers are handed the function by name (pickled by reference): the patch must pass for it.
    check_one.__name__ = check_one.__qualname__ = "check_one_uncached"
    check_one.__module__ = file_checks.__name__

    def map_(func, *args, **kwargs):
        if func is real["check_one_uncached"]:
            func = check_one
        yield from real["_map"](func, *args, **kwargs)
        log("mapped")

    discovery.discover = discover
    patched = {"_wrapper_index": wrapper_index, "_pool": pool, "check_one_uncached": check_one, "_map": map_}
    for name, value in patched.items():
        setattr(where[name], name, value)

    def restore() -> None:
        discovery.discover = real_discover
        for name, value in real.items():
            setattr(where[name], name, value)

    return log, restore


def _events(log_dir: str) -> dict[int, list[dict]]:
    out = {}
    for name in os.listdir(log_dir):
        with open(os.path.join(log_dir, name)) as fh:
            out[int(name.split(".")[0])] = [json.loads(line) for line in fh]
    return out


def report(events: dict[int, list[dict]], parent: int, self_cpu: float, children_cpu: float) -> list[str]:
    mine = events[parent]
    t0, c0 = mine[0]["w"], mine[0]["c"]
    lines = ["parent's phases (wall s since the start, the parent's CPU s):"]
    seen = set()
    for event in mine:
        if event["k"] != "file" and event["k"] not in seen:
            seen.add(event["k"])
            lines.append(f"  {event['k']:<10} wall {event['w'] - t0:7.2f}  cpu {event['c'] - c0:7.2f}")
    files = [e for e in mine if e["k"] == "file"]
    if files:
        before, after = files[0]["c0"] - c0, mine[-1]["c"] - files[-1]["c"]
        lines.append(f"  serial CPU of the parent: {before:.2f} s before its first file, {after:.2f} s after its last")
    total_files = 0
    for pid, evs in sorted(events.items(), key=lambda kv: kv[0] != parent):
        checked = [e for e in evs if e["k"] == "file"]
        if not checked:
            continue
        total_files += len(checked)
        cpu = sum(e["c"] - e["c0"] for e in checked)
        who = "parent" if pid == parent else "worker"
        lines.append(
            f"{who} {pid}: {len(checked)} files, checks {cpu:.2f} s CPU, "
            f"first file at {checked[0]['w0'] - t0:.2f} s, last done at {checked[-1]['w'] - t0:.2f} s"
        )
    lines.append(f"files checked: {total_files}")
    lines.append(
        f"CPU: this process {self_cpu:.2f} s, its children {children_cpu:.2f} s, in all {self_cpu + children_cpu:.2f} s"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    path = os.path.abspath(args.path)
    target = "."
    if os.path.isdir(path):
        os.chdir(path)
    else:
        target = path
    from qlint import cli

    log_dir = tempfile.mkdtemp(prefix="qlint-parallel-split-")
    log, restore = _instrumented(log_dir)
    start = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        log("start")
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            cli.main(["check", "--no-cache", f"-j{args.jobs}", "-q", "--exit-zero", target])
        log("output")
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        self_cpu = own.ru_utime + own.ru_stime - start[0].ru_utime - start[0].ru_stime
        children_cpu = children.ru_utime + children.ru_stime - start[1].ru_utime - start[1].ru_stime
        print("\n".join(report(_events(log_dir), os.getpid(), self_cpu, children_cpu)))
    finally:
        restore()
        shutil.rmtree(log_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

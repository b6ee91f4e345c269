"""The edited one-file row of benchmarks/bench_trees.py, alone, as CPU time beside wall time,
and against another qlint side by side: what a lane changing the engine can measure on a
machine other work shares (bench_trees.py needs an idle one).

    python benchmarks/edited_one_file.py FILE [--tree TREE] [--against PYTHONPATH] [--runs N]
        [--phases] [--samples] [--elsewhere] [--fresh]
    python benchmarks/edited_one_file.py --survey TREE [TREE ...] [--sample N] [--runs N] [--against PYTHONPATH]

The check is bench_trees.py's: a cache filled by a whole-tree run of TREE (the file's project
by default), then `qlint check --stdin-filename FILE -` of the buffer one keystroke left
(`keystroke_edits`: one statement typed into the first function body), whose own result
is never cached. Nothing is written to TREE. Each run is a new process, as pre-commit's or an
editor's; the sides alternate run by run, so background load hits both alike. Printed per
side: the median user+sys CPU (of the process and its children) and wall seconds, and the
number of findings (both sides must agree).

`--phases`: where a fresh process's CPU goes, the median over the runs per phase: importing
qlint's command line, parsing, each rule (the imports a rule makes when it first runs
included; rules that share an analysis are charged to the first that asks for it), and the
rest of the command (settings, rule selection and the rule modules' imports, output). Python's
own start-up is outside: compare it with `python -c pass` on the same machine.

`--samples`: where it goes function by function, from the process's stack sampled at a CPU
timer's every tick (`ITIMER_PROF`; a tick is 1-10 ms by the kernel, so many runs make a
figure), summed over the runs: each sample is charged to the innermost function of qlint on
the stack (the standard library and built-ins it calls count as its own), or to "(import)"
while a module is imported. A profiler (cProfile) charges its own cost per call to the
functions that make many calls and to the built-ins they call: on ExecuTorch's slow files it
put 5% in `tree_walk.walk_kinds` and 35 ms in `mentions.holding` (qualcomm's
test_qnn_delegate.py) where timers inside the check found 1-3% and 5 ms.

`--elsewhere`: the CPU a fresh process spends on other modules than the one checked, the
median over the runs, and how many outermost calls made it: the flows of their functions
(QL201-QL203's `ModelFlow.function` of another module), the statements of theirs it parses
(`summary._StatementSource._parse`), QL204's summaries of their functions, and the listing
and stats of the whole project (`module_keys._listed_keys`, which a search whose answer no
one module decides needs), each inclusive (a parse inside a flow counts in both). What a
cache of facts per module content (kept by the tree run, taken by the edited check) could
spare at most, stats aside: on ExecuTorch (stop 56, lane p90et3, whole check in process)
qat_loop.py 18 of 209 ms, test_vulkan_delegate.py 10 of 175, test_qnn_delegate.py 78-98 of
372; the rest is the checked file's own flows, and the stats (~18 ms, one per project file)
prove that no module came to spell the checked module's name. Also charged there: QL101/QL102's
search for helpers in the modules the checked one imports (`Forwarding.module_holding` and
`module_scope`, outermost, inclusive) and the facts of other modules computed because the
summary store lacked them (`LoadedSummary._compute`). On ExecuTorch that is most of what the
first edited check after a tree run spends beyond the next one, which takes what the first
kept (stop 57, lane p90et4: cadence's test_fusion_ops_passes.py 1.27 G instructions against
0.77 G; with `--fresh` the search took 106 of the check's 244 ms, 1 ms without; profiles of
exir/tests/test_passes.py and llama's export_llama_lib.py put their first check's extra in the
same search). The tree run answers it with the project's wrapper-name index, which one-file
runs do not use (`wrapper_index`), and keeps only the answers worked out without one
(`forwarding_memos._run_group`): the names the index ruled out were never searched.

`--fresh` (one file's runs, not `--survey`): every timed run (and probe) starts from a copy of
the cache as the tree run left it, so that each is the first edited check after that run, as
pre-commit's first check of a file after a whole-tree run is; without it, the first run keeps
what the later ones take, and their median leaves it out.

`--survey`: the bench's one file is one of many; pre-commit and an editor check any. After one
whole-tree run per TREE fills the cache, the edited check runs on every file of it that a
QL1xx/QL2xx rule's text prefilter admits (`triggered_by`: the files whose check does rule
work), `--runs` times each (default 2 in this mode: the first edited check after the tree run,
then the next, which takes what the first kept), and prints the distribution of CPU seconds
per run (median, p90, max) and every file over 0.15 s. `--sample N`: the N largest such files
plus N others drawn with a fixed seed, instead of all. With `--against`, the same per side.
The p90 is the nearest rank: of 10 figures the 9th smallest, of 20 the 18th.
benchmarks/bench_trees.py runs this survey (`sample`, `edited_checks`, `spread`) as a row of
its table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keystroke_edits import keystroke_edits

# The tail of each script below: the check of the buffer as the `qlint` command makes it
# (`cli.run`), whose process ends after the check, which therefore keeps the collector off
# and leaves its garbage to the exit. Without that the collector ran once the check ended and
# was charged to "rest" (ExecuTorch's qualcomm test_qnn_delegate.py: 43 of 390 ms, work the
# command never does).
_CHECK = r"""
sys.stdin = io.TextIOWrapper(open(buffer, "rb"))
sys.stdout = open(os.devnull, "w")
from qlint.process_exit import ends_after_command
ends_after_command()
try:
    qlint.cli.main(["check", "--exit-zero", "--quiet", "--cache-dir", cache, "--stdin-filename", path, "-"])
except SystemExit:
    pass
"""

# Run in a fresh interpreter with the side's PYTHONPATH: argv = cache dir, file, buffer.
_PHASES = (
    r"""
import io, json, os, sys, time
clock = time.process_time
start = clock()
import qlint.cli
import qlint.engine as engine
from qlint.registry import rules as registered_rules
spent = {"import": clock() - start}
def timed(phase, func):
    def run(*args, **kwargs):
        began = clock()
        try:
            return func(*args, **kwargs)
        finally:
            spent[phase] = spent.get(phase, 0.0) + clock() - began
    return run
engine.parse_module = timed("parse", engine.parse_module)
for cls in registered_rules().values():
    check = cls.check
    cls.check = lambda self, ctx, check=check, code=cls.code: timed(code, lambda: list(check(self, ctx)))()
cache, path, buffer = sys.argv[1:4]
"""
    + _CHECK
    + r"""spent["rest"] = clock() - start - sum(spent.values())
sys.__stdout__.write(json.dumps(spent))
"""
)


# As `_PHASES`, with the stack sampled instead (`--samples`): prints {"self": {where: samples}}.
_SAMPLES = (
    r"""
import io, json, os, signal, sys
base = None  # the directory holding the `qlint` package, once imported
counts = {}
def sample(signum, frame):
    where = None
    f = frame
    while f is not None:
        name = f.f_code.co_filename
        if name.startswith("<frozen importlib"):
            where = "(import)"
            break
        if where is None and base is not None and name.startswith(base):
            where = name[len(base):] + ":" + f.f_code.co_name
        f = f.f_back
    if where is None:
        where = "(other) " + os.path.basename(frame.f_code.co_filename) + ":" + frame.f_code.co_name
    counts[where] = counts.get(where, 0) + 1
signal.signal(signal.SIGPROF, sample)
signal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)
import qlint
base = os.path.dirname(os.path.dirname(os.path.abspath(qlint.__file__))) + os.sep
import qlint.cli
cache, path, buffer = sys.argv[1:4]
"""
    + _CHECK
    + r"""signal.setitimer(signal.ITIMER_PROF, 0, 0)
sys.__stdout__.write(json.dumps({"self": counts}))
"""
)
_SHOWN_SAMPLES = 15  # functions printed per side

# As `_PHASES`, charging CPU to the work on other modules (`--elsewhere`): prints
# {label: [seconds, outermost calls]}. A function the side's qlint lacks is not wrapped.
_ELSEWHERE = (
    r"""
import functools, io, json, os, sys, time
clock = time.process_time
import qlint.cli
cache, path, buffer = sys.argv[1:4]
checked = os.path.abspath(path)
spent = {}
active = set()
def wrap(module, owner, name, label, counts):
    try:
        holder = __import__(module, fromlist=["_"])
        holder = getattr(holder, owner) if owner else holder
        original = getattr(holder, name)
    except (ImportError, AttributeError):
        return
    spent.setdefault(label, [0.0, 0])
    @functools.wraps(original)
    def run(*args, **kwargs):
        if label in active or not counts(*args, **kwargs):
            return original(*args, **kwargs)
        active.add(label)
        began = clock()
        try:
            return original(*args, **kwargs)
        finally:
            active.discard(label)
            spent[label][0] += clock() - began
            spent[label][1] += 1
    setattr(holder, name, run)
wrap("qlint.analysis.flow.model_flow", "ModelFlow", "function", "their flows", lambda flow, *a, **k: flow.depth > 0)
# (`module_analysis` since stop 73; a class wrapped twice is charged once, as one label.)
wrap("qlint.analysis.flow.module_analysis", "ModelFlow", "function", "their flows", lambda f, *a, **k: f.depth > 0)
wrap("qlint.analysis.names.summary", "_StatementSource", "_parse", "their statements parsed", lambda *a, **k: True)
wrap(
    "qlint.analysis.calibration", "Calibration", "summary", "QL204 summaries of theirs",
    lambda self, func, scope, *a, **k: os.path.abspath(scope.path) != checked,
)
wrap("qlint.analysis.project_files", None, "_listed_keys", "listing and stats", lambda *a, **k: True)
wrap("qlint.analysis.module_keys", None, "_listed_keys", "listing and stats", lambda *a, **k: True)  # since stop 72
# One label for both: `module_holding` asks `module_scope`, and a label is charged once per outermost call.
wrap("qlint.analysis.graphs.forwarding", "Forwarding", "module_holding", "their helper search", lambda *a, **k: True)
wrap("qlint.analysis.graphs.forwarding", "Forwarding", "module_scope", "their helper search", lambda *a, **k: True)
wrap(
    "qlint.analysis.names.module_entries", "LoadedSummary", "_compute", "their facts computed",
    lambda self, *a, **k: os.path.abspath(self.path) != checked,
)
start = clock()
"""
    + _CHECK
    + r"""spent["whole check"] = [clock() - start, 1]
sys.__stdout__.write(json.dumps(spent))
"""
)


_COMPARED = ("code", "filename", "location", "end_location", "message")


def _env(pythonpath: str | None) -> dict[str, str]:
    # As bench_trees.py: with PYTHONDONTWRITEBYTECODE set (this machine sets it), a source tree
    # whose bytecode is missing or stale (a new worktree, a file just edited) is compiled again
    # by every run: ao's edited check measured 0.42 s of CPU instead of 0.22 s, "rest" 227 ms
    # instead of 46 ms. The first run writes the bytecode; the timed ones read it.
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if pythonpath:
        env["PYTHONPATH"] = os.path.abspath(pythonpath)
    return env


def _timed_run(cmd: list[str], cwd: str, env: dict[str, str], stdin_path: str) -> tuple[float, float, bytes]:
    """(user+sys CPU seconds of the process and the children it waited for, wall seconds,
    stdout). The CPU is the growth of this process's reaped children's totals (`getrusage`)
    over the run, which reaps exactly this one child."""
    before = children_cpu()
    with open(stdin_path, "rb") as stdin:
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdin=stdin, capture_output=True)
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr.decode()[-2000:]}")
    return children_cpu() - before, wall, proc.stdout


def children_cpu() -> float:
    # `getrusage`, in microseconds, not `os.times`, in clock ticks (10 ms on Linux): a check's
    # ~0.2 s of CPU came out a multiple of 0.01 s, and a survey's p90 and its files over 0.15 s
    # moved by whole ticks (ExecuTorch: 0.450, 0.400, 0.310, 0.280 s, ...), coarser than the
    # cuts a lane measures with them.
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


_SLOW = 0.15  # issue 13's one-file target, in seconds


def admitted(tree: str) -> list[str]:
    """The files of `tree` whose text a QL1xx/QL2xx rule's prefilter admits (the prefilter of
    the qlint this process imports; every side then checks the same files)."""
    from qlint.registry import deferred, facts

    rules = [deferred(code, {}) for code in facts() if code.startswith(("QL1", "QL2"))]
    found = []
    for folder, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                if any(rule.triggered_by(text) for rule in rules):
                    found.append(path)
    return found


def sample(paths: list[str], n: int, seed: int = 13) -> list[str]:
    """The `n` largest of `paths` (in bytes) plus `n` of the others drawn with a fixed seed,
    sorted; all of `paths` when there are no more than 2n. The largest because the slow
    checks are mostly of long modules; the drawn ones so that the spread is not theirs alone."""
    if len(paths) <= 2 * n:
        return sorted(paths)
    by_size = sorted(paths, key=lambda p: (-os.path.getsize(p), p))
    rest = sorted(by_size[n:])
    return sorted(by_size[:n] + random.Random(seed).sample(rest, n))


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank percentile: the smallest value that at least `q` of `values` do not
    exceed (p90 of 10 values is the 9th smallest, of 20 the 18th), always a measured value."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def spread(values: list[float]) -> tuple[float, float, float, int]:
    """Median, p90, max, and how many of `values` exceed issue 13's one-file target."""
    return statistics.median(values), percentile(values, 0.9), max(values), sum(v > _SLOW for v in values)


def edited_checks(paths: list[str], sides: dict[str, tuple[str, dict[str, str]]], cwd: str, runs: int = 1):
    """Yield (path, side, run, CPU seconds, wall seconds) of the edited check of each of
    `paths` (`keystroke_edits`' first edit, on standard input, `--stdin-filename`), `runs`
    times per side, the sides taking turns run by run so that load hits them alike. `sides`:
    name -> (cache directory a whole-tree run filled, environment)."""
    qlint = [sys.executable, "-m", "qlint", "check", "--exit-zero", "--quiet"]
    buffer = os.path.join(cwd, "edited.py")
    for path in paths:
        with open(path, encoding="utf-8-sig") as fh, open(buffer, "w", encoding="utf-8") as out:
            out.write(keystroke_edits(fh.read(), 1)[0])
        for run in range(runs):
            for side, (cache, env) in sides.items():
                edited = [*qlint, "--stdin-filename", path, "-", "--cache-dir", cache]
                used, wall, _ = _timed_run(edited, cwd, env, buffer)
                yield path, side, run, used, wall


@contextlib.contextmanager
def run_cache(cache: str, fresh: bool):
    """The cache directory one run checks with: `cache` itself, or with `fresh` a copy of it
    as it is now (the tree run's), removed after the run, so that what the run keeps is not
    the next run's to take."""
    if not fresh:
        yield cache
        return
    copy = tempfile.mkdtemp(prefix="qlint-edited-fresh-")
    try:
        shutil.copytree(cache, copy, dirs_exist_ok=True)
        yield copy
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _survey(args, sides: dict[str, dict[str, str]]) -> int:
    runs = args.runs if args.runs_given else 2
    cwd = tempfile.mkdtemp(prefix="qlint-edited-cwd-")
    caches = {side: tempfile.mkdtemp(prefix="qlint-edited-cache-") for side in sides}
    qlint = [sys.executable, "-m", "qlint", "check", "--exit-zero", "--quiet"]
    # side -> run number -> [(cpu, path)]
    spent: dict[str, list[list[tuple[float, str]]]] = {side: [[] for _ in range(runs)] for side in sides}
    try:
        for tree in map(os.path.abspath, args.survey):
            paths = admitted(tree)
            if args.sample:
                paths = sample(paths, args.sample)
            print(f"{tree}: {len(paths)} files admitted by a QL1xx/QL2xx prefilter", flush=True)
            for side, env in sides.items():  # the whole-tree run that fills the cache
                subprocess.run([*qlint, "--cache-dir", caches[side], tree], cwd=cwd, env=env, capture_output=True)
            checked = {side: (caches[side], env) for side, env in sides.items()}
            for path, side, run, used, _ in edited_checks(paths, checked, cwd, runs):
                spent[side][run].append((used, path))
        for side in sides:
            for run, figures in enumerate(spent[side]):
                median, p90, most, over = spread([c for c, _ in figures])
                print(
                    f"{side:8} run {run + 1}: {len(figures)} files, CPU median {median:.3f} s"
                    f"  p90 {p90:.3f} s  max {most:.3f} s  over {_SLOW} s: {over}"
                )
        for side in sides:
            print(f"{side}: files over {_SLOW} s CPU in some run (CPU per run)")
            per_file: dict[str, list[float]] = {}
            for figures in spent[side]:
                for used, path in figures:
                    per_file.setdefault(path, []).append(used)
            slow = sorted(((max(v), p, v) for p, v in per_file.items() if max(v) > _SLOW), reverse=True)
            for _, path, used in slow:
                print(f"   {'  '.join(f'{c:.3f}' for c in used)}   {path}")
        return 0
    finally:
        for directory in [cwd, *caches.values()]:
            shutil.rmtree(directory, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", nargs="?")
    parser.add_argument("--survey", nargs="+", metavar="TREE", help="the edited check of every admitted file")
    parser.add_argument("--sample", type=int, default=0, help="with --survey: N largest files and N drawn")
    parser.add_argument("--tree", help="the tree a whole run fills the cache from (default: the file's project)")
    parser.add_argument("--against", help="PYTHONPATH of another qlint, measured side by side")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--phases", action="store_true", help="also time the phases of a fresh process")
    parser.add_argument("--samples", action="store_true", help="also sample where a fresh process's CPU goes")
    parser.add_argument("--elsewhere", action="store_true", help="also time a fresh process's work on other modules")
    parser.add_argument("--fresh", action="store_true", help="each run from a copy of the cache the tree run left")
    args = parser.parse_args()
    args.runs_given = args.runs is not None
    args.runs = args.runs if args.runs is not None else 7
    if args.survey:
        sides = {"this": _env(None)}
        if args.against:
            sides["against"] = _env(args.against)
        return _survey(args, sides)
    if args.file is None:
        parser.error("FILE or --survey TREE is needed")
    path = os.path.abspath(args.file)
    if args.tree:
        tree = os.path.abspath(args.tree)
    else:
        from qlint.analysis.names.package_map import project_root

        tree = project_root(path) or os.path.dirname(path)
    sides = {"this": _env(None)}
    if args.against:
        sides["against"] = _env(args.against)
    cwd = tempfile.mkdtemp(prefix="qlint-edited-cwd-")  # no config is picked up here
    caches = {side: tempfile.mkdtemp(prefix="qlint-edited-cache-") for side in sides}
    try:
        buffer = os.path.join(cwd, "edited.py")
        with open(path, encoding="utf-8-sig") as fh, open(buffer, "w", encoding="utf-8") as out:
            out.write(keystroke_edits(fh.read(), 1)[0])
        qlint = [sys.executable, "-m", "qlint", "check", "--exit-zero", "--quiet"]
        for side, env in sides.items():  # the whole-tree run that fills the cache
            fill = [*qlint, "--cache-dir", caches[side], tree]
            subprocess.run(fill, cwd=cwd, env=env, capture_output=True, check=True)
        cpu: dict[str, list[float]] = {side: [] for side in sides}
        wall: dict[str, list[float]] = {side: [] for side in sides}
        found: dict[str, list] = {}
        phases: dict[str, dict[str, list[float]]] = {side: {} for side in sides}
        samples: dict[str, dict[str, int]] = {side: {} for side in sides}
        elsewhere: dict[str, dict[str, list[tuple[float, int]]]] = {side: {} for side in sides}
        edited = [*qlint, "--stdin-filename", path, "-"]  # bench_trees.py's command
        for _ in range(args.runs):
            for side, env in sides.items():
                with run_cache(caches[side], args.fresh) as cache:
                    used, seconds, _ = _timed_run([*edited, "--cache-dir", cache], cwd, env, buffer)
                cpu[side].append(used)
                wall[side].append(seconds)
                if args.phases:
                    with run_cache(caches[side], args.fresh) as cache:
                        probe = [sys.executable, "-c", _PHASES, cache, path, buffer]
                        spent = json.loads(
                            subprocess.run(probe, cwd=cwd, env=env, capture_output=True, check=True).stdout
                        )
                    for phase, value in spent.items():
                        phases[side].setdefault(phase, []).append(value)
                if args.samples:
                    with run_cache(caches[side], args.fresh) as cache:
                        probe = [sys.executable, "-c", _SAMPLES, cache, path, buffer]
                        taken = json.loads(
                            subprocess.run(probe, cwd=cwd, env=env, capture_output=True, check=True).stdout
                        )
                    for where, count in taken["self"].items():
                        samples[side][where] = samples[side].get(where, 0) + count
                if args.elsewhere:
                    with run_cache(caches[side], args.fresh) as cache:
                        probe = [sys.executable, "-c", _ELSEWHERE, cache, path, buffer]
                        spent = json.loads(
                            subprocess.run(probe, cwd=cwd, env=env, capture_output=True, check=True).stdout
                        )
                    for label, (seconds, calls) in spent.items():
                        elsewhere[side].setdefault(label, []).append((seconds, calls))
        for side, env in sides.items():  # after the timed runs: what the check found, as JSON
            as_json = [*edited, "--output-format", "json", "--cache-dir", caches[side]]
            # What was found where (not the rule page's URL, which names where each side is
            # installed, nor the related locations, which 9216a04 chose by the hash seed).
            found[side] = [
                {k: d[k] for k in _COMPARED} for d in json.loads(_timed_run(as_json, cwd, env, buffer)[2] or b"[]")
            ]
        with open(path, "rb") as fh:
            lines = fh.read().count(b"\n")
        print(f"{path} ({lines} lines), edited as bench_trees.py edits it")
        print(f"median of {args.runs} runs, sides interleaved: `qlint check --stdin-filename FILE -`, warm cache")
        for side in sides:
            print(
                f"   {side:8} CPU {statistics.median(cpu[side]):6.3f} s   wall {statistics.median(wall[side]):6.3f} s"
                f"   findings {len(found[side])}"
            )
        if len(sides) == 2:
            ratio = statistics.median(cpu["this"]) / statistics.median(cpu["against"])
            print(f"   this / against CPU: {ratio:.3f}")
        for side in sides if args.phases else ():
            medians = {p: statistics.median(v) * 1000 for p, v in phases[side].items()}
            shown = "  ".join(f"{p} {ms:.1f}" for p, ms in sorted(medians.items(), key=lambda kv: -kv[1]))
            print(f"   {side:8} phases (CPU ms, total {sum(medians.values()):.1f}): {shown}")
        for side in sides if args.samples else ():
            total = sum(samples[side].values())
            top = sorted(samples[side].items(), key=lambda kv: (-kv[1], kv[0]))[:_SHOWN_SAMPLES]
            print(f"   {side:8} samples ({total} over {args.runs} runs), share by function:")
            for where, count in top:
                print(f"      {100 * count / max(total, 1):5.1f}%  {where}")
        for side in sides if args.elsewhere else ():
            shown = "  ".join(
                f"{label} {statistics.median(s for s, _ in runs) * 1000:.1f}"
                f" ({statistics.median(c for _, c in runs):g})"
                for label, runs in elsewhere[side].items()
            )
            print(f"   {side:8} other modules (CPU ms, median; outermost calls): {shown}")
        if len(sides) == 2 and found["this"] != found["against"]:
            print("   the two sides disagree on the findings:", file=sys.stderr)
            for side in sides:
                print(f"   {side}: {json.dumps(found[side])}", file=sys.stderr)
            return 1
        return 0
    finally:
        for directory in [cwd, *caches.values()]:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

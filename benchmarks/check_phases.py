"""Where the in-process check of one module spends its time: parse, suppressions, each rule.

    python benchmarks/check_phases.py FILE [FILE...] [--runs N] [--preview]

Each file is checked once to load what it reads from other modules (as an open editor
has), then `--runs` times, each time as a keystroke left it: one more line typed in a
different function body (benchmarks/keystroke_edits.py, the same buffers
benchmarks/bench_trees.py times, so the two figures compare); the medians are printed per
phase, with the whole check's median (the figure issue 13 budgets at 30 ms per 2,000
lines) and the rest (decoding,
prefilter, line index, scope building outside rules, result assembly). Rules that share an
analysis (QL201/QL202/QL203 the model flow) are charged to the first that asks for it.
Timings on a loaded machine are noisy: compare medians of interleaved runs, not single runs.

The project index is the one an editor with a file watcher holds (`ProjectIndex.watch`, the
file's project as the workspace folder): the keys of the other modules are taken once and
kept until the watcher reports a change, as the language server does once the client has
registered `workspace/didChangeWatchedFiles`. `--stat` measures a client that watches
nothing (every check stats what it depends on); a qlint without `watch` is measured so too.

`--no-carry`: each check starts from none of the module's last check (its tree, the flows and
summaries of its unchanged bodies: `statement_reuse`, `carried_flows`), as a new process's
`qlint check FILE` does, while what was read of other modules stays loaded. Beside the
default figure it shows what the carry saves an editor, and what a new process pays for the
module's own bodies past its start-up and imports (ao's 4,307-line test_quantize_pt2e.py:
about 100 ms carried, 330 ms not, on a loaded machine; most of the difference is QL201's flows).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import qlint.engine as engine
from qlint.analysis.names.project import ProjectIndex
from qlint.config import load_settings
from qlint.registry import rules as registered_rules

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keystroke_edits import keystroke_edits

# Wall time by default; `--cpu`: this thread's CPU time, which a machine shared with other
# work inflates far less (the figure to compare A/B on a loaded machine, beside the wall one).
_CLOCK = [time.perf_counter]


def _clock() -> float:
    return _CLOCK[0]()


def _timed(record: Callable[[float], None], func: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args, **kwargs):
        start = _clock()
        try:
            return func(*args, **kwargs)
        finally:
            record(_clock() - start)

    return run


def workspace_of(path: str) -> str:
    """The folder an editor opens for `path`: its project (repository, else the directory with
    its `pyproject.toml`), else its directory."""
    from qlint.analysis.names.package_map import project_root

    return project_root(os.path.abspath(path)) or os.path.dirname(os.path.abspath(path))


def measure(
    path: str, runs: int, preview: bool, stat: bool = False, carry: bool = True
) -> tuple[float, dict[str, float], int, int]:
    """(median total ms, median ms per phase, findings, lines) for one module."""
    settings = load_settings([path])
    if preview:
        from dataclasses import replace

        settings = replace(settings, preview=True)
    with open(path, "rb") as fh:
        data = fh.read()
    project = ProjectIndex()
    if not stat and hasattr(project, "watch"):
        project.watch([workspace_of(path)])
    if not carry:
        project.previous_trees = None  # no last check to carry from (`--no-carry`)
    current: dict[str, float] = defaultdict(float)

    def charge(phase: str) -> Callable[[float], None]:
        return lambda seconds: current.__setitem__(phase, current[phase] + seconds)

    saved = {"parse_module": engine.parse_module, "parse_suppressions": engine.parse_suppressions}
    checks = {cls: cls.check for cls in registered_rules().values()}
    engine.parse_module = _timed(charge("parse"), saved["parse_module"])
    engine.parse_suppressions = _timed(charge("suppressions"), saved["parse_suppressions"])
    for cls, check in checks.items():
        cls.check = lambda self, ctx, check=check, code=cls.code: _timed(charge(code), lambda: list(check(self, ctx)))()
    try:
        result = engine.check_source(data, path, settings, project)
        totals: list[float] = []
        phases: dict[str, list[float]] = defaultdict(list)
        findings = len(result.diagnostics)
        for buffer in keystroke_edits(data.decode("utf-8-sig"), runs):
            edited = buffer.encode("utf-8")
            current.clear()
            start = _clock()
            result = engine.check_source(edited, path, settings, project)
            total = _clock() - start
            totals.append(total)
            for phase, seconds in current.items():
                phases[phase].append(seconds)
            phases["rest"].append(total - sum(current.values()))
    finally:
        engine.parse_module = saved["parse_module"]
        engine.parse_suppressions = saved["parse_suppressions"]
        for cls, check in checks.items():
            cls.check = check
    medians = {phase: statistics.median(values) * 1000 for phase, values in phases.items()}
    if len(result.diagnostics) != findings:
        print(f"   {path}: {len(result.diagnostics)} findings after the edits, {findings} before", file=sys.stderr)
    return statistics.median(totals) * 1000, medians, findings, data.count(b"\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--preview", action="store_true", help="run preview rules too")
    parser.add_argument("--stat", action="store_true", help="as a client that watches no files")
    parser.add_argument("--cpu", action="store_true", help="time this thread's CPU, not the wall clock")
    parser.add_argument("--no-carry", action="store_true", help="carry nothing from the module's last check")
    args = parser.parse_args()
    if args.cpu:
        _CLOCK[0] = time.thread_time
    for path in args.files:
        total, phases, findings, lines = measure(path, args.runs, args.preview, args.stat, not args.no_carry)
        budget = 30.0 * max(lines, 2000) / 2000
        shown = "  ".join(f"{p} {ms:.1f}" for p, ms in sorted(phases.items(), key=lambda kv: -kv[1]) if ms >= 0.05)
        print(f"{total:7.1f} ms (budget {budget:.0f})  {lines:5d} lines  {findings} findings  {path}")
        print(f"          {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The CPU time of re-checking a module after each keystroke in its function bodies, as an
editor's language server does it, for this checkout and others, interleaved.

    python benchmarks/edit_rechecks.py FILE [--against DIR ...] [--rounds 4] [--edits 16]

Each round starts one process per checkout (its PYTHONPATH), in turn (this one, then each
`--against`, then this one again...), so a loaded machine slows them alike. A process holds
one project index, as the server does (`ProjectIndex.watch` on the file's project), checks
the file once (the editor opening it), then checks the buffers `--edits` keystrokes leave
(`keystroke_edits`: one statement typed into a different function body each time) and
reports each check's CPU time (its thread's). Printed per checkout: p50 and p95 over every
round's checks, the process's peak resident memory (median of the rounds), and the findings
of the last buffer (they must agree).

Issue 13: in the editor the cost of a check should be the cost of the file checked. A helper
whose callers are read (ExecuTorch's backends/qualcomm/export_utils.py: 44 caller modules)
re-analysed them all at every keystroke; `caller_modules` keeps them while the edit changes
no body they read.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _child(path: str, edits: int) -> None:
    sys.path.insert(0, HERE)
    from check_phases import workspace_of
    from keystroke_edits import keystroke_edits

    import qlint.engine as engine
    from qlint.analysis.names.project import ProjectIndex
    from qlint.config import load_settings

    settings = load_settings([path])
    with open(path, "rb") as fh:
        data = fh.read()
    project = ProjectIndex()
    project.watch([workspace_of(path)])
    engine.check_source(data, path, settings, project)
    times = []
    result = None
    for buffer in keystroke_edits(data.decode("utf-8-sig"), edits):
        start = time.thread_time()
        result = engine.check_source(buffer.encode("utf-8"), path, settings, project)
        times.append(time.thread_time() - start)
    findings = sorted((d.code, d.range.start.row) for d in result.diagnostics) if result else []
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(json.dumps({"times": times, "findings": findings, "peak": peak}))


def _run(checkout: str, path: str, edits: int) -> dict:
    env = dict(os.environ, PYTHONPATH=checkout)
    out = subprocess.run(
        [sys.executable, "-P", os.path.abspath(__file__), path, "--child", "--edits", str(edits)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file")
    parser.add_argument("--against", action="append", default=[], help="another checkout, run interleaved")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--edits", type=int, default=16)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    path = os.path.abspath(args.file)
    if args.child:
        _child(path, args.edits)
        return 0
    checkouts = [ROOT, *(os.path.abspath(a) for a in args.against)]
    times: dict[str, list[float]] = {c: [] for c in checkouts}
    findings: dict[str, list] = {}
    peaks: dict[str, list[float]] = {c: [] for c in checkouts}
    for _ in range(args.rounds):
        for checkout in checkouts:
            got = _run(checkout, path, args.edits)
            times[checkout].extend(got["times"])
            findings[checkout] = got["findings"]
            peaks[checkout].append(got["peak"])
    for checkout in checkouts:
        ms = [t * 1000 for t in times[checkout]]
        print(
            f"{checkout}: p50 {statistics.median(ms):7.1f} ms  p95 {_percentile(ms, 0.95):7.1f} ms  "
            f"mean {statistics.fmean(ms):7.1f} ms  peak RSS {statistics.median(peaks[checkout]):6.1f} MiB  "
            f"({len(ms)} checks, {len(findings[checkout])} findings)"
        )
    if len({json.dumps(f) for f in findings.values()}) > 1:
        print("findings differ between checkouts", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

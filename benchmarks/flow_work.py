"""How much work the QL2 analyses do over a tree: bodies interpreted, and the CPU they take.

    python benchmarks/flow_work.py TREE [--select QL2]

Runs `qlint check --no-cache --exit-zero -j 1 --select QL2 .` in this process from TREE and
counts the function bodies the model-flow interpreter (QL201/QL202/QL203) and the
calibration walk (QL204) analyse: in all, how many distinct bodies that is, and how many
were bodies of other modules (helpers of the file checked; the model flow keeps them for
the next file that calls them, `qlint.analysis.flow.shared_flows`, the calibration walk
analyses them again). Counts do not depend on the machine's load; the CPU seconds (of the
rules, and of the whole run) are printed beside them for orientation. Issue 13 asks the
analyses to be proportional to what a tree holds: a repeat count far above the number of
distinct bodies is work to share.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import sys
import time

from qlint.analysis import calibration_walk
from qlint.analysis.flow import model_interp
from qlint.cli import main as qlint_main
from qlint.registry import rules as registered_rules


class _Counts:
    def __init__(self) -> None:
        self.runs: collections.Counter = collections.Counter()  # (kind, path, line) -> runs
        self.checked = ""
        self.rule_cpu: collections.Counter = collections.Counter()

    def body(self, kind: str, path: str, func) -> None:
        where = "own" if path == self.checked else "other module"
        self.runs[(kind, where, path, getattr(func, "lineno", 0))] += 1


def _instrument(counts: _Counts, select: str) -> None:
    interpret = model_interp.Interpreter.run
    walk = calibration_walk.Walker.run

    def interpreted(self):
        counts.body("model flow", self.owner.scope.path, self.func)
        return interpret(self)

    def walked(self):
        counts.body("calibration", self.scope.path, self.func)
        return walk(self)

    model_interp.Interpreter.run = interpreted
    calibration_walk.Walker.run = walked
    for rule in registered_rules().values():
        if not rule.code.startswith(select) or "check" not in vars(rule):
            continue
        check = rule.check

        def timed(self, ctx, check=check, code=rule.code):
            counts.checked = ctx.path
            start = time.process_time()
            try:
                return list(check(self, ctx))
            finally:
                counts.rule_cpu[code] += time.process_time() - start

        rule.check = timed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree")
    parser.add_argument("--select", default="QL2")
    args = parser.parse_args()
    counts = _Counts()
    _instrument(counts, args.select)
    os.chdir(args.tree)
    start = time.process_time()
    # The findings themselves are not the point.
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull), contextlib.suppress(SystemExit):
        qlint_main(["check", "--no-cache", "--exit-zero", "-j", "1", "--select", args.select, "."])
    total = time.process_time() - start
    print(f"{args.tree}: --select {args.select} -j 1, CPU {total:.2f} s (rules {sum(counts.rule_cpu.values()):.2f} s)")
    for code, seconds in sorted(counts.rule_cpu.items()):
        print(f"  {code}: {seconds:.2f} s")
    for kind in ("model flow", "calibration"):
        mine = {k: n for k, n in counts.runs.items() if k[0] == kind}
        distinct = {k[2:] for k in mine}
        other = sum(n for k, n in mine.items() if k[1] == "other module")
        print(
            f"  {kind}: {sum(mine.values())} bodies analysed, {len(distinct)} distinct,"
            f" {other} of them bodies of other modules than the file checked"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How much work the QL2 analyses do over a tree: bodies interpreted, and the CPU they take.

    python benchmarks/flow_work.py TREE [--select QL2]   (codes or prefixes, comma-separated, or ALL)

Runs `qlint check --no-cache --exit-zero -j 1 --select QL2 .` in this process from TREE and
counts the function bodies the model-flow interpreter (QL201/QL202/QL203) and the
calibration walk (QL204) analyse: in all, how many distinct bodies that is, and how many
were bodies of other modules (helpers of the file checked; the model flow keeps them for
the next file that calls them, `qlint.analysis.flow.shared_flows`, the calibration walk
analyses them again). Counts do not depend on the machine's load; the CPU seconds (of the
rules, and of the whole run) are printed beside them for orientation. Issue 13 asks the
analyses to be proportional to what a tree holds: a repeat count far above the number of
distinct bodies is work to share.

The model flow's bodies are also split by why they were read and what they hold, with the
CPU each group took (its own bodies', not the helpers' they called), which is what a
precheck that skips bodies would have to save:
- bodies of the file checked that `relevant_bodies` chose, by round (0: the text names a
  capture or PT2E API; 1, 2: it calls or hands on a body chosen before), the others of the
  file checked (its helpers, read on demand), and bodies of other modules (their helpers,
  and the callers a caller search reads);
- how many hold a capture, and a capture that reaches a prepare (what QL201/QL202 report on);
- repeats of a body analysed before: the same tree, or a tree parsed again from its
  module's text; and by cause, the first that applies (comparing with the body's last
  analysis): its module's entry was set aside between (`set_asides`: the flows
  kept on its scope go with it, and its statements are parsed again); one of the two is the
  checked module's own analysis (its flows are kept for no other check, and the two are held
  on different scopes); one of the two is a caller search's (`module_analysis._Memo.follow`: the
  answers depend on the module followed); the last was not kept (it met a body in progress,
  `shared_flows.Tracker.taint`); or it was kept and the class index answered otherwise from
  the file checked now (`shared_flows`). Modules with the most repeats are listed. Nodes are
  held weakly, so that the run keeps the trees it would keep without this script.
  ExecuTorch `--select ALL` at stop 48: 368 repeats of 2,953 analyses (~0.35 s CPU of ~9.5):
  167 set aside, 124 own and another's, 47 class index answers, 28 caller search. Keeping
  past the set-aside every module whose kept flows another check reused cut 115 of them for
  +17 MiB of the -j1 process's peak RSS (112 -> 129 MiB): the repeats are the price of the
  set-aside's memory, not a cache keyed wrongly.

Bodies of other modules are split too: helpers of the file checked, and the callers a caller
search reads (`project_callers`, with the helpers those call). And the bodies the rules asked
for (`model_flow.module_flows`, QL203's extra bodies) are classed by what their flow holds,
with the CPU of their analysis and of the helpers it met first: a capture that reaches a
prepare (what QL201/QL202 report on), a capture that reaches none, or no capture; and whether
the body calls a function of its own module (then the verdicts may read it as a caller). A
body holding no capture and calling none of its module's functions can neither be reported
on nor read as a caller, but that is known only once it is analysed: its helpers may capture.
Files are classed the same way: whether any body asked for holds a capture reaching a prepare.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import sys
import time
import weakref

from qlint.analysis import calibration_walk
from qlint.analysis.flow import model_flow, model_interp, relevant_bodies, shared_flows
from qlint.cli import main as qlint_main
from qlint.registry import rules as registered_rules


class _Counts:
    def __init__(self) -> None:
        self.runs: collections.Counter = collections.Counter()  # (kind, path, line) -> runs
        self.checked = ""
        self.rule_cpu: collections.Counter = collections.Counter()
        self.rounds: dict[int, tuple[object, int]] = {}  # id(body) -> (body, round chosen in)
        # group -> [bodies, with a capture, with one reaching a prepare, own CPU seconds]
        self.groups: dict[str, list] = collections.defaultdict(lambda: [0, 0, 0, 0.0])
        # (path, line, col) -> weak references to the body nodes read, and its last analysis
        self.trees: dict[tuple[str, int, int], list] = {}
        self.last: dict[tuple[str, int, int], dict] = {}
        self.repeats: collections.Counter = collections.Counter()
        self.causes: dict[str, list] = collections.defaultdict(lambda: [0, 0.0])  # -> [repeats, own CPU]
        self.repeated_modules: collections.Counter = collections.Counter()
        self.nested: list[float] = []  # CPU of the bodies analysed inside the one under way
        # What a body the rules asked for holds -> [bodies, CPU with the helpers it met first].
        self.asked: dict[str, list] = collections.defaultdict(lambda: [0, 0.0])
        self.files: dict[str, list] = {}  # path -> [reaches a prepare, CPU of the bodies asked for]

    def flow(self, interpreter, flow, seconds: float) -> None:
        """A model-flow body analysed: its group, what it holds, and whether it is a repeat."""
        func, owner = interpreter.func, interpreter.owner
        path = owner.scope.path
        chosen = self.rounds.get(id(func))
        if path != self.checked and owner.memo.follow is not None:
            group = "bodies of other modules, read by a caller search"
        elif path != self.checked:
            group = "bodies of other modules, helpers"
        elif chosen is not None and chosen[0] is func:
            group = f"own, chosen in round {chosen[1]}"
        else:
            group = "own, read as helpers"
        captures = flow.captures if flow is not None else []
        entry = self.groups[group]
        entry[0] += 1
        entry[1] += bool(captures)
        entry[2] += any(c.sinks for c in captures)
        entry[3] += seconds

    def analysis(self, interpreter) -> str | None:
        """A model-flow body about to be analysed: whether it was before, and why again (None: first)."""
        func, owner = interpreter.func, interpreter.owner
        where = _where(owner.scope.path, func)
        now = {
            "asides": owner.project.set_aside.count if getattr(owner.project, "set_aside", None) else 0,
            "own": owner.depth == 0 and owner.memo.follow is None,
            "follow": owner.memo.follow,
            "kept": False,
        }
        seen = self.trees.setdefault(where, [])
        cause = None
        if seen:
            same = any(ref() is func for ref in seen)
            self.repeats["the same tree" if same else "a tree parsed again"] += 1
            cause = _cause(self.last[where], now, same)
            self.causes[cause][0] += 1
            self.repeated_modules[where[0]] += 1
        seen.append(weakref.ref(func))
        self.last[where] = now
        return cause

    def kept(self, path: str, func) -> None:
        """The flow just analysed is kept for later checks (`shared_flows.Tracker.keep`)."""
        last = self.last.get(_where(path, func))
        if last is not None:
            last["kept"] = True

    def asked_for(self, path: str, flow, seconds: float) -> None:
        """A body a rule asked for, analysed now (`seconds`: with the helpers it met first)."""
        captures = flow.captures if flow is not None else []
        if any(c.sinks for c in captures):
            holds = "a capture reaching a prepare"
        else:
            holds = "a capture reaching none" if captures else "no capture"
        calls = "calls its module's functions" if flow is not None and flow.calls else "calls none of them"
        entry = self.asked[f"{holds}, {calls}"]
        entry[0] += 1
        entry[1] += seconds
        file = self.files.setdefault(path, [False, 0.0])
        file[0] = file[0] or holds == "a capture reaching a prepare"
        file[1] += seconds

    def body(self, kind: str, path: str, func) -> None:
        where = "own" if path == self.checked else "other module"
        self.runs[(kind, where, path, getattr(func, "lineno", 0))] += 1


def _where(path: str, func) -> tuple[str, int, int]:
    return (os.path.abspath(path), getattr(func, "lineno", 0), getattr(func, "col_offset", 0))


def _cause(last: dict, now: dict, same: bool) -> str:
    """Why a body is analysed again, given its last analysis (the first cause that applies)."""
    if last["asides"] != now["asides"] and not same:
        return "its module set aside between"
    if last["own"] != now["own"]:
        return "the checked module's own analysis and another's"
    if last["follow"] != now["follow"]:
        return "a caller search's analysis and another's"
    if not last["kept"]:
        return "not kept (order-dependent, or the checked module's own)"
    if not same:
        return "a tree parsed again by another reader"
    return "kept, the class index answers otherwise"


def _selected(code: str, select: str) -> bool:
    return any(part == "ALL" or code.startswith(part) for part in select.split(","))


def _instrument(counts: _Counts, select: str) -> None:
    interpret = model_interp.Interpreter.run
    walk = calibration_walk.Walker.run
    keep = shared_flows.Tracker.keep

    def kept(self, scope, key, func, *args):
        counts.kept(scope.path, func)
        return keep(self, scope, key, func, *args)

    shared_flows.Tracker.keep = kept

    def interpreted(self):
        counts.body("model flow", self.owner.scope.path, self.func)
        cause = counts.analysis(self)
        start = time.process_time()
        counts.nested.append(0.0)
        flow = None
        try:
            flow = interpret(self)
        finally:
            spent = time.process_time() - start
            inner = counts.nested.pop()
            if counts.nested:
                counts.nested[-1] += spent
            counts.flow(self, flow, spent - inner)
            if cause is not None:
                counts.causes[cause][1] += spent - inner
        return flow

    def chosen(ctx):
        choice = choose(ctx)
        counts.rounds.update((id(f), (f, r)) for f, _, r in choice.entries)
        return choice

    choose = relevant_bodies._choose
    relevant_bodies._choose = chosen

    def walked(self):
        counts.body("calibration", self.scope.path, self.func)
        return walk(self)

    analyse = model_flow._analyse

    def analysed(ctx, functions):
        # As `_analyse`, one body at a time: the CPU of each one's analysis (none if it was there).
        memo = model_flow.file_flow(ctx).memo.functions
        found = []
        for f, cls in functions:
            known = id(f) in memo
            start = time.process_time()
            one = analyse(ctx, [(f, cls)])
            if not known:
                counts.asked_for(ctx.path, one[0] if one else None, time.process_time() - start)
            found += one
        return found

    model_flow._analyse = analysed
    model_interp.Interpreter.run = interpreted
    calibration_walk.Walker.run = walked
    for rule in registered_rules().values():
        if not _selected(rule.code, select) or "check" not in vars(rule):
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
    root = os.path.abspath(args.tree)
    os.chdir(root)
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
    print("  model flow bodies, by why they were read: bodies, with a capture, with one reaching a prepare, own CPU")
    for group, (bodies, captures, reaching, seconds) in sorted(counts.groups.items()):
        print(f"    {group}: {bodies}, {captures}, {reaching}, {seconds:.2f} s")
    print("  model flow bodies the rules asked for, by what their flow holds: bodies, CPU with the helpers met first")
    for kind, (bodies, seconds) in sorted(counts.asked.items()):
        print(f"    {kind}: {bodies}, {seconds:.2f} s")
    for reaching in (True, False):
        files = [cpu for hit, cpu in counts.files.values() if hit is reaching]
        where = "hold a capture reaching a prepare" if reaching else "hold none"
        print(f"    files whose bodies asked for {where}: {len(files)}, {sum(files):.2f} s")
    repeats = ", ".join(f"{n} of {why}" for why, n in sorted(counts.repeats.items()))
    print(f"  model flow repeats: {repeats or 'none'}")
    print("  model flow repeats by cause: bodies, own CPU")
    for cause, (n, seconds) in sorted(counts.causes.items(), key=lambda item: -item[1][0]):
        print(f"    {cause}: {n}, {seconds:.2f} s")
    top = ", ".join(f"{os.path.relpath(p, root)} {n}" for p, n in counts.repeated_modules.most_common(5))
    if top:
        print(f"    modules with the most: {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

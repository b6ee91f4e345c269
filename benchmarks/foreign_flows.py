"""How much of a check goes to the model flows of other modules' helpers, and what the
callers read of them: the upper bound of a kept summary of those flows (issue 13).

    python benchmarks/foreign_flows.py FILE [FILE ...] [--tree TREE] [--runs N]
    python benchmarks/foreign_flows.py --whole TREE
    python benchmarks/foreign_flows.py --survey TREE [--sample N] [--runs N]

FILE: the bench's edited one-file check (`edited_one_file.py`): a cache filled by one
whole-tree run of TREE (the first file's project by default), then, in this process,
`qlint check --stdin-filename FILE -` of the buffer one keystroke left, `--runs` times (a
fresh interpreter each, so nothing of an earlier run is in memory). `--whole`: one
`qlint check --no-cache -j1 TREE` in this process. `--survey`: the edited survey's files
(`edited_one_file.py --survey`: the N largest admitted and N drawn, 20 by default; 0: all),
and per run the p90 of the process CPU as it is and as each lever would leave it at most
(below).

Printed per check: its CPU (process time, qlint's import excluded); the CPU inside
`ModelFlow.function` of another module's body, taken at the outermost such call (a helper of
a helper is in its caller's figure: a summary read instead of the outer flow saves both), and
how much of it went to flows kept as order-free (`shared_flows`: the only ones a kept answer
could stand for); `ast.parse` CPU, in all and inside those flows; how many such bodies were
analysed (and reused in the process, and memo hits); the shape of each flow analysed, from
what a caller's `helper_calls.apply` reads of it ("inert": values of no model and its
parameters left as they came; "captures": a capture in it, ...), with the CPU per shape and
the costliest bodies. With `--reads` (slower: every attribute read of a flow is counted),
also which fields of finished foreign flows were read, by which function of qlint: what a
summary would have to answer. CPU figures are process times: a loaded machine slows the
parts alike, so the shares are what to read. (`flow_work.py` counts the whole tree's repeated
analyses and why they repeat.)

ExecuTorch at stop 52 (bb3f01bd): of the bench's 40 edited files, 27 analyse no other
module's body; the other 13 spend 1-79 ms on them, 15% of test_qnn_delegate.py's check (62 of
~400 ms: 48 bodies, 16 "inert", 14 inert but recording their helpers' calls, 7 returning a
construction, 3 capturing), 24% of nxp's test_batch_norm_fusion.py (21 of 87 ms, one body:
executorch_pipeline.to_quantized_edge_program). The costliest bodies are capture pipelines
(to_edge_transform_and_lower_to_qnn, cadence's quantize_pt2, skip_annotation), whose
captures hold part-of-parameter facts, constructions with guarded train facts and prepares
inside. The whole tree (-j1): 0.9 of 9.1 s, 713 analyses of 461 bodies. ao's slow files:
none. Nearly all of it is in flows kept as order-free.

Also printed per check: the CPU of the checked module's own flows (outermost, without the
other modules' flows they asked for), and the process's CPU (start-up and imports in, as the
edited survey counts it; the probe's wrappers add ~20-30 ms to it). A kept flow, of another
module or of the checked one, could spare at most its share; `--survey` adds, per file, the
own flows' CPU when an editor's index carries them from the check of the saved file
(`carried_flows`, `_CARRIED`): what the same carry, kept across processes, would leave.

ExecuTorch at stop 70 (cd251b2a; `--survey`, 40 files, 3 runs, a loaded machine): p90 as is
0.222 / 0.210 s (runs 2, 3), without other modules' flows 0.204 / 0.203, without the own
flows 0.150 / 0.147, with them carried as an editor's 0.153 / 0.150, without both 0.138 /
0.137 (the edited survey itself, without the probe: 0.193 / 0.186). Over 0.15 s in every run
(one to three others in some): qualcomm's test_qnn_delegate.py (other modules' flows 52 ms, own
65, own carried 2), exir/tests/test_passes.py (2, 104, 5), qualcomm's rework pattern.py (21,
70, 2), arm's QAT_example/qat_loop.py (9, 78, 5), vulkan's test_vulkan_delegate.py (4, 63,
3). Other modules' flows reach the p90 by 7-18 ms: test_qnn_delegate.py, the one file where
they weigh, stays far above it either way. The own flows are the lever: carried as the editor
carries them, each of the four files below it loses 60-100 ms: the survey's p90 would be
about 0.12-0.13 s once the probe's own cost is taken off (an estimate, not a measurement).
Both need a flow kept as plain data and tied again to a new parse by position (its values
hold nodes of the module and of the helpers' modules: origins, anchors, guards).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edited_one_file import children_cpu

_PROBE = r"""
import collections, io, json, os, sys, time
clock = time.process_time
import qlint.cli
options = json.loads(sys.argv[1])
from qlint.analysis.flow import module_analysis
from qlint.analysis.flow.function_flows import FunctionFlow

stats = {"foreign_cpu": 0.0, "kept_cpu": 0.0, "analysed": 0, "reused": 0, "memo": 0, "own_analysed": 0}
stats["own_cpu"] = stats["foreign_in_own"] = 0.0
bodies = collections.Counter()
reads = collections.Counter()
foreign = set()  # ids of finished foreign flows
active = [0]
own = [0]  # the checked module's analyses under way, outside any foreign one
original = module_analysis.ModelFlow.function

def function(self, func, class_scope=None):
    if not self.depth:
        if id(func) not in self.memo.functions:
            stats["own_analysed"] += 1
        if own[0] or active[0]:  # charged to the outermost analysis under way
            return original(self, func, class_scope)
        own[0] += 1
        started = clock()
        try:
            return original(self, func, class_scope)
        finally:
            own[0] -= 1
            stats["own_cpu"] += clock() - started
    outer = active[0] == 0
    known = id(func) in self.memo.functions
    active[0] += 1
    started = clock()
    try:
        flow = original(self, func, class_scope)
    finally:
        active[0] -= 1
        spent = clock() - started
        if outer:
            stats["foreign_cpu"] += spent
            if own[0]:
                stats["foreign_in_own"] += spent
    try:  # a mistake here would be taken for the rule's: told apart (`errors`)
        note(self, func, flow, known, outer, spent)
    except Exception as error:
        errors.append(repr(error))
    return flow

def note(self, func, flow, known, outer, spent):
    if not known and flow is not None and id(flow) not in foreign:
        kind = shape_of(flow)
        shapes[kind] += 1
        if outer:
            outer_cpu[kind] += spent
            body = named(self.scope.path, func)
            heavy[f"{body} [{kind}{_why(flow) if kind == 'captures' else ''}]"] += spent
            # Kept (`shared_flows`): its analysis did not depend on the order things were met
            # in, so an answer kept for it holds wherever it is asked.
            if id(func) in self.tracker.deps and id(func) not in self.tracker.untaken:
                stats["kept_cpu"] += spent
    if known:
        stats["memo"] += 1
    elif flow is not None and id(flow) in foreign:
        stats["reused"] += 1  # kept by an earlier check of this process (`shared_flows`)
    else:
        stats["analysed"] += 1
        bodies[named(self.scope.path, func)] += 1
    if flow is not None:
        foreign.add(id(flow))

errors = []
shapes = collections.Counter()
heavy = collections.Counter()
outer_cpu = collections.Counter()
from qlint.value_classes import fields
# What a caller's `helper_calls.apply` reads of any flow: the rest is empty in an inert one.
_READ_ALWAYS = frozenset({"node", "path", "params", "param_objs", "returns", "return_items", "resolver", "keeps"})
_EFFECTS = tuple(f.name for f in fields(FunctionFlow) if f.name not in _READ_ALWAYS)
_PLAIN = frozenset({"call", "unknown"})

def _param_capture(flow, cap):
    # A capture of what a parameter passes, in the mode it came, under no branch condition,
    # reaching no prepare in the helper: what the caller reads is "parameter k is captured
    # by `api` at line L" (and the graph it may return).
    facts = [f.state == "unset" and not f.guard and not f.parts and f.origin is not None
             and f.origin.kind == "parameter" and f.origin.node is flow.node for f in cap.modes]
    return all(facts) and not cap.sinks and all(o.kind == "parameter" and o.node is flow.node for o in cap.origins)

def _why(flow):
    # What the captures hold that a parameter's mode as it came does not.
    seen = set()
    for cap in flow.captures:
        seen |= {("sink" if cap.sinks else "no sink")}
        for f in cap.modes:
            seen.add(f"{f.state}:{f.origin.kind if f.origin is not None else None}{'/guarded' if f.guard else ''}")
    return ": " + ", ".join(sorted(seen))

def shape(flow):
    # "inert": nothing a caller reads but values of no model (facts of no mode or of a plain
    # call's result, under no branch condition), and its parameters left as they came; else
    # the first thing that says otherwise.
    for name in _EFFECTS:
        if name not in ("calls", "foreign_calls") and getattr(flow, name):
            if name == "captures" and all(_param_capture(flow, c) for c in flow.captures):
                return "captures a parameter as it came"
            return name
    params = set(flow.param_objs.values())
    returned = [obj for _, obj in flow.returns] + [o for t in flow.return_items.values() for o in t]
    for env, _ in flow.returns:
        for param in params:
            if any(f.state != "unset" or f.parts or f.guard for f in env.facts(param)) or param in env.patched:
                return "switches a parameter"
    for obj in returned:
        if obj is None:
            continue
        if obj in params:
            return "returns a parameter"
        for o in obj.origins:
            if o.kind not in _PLAIN:
                return "returns: " + o.kind
        for env, _ in flow.returns:
            for f in env.facts(obj) if obj in env.modes else ():
                plain = f.state == "unknown" or (f.origin is not None and f.origin.kind in _PLAIN)
                if f.guard or f.parts or not plain:
                    return "returns a mode fact"
    return "inert"

def shape_of(flow):
    # Calls of helpers are recorded for caller searches (`caller_facts`, `project_callers`),
    # which read them of flows they ask for themselves: apart from the rest.
    kind = shape(flow)
    return kind + " (records calls)" if kind == "inert" and (flow.calls or flow.foreign_calls) else kind

module_analysis.ModelFlow.function = function


def named(path, func):
    path = os.path.abspath(path)
    if path.startswith(options["root"] + os.sep):
        path = os.path.relpath(path, options["root"])
    return f"{path}:{getattr(func, 'name', '<module>')}"
import ast
parse = ast.parse
stats["parse_in_foreign"] = stats["parse_cpu"] = 0.0

def timed_parse(*args, **kwargs):
    began = clock()
    try:
        return parse(*args, **kwargs)
    finally:
        spent = clock() - began
        stats["parse_cpu"] += spent
        if active[0]:
            stats["parse_in_foreign"] += spent

ast.parse = timed_parse
get = object.__getattribute__

def getattribute(self, name):
    if id(self) in foreign and not name.startswith("__"):
        caller = sys._getframe(1).f_code
        reads[(name, os.path.basename(caller.co_filename) + ":" + caller.co_name)] += 1
    return get(self, name)

if options["reads"]:
    FunctionFlow.__getattribute__ = getattribute
argv = options["argv"]
if len(sys.argv) > 2:
    sys.stdin = io.TextIOWrapper(open(sys.argv[2], "rb"))
sys.stdout = open(os.devnull, "w")
# As the `qlint` command: an edited check's garbage is left to the exit, never collected
# (`process_exit.ending`); else the collector's pass after it counted as the check's CPU.
from qlint.process_exit import ends_after_command
ends_after_command()
start = clock()
try:
    qlint.cli.main(argv)
except SystemExit:
    pass
stats["cpu"] = clock() - start
stats["errors"] = errors[:5]
stats["bodies"] = bodies.most_common(12)
stats["distinct"] = len(bodies)
stats["heavy"] = [(k, v) for k, v in heavy.most_common(8)]
stats["shapes"] = sorted(shapes.items(), key=lambda kv: (-kv[1], kv[0]))
stats["outer_cpu"] = sorted(outer_cpu.items(), key=lambda kv: -kv[1])
stats["reads"] = sorted(((f, c, n) for (f, c), n in reads.items()), key=lambda r: -r[2])
sys.__stdout__.write(json.dumps(stats))
# Without the interpreter's teardown, as the command ends (`process_exit.exit_now`): the
# process CPU is then the check's as the edited survey measures it.
sys.__stdout__.flush()
os._exit(0)
"""


# In a fresh interpreter, as the language server checks (argv: the file, the edited buffer):
# the file, then the buffer in the same editor's index, whose flows of the module's bodies the
# edit left alone are carried (`carried_flows`). Prints the CPU of the module's own flows in
# the second check (the other modules' flows they asked for left out) and the findings of both.
_CARRIED = r"""
import json, os, sys, time
clock = time.process_time
from qlint.analysis.flow import module_analysis
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from qlint.settings import Settings
spent = {"own": 0.0, "foreign": 0.0}
active = [0, 0]  # own analyses under way, other modules' under way
original = module_analysis.ModelFlow.function

def function(self, func, class_scope=None):
    mine = not self.depth
    if mine and (active[0] or active[1]) or not mine and active[1]:
        return original(self, func, class_scope)
    active[not mine] += 1
    started = clock()
    try:
        return original(self, func, class_scope)
    finally:
        active[not mine] -= 1
        if mine:
            spent["own"] += clock() - started
        elif active[0]:
            spent["foreign"] += clock() - started

module_analysis.ModelFlow.function = function
path, buffer = sys.argv[1:3]
project = ProjectIndex(track_dependents=True)
with open(path, encoding="utf-8-sig") as fh:
    saved = check_source(fh.read(), path, Settings(), project=project)
spent.update(own=0.0, foreign=0.0)
with open(buffer, encoding="utf-8") as fh:
    edited = check_source(fh.read(), path, Settings(), project=project)
print(json.dumps({"own_carried": spent["own"] - spent["foreign"], "findings": len(edited.diagnostics)}))
"""


def _carried(path: str, buffer: str, cwd: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    proc = subprocess.run([sys.executable, "-c", _CARRIED, path, buffer], cwd=cwd, env=env, capture_output=True)
    if proc.returncode:
        sys.exit(f"the carried probe failed on {path}:\n{proc.stderr.decode()[-2000:]}")
    return json.loads(proc.stdout)


def _probe(argv: list[str], cwd: str, root: str, reads: bool, stdin: str | None = None) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    options = json.dumps({"argv": argv, "root": root, "reads": reads})
    cmd = [sys.executable, "-c", _PROBE, options, *([stdin] if stdin else [])]
    before = children_cpu()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=True)
    stats = json.loads(proc.stdout)
    # The whole process's, as the edited survey measures a check (start-up and imports in).
    stats["process_cpu"] = children_cpu() - before
    return stats


def _show(label: str, stats: dict, bodies: bool) -> None:
    if stats["errors"]:
        sys.exit(f"{label}: the probe failed: {stats['errors']}")
    share = stats["foreign_cpu"] / stats["cpu"] if stats["cpu"] else 0.0
    print(
        f"{label}: CPU {stats['cpu']:.3f} s, other modules' flows {stats['foreign_cpu']:.3f} s ({share:.0%});"
        f" bodies analysed {stats['analysed']} ({stats['distinct']} distinct), reused {stats['reused']},"
        f" memo hits {stats['memo']}; own bodies analysed {stats['own_analysed']}"
    )
    print(f"   of which flows kept as order-free (`shared_flows`) {stats['kept_cpu'] * 1000:.1f} ms")
    own = stats["own_cpu"] - stats["foreign_in_own"]
    print(
        f"   the checked module's own flows {own * 1000:.1f} ms (besides {stats['foreign_in_own'] * 1000:.1f} ms"
        f" of other modules' flows they asked for); process CPU {stats['process_cpu']:.3f} s"
    )
    parse, inside = stats["parse_cpu"] * 1000, stats["parse_in_foreign"] * 1000
    print(f"   ast.parse CPU {parse:.1f} ms, of which inside other modules' flows {inside:.1f} ms")
    print("   shapes of bodies analysed (count): " + ", ".join(f"{k} {n}" for k, n in stats["shapes"]))
    print(
        "   CPU of the outermost ones by shape: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in stats["outer_cpu"])
    )
    print("   the costliest of them:")
    for body, spent in stats["heavy"]:
        print(f"      {spent * 1000:6.1f} ms  {body}")
    if bodies:
        print("   bodies analysed most often:")
        for body, n in stats["bodies"]:
            print(f"      {n:4}  {body}")
    if stats["reads"]:
        fields = collections.Counter()
        for field, _, n in stats["reads"]:
            fields[field] += n
        print(
            "   fields read of finished foreign flows (reads): "
            + ", ".join(f"{f} {n}" for f, n in fields.most_common())
        )
        for field, caller, n in stats["reads"][:40]:
            print(f"      {n:6}  {field:16} {caller}")


def _bounds(tree: str, n: int, runs: int, cwd: str, cache: str) -> None:
    """`--survey`: what each lever could make of the edited survey's p90 at most, per run: the
    process CPU of each file's check as it is, less its other modules' flows, less its own
    module's flows (the other modules' flows they asked for left in), with its own module's
    flows as they cost when the editor's index carries them from the check of the saved file
    (`_CARRIED`, once per file: what the same carry kept across processes would leave), and
    less both."""
    from edited_one_file import admitted, percentile, sample
    from keystroke_edits import keystroke_edits

    paths = admitted(tree)
    paths = sample(paths, n) if n else paths
    qlint = [sys.executable, "-m", "qlint", "check", "--exit-zero", "--quiet", "--cache-dir", cache]
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([*qlint, tree], cwd=cwd, env=env, capture_output=True, check=True)
    buffer = os.path.join(cwd, "edited.py")
    figures: list[list[tuple[float, float, float, float, str]]] = [[] for _ in range(runs)]
    for path in paths:
        with open(path, encoding="utf-8-sig") as fh, open(buffer, "w", encoding="utf-8") as out:
            out.write(keystroke_edits(fh.read(), 1)[0])
        argv = ["check", "--exit-zero", "--quiet", "--cache-dir", cache, "--stdin-filename", path, "-"]
        carried = _carried(path, buffer, cwd)["own_carried"]
        for run in range(runs):
            stats = _probe(argv, cwd, tree, False, buffer)
            own = stats["own_cpu"] - stats["foreign_in_own"]
            figures[run].append((stats["process_cpu"], stats["foreign_cpu"], own, carried, path))
    print(f"{tree}: {len(paths)} files admitted by a QL1xx/QL2xx prefilter; CPU p90 of the edited check")
    for run, rows in enumerate(figures):
        ways = {
            "as is": [cpu for cpu, _, _, _, _ in rows],
            "without other modules' flows": [cpu - foreign for cpu, foreign, _, _, _ in rows],
            "without its own flows": [cpu - own for cpu, _, own, _, _ in rows],
            "its own carried as an editor's": [cpu - own + kept for cpu, _, own, kept, _ in rows],
            "without both": [cpu - foreign - own for cpu, foreign, own, _, _ in rows],
        }
        print(f"   run {run + 1}: " + ", ".join(f"{way} {percentile(v, 0.9):.3f} s" for way, v in ways.items()))
    print("   files over 0.15 s in the last run: process CPU, other modules' flows, own flows, own carried")
    for cpu, foreign, own, kept, path in sorted(figures[-1], reverse=True):
        if cpu > 0.15:
            print(f"      {cpu:.3f}  {foreign:.3f}  {own:.3f}  {kept:.3f}  {os.path.relpath(path, tree)}")


def main() -> int:
    from keystroke_edits import keystroke_edits

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*")
    parser.add_argument("--tree")
    parser.add_argument("--whole")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reads", action="store_true", help="count the fields read of other modules' flows")
    parser.add_argument("--survey", metavar="TREE", help="what each lever could make of the edited survey's p90")
    parser.add_argument("--sample", type=int, default=20, help="with --survey: N largest files and N drawn (0: all)")
    args = parser.parse_args()
    cwd = tempfile.mkdtemp(prefix="qlint-foreign-cwd-")
    cache = tempfile.mkdtemp(prefix="qlint-foreign-cache-")
    try:
        if args.survey:
            _bounds(os.path.abspath(args.survey), args.sample, args.runs, cwd, cache)
            return 0
        if args.whole:
            whole = ["check", "--exit-zero", "--quiet", "--no-cache", "-j1", os.path.abspath(args.whole)]
            stats = _probe(whole, cwd, os.path.abspath(args.whole), args.reads)
            _show(args.whole, stats, True)
            return 0
        files = [os.path.abspath(f) for f in args.files]
        if not files:
            parser.error("FILE or --whole TREE is needed")
        if args.tree:
            tree = os.path.abspath(args.tree)
        else:
            from qlint.analysis.names.package_map import project_root

            tree = project_root(files[0]) or os.path.dirname(files[0])
        qlint = [sys.executable, "-m", "qlint", "check", "--exit-zero", "--quiet"]
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        subprocess.run([*qlint, "--cache-dir", cache, tree], cwd=cwd, env=env, capture_output=True, check=True)
        buffer = os.path.join(cwd, "edited.py")
        for path in files:
            with open(path, encoding="utf-8-sig") as fh, open(buffer, "w", encoding="utf-8") as out:
                out.write(keystroke_edits(fh.read(), 1)[0])
            argv = ["check", "--exit-zero", "--quiet", "--cache-dir", cache, "--stdin-filename", path, "-"]
            for run in range(args.runs):
                stats = _probe(argv, cwd, tree, args.reads, buffer)
                _show(f"{os.path.relpath(path, tree)} run {run + 1}", stats, run == args.runs - 1)
        return 0
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

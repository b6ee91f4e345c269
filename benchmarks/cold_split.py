"""Where the CPU of a cold whole-tree run goes, and how far it is from its parse floor (issue 13).

    python benchmarks/cold_split.py [--ruff] [--floor-runs N] [--files N] [--rule-checks N] [--askers N]
        [--caller-searches N] PATH

Runs `qlint check --no-cache -j1 -q --exit-zero PATH` in this process (from PATH's directory
when PATH is a directory, as `/work/ref/ab.sh` runs it) with each phase charged its own CPU
time (`time.process_time`, nested phases taken out of the one that called them):

- `parse: checked files`: the engine's parse of a file it checks (`engine.parse_module`);
- `parse: other modules`: every other `ast.parse`: summaries of imported modules, the project
  scans, statements parsed alone (a tree a summary parsed and handed to the file's check later,
  `tree_handover`, counts here);
- `check QLnnn`: a rule's own work on a parsed file (its summaries' parses taken out);
- `text trigger QLnnn` / `import trigger QLnnn`: the prefilter, asked of every file;
- `wrapper index`: the project's index of insertion wrappers, made in a forked child by a real
  run (`forked_call`), here in this process so that its CPU counts;
- `gc`: cyclic collections; `rest of the files' checks`: reading, decoding, freeing trees and
  analyses, suppressions, and this script's own wrappers around each trigger and rule (at
  534c768 on ExecuTorch the engine's own per-file work was 0.33-0.38 s of the 1.09 s shown
  there); `outside the checks`: discovery, settings, output.

A -j1 run is not a -j2 run split in two: with one process the project's word search cuts each
module's words itself (`project_words`), where a real -j2 run's words child scans them once into
the shared mapping, and nothing is handed over between processes. Compare phases of one
checkout against another's, not against `bench_trees.py`'s wall times.

`--files N`: the N files whose checks took the most CPU, each check whole (its parses,
rules and summaries of other modules included); run once per checkout (`PYTHONPATH=SRC`) and
compare: at 8a3dd23 against 9216a04, ao's whole -j1 difference (+0.1 s) was one file's check.

`--rule-checks N`: the N checks of one rule on one file that took the most CPU, each whole (the
parses and summaries it asked for included), as `file  QLnnn`: which rule's work on which file
grew between two checkouts. At b4669c4 against 9216a04 on ao (-j1, loaded machine, best of two
runs each): QL202 on torchao/testing/pt2e/utils.py 0.016 -> 0.129 s (its helper's 15 callers
in the test modules read to drop a false alarm), QL101 on qat_utils.py 0.023 -> 0.078 s,
QL201 on test_quantize_pt2e.py 0.080 -> 0.122 s; no other over +0.025 s.

`--askers N`: `parse: other modules` by the N readers that asked most (the innermost qlint
function outside the project index's machinery, `qlint/analysis/names/`: a resolver's lookup
through another module is charged to the rule code that asked), whole modules (each piece of
one parsed in pieces counts) apart from statements parsed alone, and for each the parses of
a text this run had parsed before (same file, same characters: a tree no reader held any
more, which only a tree kept longer could have saved); the checked files' parses too, for
those. At 5e82828 on ExecuTorch -j1 (10.6 s on a loaded machine): 689 parses of whole
modules (pieces counted) took 0.91 s, 57 of them (0.10 s) of a text parsed before, and 33 of
the checked files' 264 (0.08 s), most of both qualcomm's test_qnn_delegate.py (465 KB), parsed
by three checks (a summary's, its own, a caller search's: over `tree_handover`'s budget);
170 of 594 statements (0.06 s) were parsed again after their module's entry was set aside
(`set_asides`); `model_interp.qualname` asked 262 of the module parses.

A module's parse is charged to the first reader that asked, which overstates what a cut of
that reader would save when others read the module after it (stop 63 read
`model_interp.qualname`'s 0.41 s as a cut to make). So each reader's row also counts its
parses of modules no other reader was served afterwards without parsing them again (an
index entry, a live tree or one of its statements, a tree kept or handed over to the check):
what a cut of that reader alone saves at least. At fc44e763 on ExecuTorch -j1: 687 module
parses, 1.00 s; 203 of them (0.29 s) no later reader was served; `model_interp.qualname`
283 parses, 0.37 s, of which 86 (0.09 s) no later reader needed; `project_search.references_loading`
140, 0.21 s, none.

`--caller-searches N`: the N searches for a helper's callers in the other modules
(`project_callers`: QL201's and QL202's verdicts on a helper's callers, the call paths of
QL201's branch verdicts, whether another module uses a function at all) that took the most
CPU, by the helper asked about (file, function, parameter) and the rule that asked, each its
own work (a search started while another's calls are judged is charged to itself): finding
the callers (the candidate modules' words, references and the parses behind them), analysing
the bodies holding the calls (`_calls_in`: the caller module's parse and model flow), and the
asking rule judging the calls found, between two of them. At 275d9e8a on ExecuTorch -j1 (13.7 s
in all, a loaded machine) QL201's three verdicts that read most were qualcomm's
`get_qdq_module` (0.82 s: 532 calls in test_qnn_delegate.py, its parse and 254 bodies 0.56 s,
judging 0.23 s), `build_executorch_binary` (0.66 s: 44 example scripts, bodies 0.52 s) and
`skip_annotation` (0.24 s, 0.16 s of it finding: test_qnn_delegate.py's parse): each body is
read once and no question is asked twice; what is left is the first reading of those callers.

Then the parse floor: the CPU of `ast.parse` alone (best of `--floor-runs`) over every file
the run was given, over those the run parsed, and over those with a finding, the least any
analysis on `ast` must spend. `--ruff`: the CPU (user+sys) of `ruff check --select ALL
--no-cache` on the same path, for the ratio issue 13 budgets (qlint at 0.3x of it). CPU, not
wall: on a machine shared with other work CPU figures hold, wall ones do not.
"""

from __future__ import annotations

import argparse
import ast
import collections
import contextlib
import gc
import io
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

_clock = time.process_time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from caller_searches import Searches, searched  # noqa: E402


class Phases:
    """CPU seconds and calls per phase, each phase's time without the phases it called."""

    def __init__(self) -> None:
        self.seconds: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()
        self.bytes: collections.Counter[str] = collections.Counter()
        self._inner: list[float] = []  # per open phase: the time of the phases it called

    def run(self, name: str, func: Callable[..., Any], *args, **kwargs) -> Any:
        start = _clock()
        self._inner.append(0.0)
        try:
            return func(*args, **kwargs)
        finally:
            self.add(name, _clock() - start, self._inner.pop())

    def add(self, name: str, elapsed: float, inner: float = 0.0) -> None:
        self.seconds[name] += elapsed - inner
        self.calls[name] += 1
        if self._inner:
            self._inner[-1] += elapsed


def _parse_kind() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "parse_module" and frame.f_code.co_filename.endswith("engine.py"):
            return "parse: checked files"
        frame = frame.f_back
    return "parse: other modules"


def _asker(depth: int = 3) -> tuple[str, str]:
    """(what was parsed: "module" or "statement", the reader that asked): the innermost qlint
    function outside `qlint/analysis/names/` (`model_interp.qualname`, not the resolver, the
    project index and the summary it went through), `run` when none; from the frame `depth`
    below this one."""
    import qlint

    package = os.path.dirname(os.path.abspath(qlint.__file__)) + os.sep
    machinery = os.path.join(package, "analysis", "names") + os.sep
    frame = sys._getframe(depth)
    what = "module"
    while frame is not None:
        code = frame.f_code
        file = code.co_filename
        if file.startswith(machinery):
            if code.co_name == "_parse" and file.endswith("summary.py"):
                what = "statement"
        elif file.startswith(package):
            module = file[len(package) :].removesuffix(".py").replace(os.sep, ".")
            return what, f"{module}.{code.co_name}"
        frame = frame.f_back
    return what, "run"


class Askers:
    """`parse: other modules` by reader, whole modules apart from statements: CPU and parses,
    those of a text parsed before in this run (same file, same characters), and those of a
    module no other reader was served after the parse without parsing it again (`needed`):
    what a cut of that reader alone would save at least."""

    def __init__(self) -> None:
        self.seconds: collections.Counter[tuple[str, str]] = collections.Counter()
        self.calls: collections.Counter[tuple[str, str]] = collections.Counter()
        self.again_seconds: collections.Counter[tuple[str, str]] = collections.Counter()
        self.again_calls: collections.Counter[tuple[str, str]] = collections.Counter()
        self._seen: set[tuple[str, int, int]] = set()
        # path -> [site, seconds] of each whole-module parse of it no other reader has been
        # served since.
        self._open: dict[str, list[list]] = {}
        self._parses: list[list] = []  # every such entry, in the order parsed
        self._counts: collections.Counter[str] = collections.Counter()

    def add(self, source, filename: str, elapsed: float, checked: bool = False, site=None) -> None:
        """A parse of `source` (a piece of a module parsed in pieces counts as one) that took
        `elapsed`: the engine's of a file it checks (`checked`: only told "again"), or another
        (`site`: its (kind, reader), by default the reader asking now)."""
        site = ("checked", "engine.parse_module") if checked else site or _asker()
        self.seconds[site] += elapsed
        self.calls[site] += 1
        if isinstance(source, (str, bytes)):
            text = (str(filename), len(source), hash(source))
            if text in self._seen:
                self.again_seconds[site] += elapsed
                self.again_calls[site] += 1
            self._seen.add(text)
        if site[0] == "module" and isinstance(filename, str) and not filename.startswith("<"):
            path = os.path.abspath(filename)
            entry = [site, elapsed]
            self._parses.append(entry)
            self._open.setdefault(path, []).append(entry)
            self._counts[path] += 1

    def parses_of(self, path: str) -> int:
        """How many whole-module parses of `path` this run has made so far."""
        return self._counts[os.path.abspath(path)]

    def needed(self, path: str, reader: str | None = None) -> None:
        """`reader` (by default the one asking now) was served the module at `path` without
        parsing it (its entry in the project index, a whole tree or a statement of one kept
        alive, a tree handed over): a parse of it by another reader saved that reader's own."""
        if reader is None:
            reader = _asker()[1]
        entries = self._open.get(os.path.abspath(path))
        if entries:
            entries[:] = [e for e in entries if e[0][1] == reader]

    def alone(self, site: tuple[str, str]) -> tuple[int, float]:
        """(parses, seconds) of `site`'s whole-module parses no later reader needed."""
        open_ids = {id(e) for entries in self._open.values() for e in entries}
        mine = [e for e in self._parses if e[0] == site and id(e) in open_ids]
        return len(mine), sum(e[1] for e in mine)

    def rows(self, top: int, total: float) -> list[str]:
        out = []
        checked = ("checked", "engine.parse_module")
        if self.calls[checked]:
            again = f"{self.again_calls[checked]} of a text another reader had parsed"
            again += f", {self.again_seconds[checked]:.2f} s"
            out.append(_row(self.seconds[checked], total, f"checked files ({self.calls[checked]} parses; {again})"))
        for what in ("module", "statement"):
            sites = [s for s in self.seconds if s[0] == what]
            seconds, again = sum(self.seconds[s] for s in sites), sum(self.again_seconds[s] for s in sites)
            calls, again_calls = sum(self.calls[s] for s in sites), sum(self.again_calls[s] for s in sites)
            head = f"{what}s ({calls} parses; again {again_calls}, {again:.2f} s"
            if what == "module":
                alone = [self.alone(s) for s in sites]
                head += f"; no later reader {sum(n for n, _ in alone)}, {sum(t for _, t in alone):.2f} s"
            out.append(_row(seconds, total, head + ")"))
            for site in sorted(sites, key=lambda s: -self.seconds[s])[:top]:
                detail = f"again {self.again_calls[site]}, {self.again_seconds[site]:.2f} s"
                if what == "module":
                    n, alone_seconds = self.alone(site)
                    detail += f"; no later reader {n}, {alone_seconds:.2f} s"
                out.append("  " + _row(self.seconds[site], total, f"{site[1]} ({self.calls[site]}; {detail})"))
        return out


@contextlib.contextmanager
def instrumented(
    phases: Phases,
    files: dict[str, tuple[bool, int]],
    cpu: dict[str, float] | None = None,
    askers: Askers | None = None,
    rule_cpu: dict[tuple[str, str], float] | None = None,
    searches: Searches | None = None,
):
    """The run's phases timed into `phases`; each checked file's (parsed, findings) into
    `files`, the CPU of its whole check into `cpu`, the parses of other modules by reader
    into `askers`, the CPU of each rule's whole check of a file into `rule_cpu` (by path
    and rule code), and the caller searches into `searches`. Everything patched is put back
    on leaving."""
    from qlint import file_checks, registry
    from qlint.analysis import forked_call

    real_parse, real_call, real_one = ast.parse, forked_call.call, file_checks.check_one_uncached
    deferred = registry.DeferredRule
    real_rule = {m: getattr(deferred, m) for m in ("check", "triggered_by", "triggered_through_imports")}
    labels = {"check": "check", "triggered_by": "text trigger", "triggered_through_imports": "import trigger"}

    def parse(source, *args, **kwargs):
        kind = _parse_kind()
        if isinstance(source, (str, bytes)):
            phases.bytes[kind] += len(source)
        if askers is None:
            return phases.run(kind, real_parse, source, *args, **kwargs)
        start = _clock()
        try:
            return phases.run(kind, real_parse, source, *args, **kwargs)
        finally:
            filename = kwargs.get("filename", args[0] if args else "<unknown>")
            askers.add(source, filename, _clock() - start, kind == "parse: checked files")

    def rule_method(method: str):
        real = real_rule[method]

        def timed(self, *args, **kwargs):
            name = f"{labels[method]} {self.code}"
            if method == "check":  # a generator: its work is done while it is drained
                start = _clock()
                if searches is not None:
                    searches.rule = self.code
                try:
                    return phases.run(name, lambda: list(real(self, *args, **kwargs)))
                finally:
                    if rule_cpu is not None and args:
                        key = (str(getattr(args[0], "path", "?")), self.code)
                        rule_cpu[key] = rule_cpu.get(key, 0.0) + _clock() - start
            return phases.run(name, real, self, *args, **kwargs)

        return timed

    def in_process(work, meanwhile=None):
        if meanwhile is not None:
            meanwhile()
        return phases.run("wrapper index", work)

    def check_one(path, settings):
        start = _clock()
        out = phases.run("rest of the files' checks", real_one, path, settings)
        if cpu is not None:
            cpu[path] = _clock() - start
        files[path] = (out[0].parsed, len(out[0].diagnostics))
        return out

    started: list[float] = []

    def collection(phase: str, info: dict) -> None:
        if phase == "start":
            started.append(_clock())
        elif started:
            phases.add("gc", _clock() - started.pop())

    ast.parse, forked_call.call, file_checks.check_one_uncached = parse, in_process, check_one
    for method in real_rule:
        setattr(deferred, method, rule_method(method))
    gc.callbacks.append(collection)
    try:
        with searched(searches), _served(askers):
            yield
    finally:
        gc.callbacks.remove(collection)
        ast.parse, forked_call.call, file_checks.check_one_uncached = real_parse, real_call, real_one
        for method, real in real_rule.items():
            setattr(deferred, method, real)


@contextlib.contextmanager
def _served(askers: Askers | None):
    """Tell `askers` of each module a reader is served without a parse of its own: a project
    index entry (`module_entry`), a live tree or one of its statements (`live_trees`), a tree
    kept for it (`ProjectIndex.take_tree`) or handed over to the check (`engine._handed_tree`).
    Each of those takes the path second."""
    if askers is None:
        yield
        return
    from qlint import engine
    from qlint.analysis.names import live_trees, module_entries, project

    owners = [
        (module_entries, "module_entry"),
        (project, "module_entry"),
        (live_trees.LiveTrees, "tree"),
        (live_trees.LiveTrees, "statement"),
        (project.ProjectIndex, "take_tree"),
        (engine, "_handed_tree"),
    ]
    real = [getattr(owner, name) for owner, name in owners]

    def serving(func):
        def hooked(*args, **kwargs):
            path = args[1]
            before = askers.parses_of(path)
            out = func(*args, **kwargs)
            if out is not None and askers.parses_of(path) == before:
                askers.needed(path)
            return out

        return hooked

    for (owner, name), func in zip(owners, real, strict=True):
        setattr(owner, name, serving(func))
    try:
        yield
    finally:
        for (owner, name), func in zip(owners, real, strict=True):
            setattr(owner, name, func)


def parse_floor(paths: list[str], runs: int) -> tuple[float, int]:
    """(best CPU seconds of `ast.parse` over `paths`, their bytes)."""
    texts = []
    for path in paths:
        with contextlib.suppress(OSError), open(path, "rb") as fh:
            texts.append(fh.read())
    best = float("inf")
    for _ in range(max(runs, 1)):
        start = _clock()
        for data in texts:
            with contextlib.suppress(SyntaxError, ValueError, RecursionError, MemoryError):
                ast.parse(data)
        best = min(best, _clock() - start)
    return best, sum(map(len, texts))


def ruff_cpu(path: str) -> float | None:
    ruff = shutil.which("ruff")
    if ruff is None:
        return None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", "."],
        cwd=path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path)) or ".",
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _row(seconds: float, total: float, text: str) -> str:
    return f"{seconds:8.2f} s {100 * seconds / total:5.1f}%  {text}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--ruff", action="store_true", help="also the CPU of ruff check --select ALL there")
    parser.add_argument("--floor-runs", type=int, default=3)
    parser.add_argument("--files", type=int, default=0, metavar="N", help="the N files whose checks took most CPU")
    parser.add_argument("--askers", type=int, default=0, metavar="N", help="other modules' parses by the N top readers")
    parser.add_argument("--rule-checks", type=int, default=0, metavar="N", help="the N costliest (file, rule) checks")
    parser.add_argument("--caller-searches", type=int, default=0, metavar="N", help="the N costliest caller searches")
    args = parser.parse_args(argv)
    path = os.path.abspath(args.path)
    target = "."
    if os.path.isdir(path):
        os.chdir(path)
    else:
        target = path
    from qlint import cli

    phases = Phases()
    files: dict[str, tuple[bool, int]] = {}
    cpu: dict[str, float] = {}
    askers = Askers() if args.askers > 0 else None
    rule_cpu: dict[tuple[str, str], float] = {}
    searches = Searches() if args.caller_searches > 0 else None
    start = _clock()
    quiet = contextlib.redirect_stdout(io.StringIO())
    with instrumented(phases, files, cpu, askers, rule_cpu, searches), quiet, contextlib.suppress(SystemExit):
        cli.main(["check", "--no-cache", "-j1", "-q", "--exit-zero", target])
    total = _clock() - start
    phases.seconds["outside the checks"] = total - sum(phases.seconds.values())
    phases.calls["outside the checks"] = 1
    print(f"qlint check --no-cache -j1: {total:.2f} s CPU in-process, {len(files)} files")
    for name, seconds in sorted(phases.seconds.items(), key=lambda kv: -kv[1]):
        size = f", {phases.bytes[name] / 2**20:.1f} MiB" if name in phases.bytes else ""
        print(_row(seconds, total, f"{name} ({phases.calls[name]} calls{size})"))
    parsing = sum(s for n, s in phases.seconds.items() if n.startswith("parse:"))
    print(_row(parsing, total, "all parsing"))
    if askers is not None:
        print(f"parses by reader, the {args.askers} asking most of each kind (again: a text parsed before):")
        for line in askers.rows(args.askers, total):
            print(line)
    if args.files > 0:
        print(f"the {args.files} costliest checks (each whole):")
        for name, seconds in sorted(cpu.items(), key=lambda kv: -kv[1])[: args.files]:
            print(_row(seconds, total, os.path.relpath(name) if target == "." else name))
    if args.rule_checks > 0:
        print(f"the {args.rule_checks} costliest checks of one rule on one file (each whole):")
        for (name, code), seconds in sorted(rule_cpu.items(), key=lambda kv: -kv[1])[: args.rule_checks]:
            print(_row(seconds, total, f"{os.path.relpath(name) if target == '.' else name}  {code}"))
    if searches is not None:
        print(f"the {args.caller_searches} costliest caller searches (each its own work, its parses included):")
        for line in searches.lines(args.caller_searches, total, os.path.relpath if target == "." else str):
            print(line)
    print("parse floor (ast.parse alone):")
    floors = {}
    for label, chosen in (
        ("every file", list(files)),
        ("files the run parsed", [p for p, (parsed, _) in files.items() if parsed]),
        ("files with a finding", [p for p, (_, found) in files.items() if found]),
    ):
        seconds, size = floors[label] = parse_floor(chosen, args.floor_runs)
        print(f"{seconds:8.2f} s  {label} ({len(chosen)} files, {size / 2**20:.1f} MiB)")
    if args.ruff:
        ruff = ruff_cpu(path)
        if ruff is None:
            print("ruff is not installed")
        else:
            print(f"ruff check --select ALL --no-cache: {ruff:.2f} s CPU; qlint {total / ruff:.2f}x of it")
            for label, (seconds, _) in floors.items():
                print(f"   parse floor over {label}: {seconds / ruff:.2f}x of ruff ALL")
    return 0


if __name__ == "__main__":
    sys.exit(main())

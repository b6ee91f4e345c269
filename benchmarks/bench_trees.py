"""qlint against ruff on the repositories qlint is for, in one run, with the targets beside
each ratio (issue 13). Every ratio compares commands measured side by side in this run, so
a loaded machine slows both sides alike; absolute seconds are only for orientation.

    python benchmarks/bench_trees.py --executorch ~/src/executorch --ao ~/src/ao
    python benchmarks/bench_trees.py --executorch-git MIRROR.git --ao-git MIRROR.git

Trees: pytorch/executorch and pytorch/ao at the commits pinned below, and the installed
torch package. The script fetches nothing; get the two repositories with

    git clone https://github.com/pytorch/executorch && git -C executorch checkout <EXECUTORCH_COMMIT>
    git clone https://github.com/pytorch/ao && git -C ao checkout <AO_COMMIT>

or give a local clone or bare mirror with `--executorch-git`/`--ao-git`: the pinned commit's
Python sources and lint configs are written to a temporary directory (blobs missing from a
partial mirror, such as large weights, are never needed). A tree that is a git checkout at
another commit is measured anyway, with a warning. Omit a flag to skip that tree.

Per tree: cold whole-tree `qlint check --no-cache` against `ruff check --select ALL
--no-cache`; warm `qlint check` (cache filled first) against warm `ruff check --select E,F`
(its cache filled first too; the `--no-cache` E,F run is printed for orientation); peak
memory of the whole process tree against ruff ALL's, as PSS (qlint's forked workers share
their parent's pages, which RSS counts once per process) and as RSS, the median of the runs
(the highest beside it);
`qlint check FILE`
(warm) against `ruff check FILE` on the largest module with findings; and the in-process
check time of that module (the engine's `check_source`, with the other modules it reads
already loaded, as in the language server).

That module is one of many that pre-commit and an editor check, so the edited check runs too
on a fixed sample of the files a QL1xx/QL2xx rule's text prefilter admits (the files whose
check does rule work): the `--survey` N largest (default 20) plus N others drawn with a fixed
seed (benchmarks/edited_one_file.py's `--survey --sample N`, whose code this reuses), `--runs`
times each per variant, in the cache the warm runs left. A file's figure is the median of its
runs (one run per file would let a single stall on a loaded machine stand as that file's
time, and the p90 of 40 files is the 5th slowest). Printed: the wall median, p90 and max over
those files and how many exceed the one-file target, CPU beside, and the slowest files; the
table's row is the p90. The sample leans to long modules (half of it is the largest), so its
spread is the heavier side of what the prefilter admits. `--survey 0` leaves it out.

Peak memory varies between runs of the same command by the work split, not by load: a run
over many bytes checks in several processes (the parent and its workers, `qlint.worker_pool`),
each taking the next chunk of files when it is free, and the peak is the sum of the
processes' highest points. Which process checks a memory-heavy module (one whose check
parses many callers) depends on timing, and the parent, which holds the run's results and
state besides, costs more for the same checks than a worker (the chunks of one package go
to one process, `check_chunks._Affinity`, which took ExecuTorch's spread from 170-188 MiB to
165-166). Hence medians over `--runs` (3 by default), with the highest printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from bench_vs_ruff import default_tree, measure, measure_tree
from edited_one_file import admitted, edited_checks, sample, spread
from keystroke_edits import keystroke_edits

EXECUTORCH_COMMIT = "cff6f4dd32e630945b7188512c1f2b4f102b05ad"
AO_COMMIT = "36027d82d1ad9949597ea16002ff4940374b1b94"

# (label, target, how the ratio is formed); "ao" has its own warm target: its whole ruff E,F
# run takes under 0.2 s, so a Python process's start-up is the floor there.
COLD_TARGET = 0.3
WARM_TARGET = {"default": 0.2, "ao": 0.5}
ONE_FILE_SECONDS = 0.15
SURVEY_SAMPLE = 20  # `--survey`: the N largest admitted files plus N drawn, per tree
IN_PROCESS_MS = 30.0  # for a module of about 2,000 lines

# Each timed check is of the buffer a keystroke left (benchmarks/keystroke_edits.py, the
# edits benchmarks/check_phases.py times too): the identical text again would let anything
# keyed on the file's content answer for free, which no user typing waits for.
_IN_PROCESS = """
import statistics, sys, time
sys.path.insert(0, sys.argv[3])
from keystroke_edits import keystroke_edits
from qlint.config import load_settings
from qlint.engine import check_source
try:
    from qlint.analysis.names.project import ProjectIndex
except ImportError:  # qlint before the analysis subpackages
    from qlint.analysis.names.project import ProjectIndex
path, runs = sys.argv[1], int(sys.argv[2])
settings = load_settings([path])
data = open(path, "rb").read()
project = ProjectIndex()
if hasattr(project, "watch"):  # an editor whose client watches the files (VS Code): keys kept between keystrokes
    import os
    from qlint.analysis.names.package_map import project_root
    project.watch([project_root(os.path.abspath(path)) or os.path.dirname(os.path.abspath(path))])
check_source(data, path, settings, project)  # load the modules it reads, as an open editor has
times = []
for buffer in keystroke_edits(data.decode("utf-8-sig"), runs):
    edited = buffer.encode("utf-8")
    start = time.perf_counter()
    result = check_source(edited, path, settings, project)
    times.append(time.perf_counter() - start)
print(statistics.median(times) * 1000, len(result.diagnostics))
"""


def _tool(name: str) -> str:
    """The real executable next to this interpreter, not a version manager's shell shim
    (a shim adds tens of milliseconds to every run and would flatter qlint)."""
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.access(beside, os.X_OK) else (shutil.which(name) or sys.exit(f"{name} is not installed"))


def _env() -> dict[str, str]:
    # An installed package has its bytecode compiled; a PYTHONDONTWRITEBYTECODE in the
    # environment would make every qlint run recompile its own sources.
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _commit(tree: str, pinned: str | None) -> str:
    marker = os.path.join(tree, _MATERIALISED)
    if os.path.isfile(marker):
        with open(marker) as fh:
            return fh.read().strip()
    try:
        top, head = subprocess.run(
            ["git", "-C", tree, "rev-parse", "--show-toplevel", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError, ValueError):
        return "not a git checkout (commit unknown)"
    if os.path.realpath(top) != os.path.realpath(tree):
        return "not a git checkout (commit unknown)"  # a tree inside some other repository
    if pinned and head != pinned:
        return f"{head} (WARNING: pinned {pinned})"
    return head


def _files_with_findings(qlint: list[str], tree: str, cwd: str) -> list[str]:
    out = subprocess.run(
        [*qlint, "--no-cache", "--output-format", "json", tree], cwd=cwd, capture_output=True, env=_env()
    )
    found = {os.path.join(cwd, d["filename"]) for d in json.loads(out.stdout or b"[]")}
    return sorted(found, key=_line_count, reverse=True)


def _line_count(path: str) -> int:
    with open(path, "rb") as fh:
        return fh.read().count(b"\n")


Command = tuple[list[str], dict[str, str]]  # argv and environment


Measured = tuple[float, float, float, float, float]  # wall s; peak RSS and PSS MiB, median then max


def _median_runs(commands: dict[str, Command], cwd: str, runs: int) -> dict[str, Measured]:
    """Per command, over the runs: the median wall seconds, the median peak RSS and PSS
    (MiB), and the highest peak RSS and PSS. Peaks vary between runs of one command (which
    process checks which files: see the module's doc), so the median is the figure compared
    with ruff's, and the highest is printed beside it."""
    results: dict[str, list[tuple[float, int, int]]] = {}
    for _ in range(runs):  # interleaved, so background load hits every command alike
        for name, (cmd, env) in commands.items():
            results.setdefault(name, []).append(measure_tree(cmd, cwd, env=env))
    return {
        n: (
            statistics.median(r[0] for r in rs),
            statistics.median(r[1] for r in rs) / 1024,
            statistics.median(r[2] for r in rs) / 1024,
            max(r[1] for r in rs) / 1024,
            max(r[2] for r in rs) / 1024,
        )
        for n, rs in results.items()
    }


def _variants(against: str | None) -> list[tuple[str, dict[str, str]]]:
    """("", this qlint) and, with `--against SRC`, ("@against", the qlint in SRC), each
    byte-compiled (`byte_compile`)."""
    out = [("", _env())]
    if against:
        env = _env()
        env["PYTHONPATH"] = os.path.abspath(against)
        out.append(("@against", env))
    for _, env in out:
        byte_compile(env)
    return out


def byte_compile(env: dict[str, str]) -> str:
    """Compile the bytecode of the qlint package `env` imports, as an install does, and return
    its directory. Without it the first run of each variant compiles qlint's sources (~2.5 G
    instructions, a sixth of ao's cold run), and a median of two runs carries half of that for
    whichever side had no `__pycache__` yet."""
    where = "import importlib.util as u; print(u.find_spec('qlint').submodule_search_locations[0])"
    # From an empty directory: `python -c` looks in its working directory first.
    with tempfile.TemporaryDirectory() as empty:
        found = subprocess.run([sys.executable, "-c", where], cwd=empty, env=env, capture_output=True, text=True)
    directory = found.stdout.strip()
    if found.returncode or not directory:
        raise SystemExit(f"bench_trees: no qlint to import with PYTHONPATH={env.get('PYTHONPATH', '')}: {found.stderr}")
    subprocess.run([sys.executable, "-m", "compileall", "-q", directory], env=env, capture_output=True, check=True)
    return directory


Row = tuple[str, float, float, str, "float | None"]  # measure, value, target, unit, value of --against


def bench_tree(
    label: str, tree: str, pinned: str | None, runs: int, against: str | None, survey: int = SURVEY_SAMPLE
) -> list[Row]:
    ruff, python = _tool("ruff"), sys.executable
    qlint = [python, "-m", "qlint", "check", "--exit-zero", "--quiet"]
    cwd = tempfile.mkdtemp(prefix="qlint-bench-cwd-")  # neither tool picks up a config here
    scratch = [cwd]
    variants = _variants(against)
    caches = {v: tempfile.mkdtemp(prefix="qlint-bench-cache-") for v, _ in variants}
    ruff_cache = tempfile.mkdtemp(prefix="ruff-bench-cache-")
    scratch += [*caches.values(), ruff_cache]
    try:
        files = sum(1 for _, _, fs in os.walk(tree) for f in fs if f.endswith((".py", ".pyi")))
        print(f"== {label}: {tree} ({files} Python files), commit {_commit(tree, pinned)}")
        env = _env()
        commands: dict[str, Command] = {
            "ruff --select ALL --no-cache": (
                [ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", tree],
                env,
            ),
            "ruff --select E,F --no-cache": (
                [ruff, "check", "--select", "E,F", "--no-cache", "--exit-zero", "-q", tree],
                env,
            ),
            "ruff --select E,F warm": (
                [ruff, "check", "--select", "E,F", "--cache-dir", ruff_cache, "--exit-zero", "-q", tree],
                env,
            ),
        }
        for v, venv in variants:
            commands[f"qlint{v} cold (--no-cache)"] = ([*qlint, "--no-cache", tree], venv)
            commands[f"qlint{v} warm"] = ([*qlint, "--cache-dir", caches[v], tree], venv)
        for name, (cmd, cenv) in commands.items():
            if name.endswith("warm"):
                measure(cmd, cwd, env=cenv)  # fill the caches
        med = _median_runs(commands, cwd, runs)
        print(f"   medians of {runs} runs (peak memory: median, and the highest of the {runs})")
        print(f"   {'command':32} {'wall':>9} {'peak RSS':>18} {'peak PSS':>18}")
        for name, (t, rss, pss, rss_max, pss_max) in med.items():
            print(f"   {name:32} {t:7.2f} s {rss:6.1f} ({rss_max:5.1f}) MiB {pss:6.1f} ({pss_max:5.1f}) MiB")
        ruff_all, ruff_ef = med["ruff --select ALL --no-cache"], med["ruff --select E,F warm"]
        warm_target = WARM_TARGET.get(label, WARM_TARGET["default"])
        values: dict[str, dict[str, float]] = {}
        for v, _ in variants:
            cold, warm = med[f"qlint{v} cold (--no-cache)"], med[f"qlint{v} warm"]
            values[v] = {
                "cold qlint / ruff ALL": cold[0] / ruff_all[0],
                "warm qlint / warm ruff E,F": warm[0] / ruff_ef[0],
                "qlint peak PSS / ruff ALL peak PSS": max(cold[2], warm[2]) / ruff_all[2],
                "qlint peak RSS / ruff ALL peak RSS": max(cold[1], warm[1]) / ruff_all[1],
            }
        targets = {
            "cold qlint / ruff ALL": (COLD_TARGET, "x"),
            "warm qlint / warm ruff E,F": (warm_target, "x"),
            "qlint peak PSS / ruff ALL peak PSS": (1.0, "x"),
            "qlint peak RSS / ruff ALL peak RSS": (1.0, "x"),
        }
        with_findings = _files_with_findings(qlint, tree, cwd)
        if with_findings:
            one = with_findings[0]
            single_commands: dict[str, Command] = {
                "ruff check FILE": ([ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", one], env)
            }
            # The file as just edited: one statement typed into one of its function bodies
            # (`keystroke_edits`), checked as a buffer on standard input, whose own result is
            # never cached; what it reads of other modules is. The file's own text again would
            # let anything kept per function (or per statement) answer every body for free.
            buffer = os.path.join(cwd, "edited" + os.path.splitext(one)[1])
            with open(one, encoding="utf-8-sig") as fh, open(buffer, "w", encoding="utf-8") as out:
                out.write(keystroke_edits(fh.read(), 1)[0])
            for v, venv in variants:
                single_commands[f"qlint{v} check FILE (warm)"] = ([*qlint, "--cache-dir", caches[v], one], venv)
                edited = ["sh", "-c", 'exec "$@" < "$0"', buffer, *qlint, "--cache-dir", caches[v]]
                single_commands[f"qlint{v} check FILE (edited)"] = ([*edited, "--stdin-filename", one, "-"], venv)
            # The same buffer with QL001 alone: start-up, the command line and the parse, and no
            # rule runs: what the edited row costs before any analysis, which nothing kept between
            # runs answers (ao's 4,307-line module: ~476 M instructions of the whole check's
            # ~1,360 M, of which the parse ~204 M and Python's start-up here ~145 M).
            parse_only = ["sh", "-c", 'exec "$@" < "$0"', buffer, *qlint, "--cache-dir", caches[""]]
            parse_only += ["--select", "QL001", "--stdin-filename", one, "-"]
            single_commands["qlint FILE (edited, parse only)"] = (parse_only, env)
            single = _median_runs(single_commands, cwd, max(runs, 5))
            lines = _line_count(one)
            print(f"   largest module with findings: {os.path.relpath(one, tree)} ({lines} lines)")
            for name, (seconds, *_) in single.items():
                print(f"   {name:32} {seconds:7.3f} s")
            in_process = f"in-process check, {lines} lines (ms)"
            targets["one file (warm) (s)"] = (ONE_FILE_SECONDS, " s")
            targets["one file (edited) (s)"] = (ONE_FILE_SECONDS, " s")
            targets[in_process] = (IN_PROCESS_MS * max(lines, 2000) / 2000, " ms")
            for v, venv in variants:
                values[v]["one file (warm) (s)"] = single[f"qlint{v} check FILE (warm)"][0]
                values[v]["one file (edited) (s)"] = single[f"qlint{v} check FILE (edited)"][0]
                out = subprocess.run(
                    [python, "-c", _IN_PROCESS, one, "20", os.path.dirname(os.path.abspath(__file__))],
                    capture_output=True,
                    text=True,
                    env=venv,
                    cwd=cwd,
                    check=True,
                ).stdout.split()
                values[v][in_process] = float(out[0])
        if survey > 0:
            sides = {v: (caches[v], venv) for v, venv in variants}
            for name, per_variant in survey_edited(tree, survey, sides, cwd, runs).items():
                targets[name] = (ONE_FILE_SECONDS, " s")
                for v in per_variant:
                    values[v][name] = per_variant[v]
        rows: list[Row] = []
        for name, (target, unit) in targets.items():
            other = values["@against"][name] if "@against" in values else None
            rows.append((f"{label}: {name}", values[""][name], target, unit, other))
        return rows
    finally:
        for path in scratch:
            shutil.rmtree(path, ignore_errors=True)


def survey_edited(
    tree: str, n: int, sides: dict[str, tuple[str, dict[str, str]]], cwd: str, runs: int = 1
) -> dict[str, dict[str, float]]:
    """The edited one-file check over `sample(admitted(tree), n)`, `runs` times per file and
    side (sides: variant -> (its warm cache, its environment)), a file's figure the median of
    its runs; prints the spread of each side and returns {row name: {variant: p90 wall
    seconds}}, nothing when no file is admitted."""
    found = admitted(tree)
    paths = sample(found, n)
    if not paths:
        print("   edited one-file survey: no file admitted by a QL1xx/QL2xx prefilter")
        return {}
    per_file: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for path, side, _, used, seconds in edited_checks(paths, sides, cwd, runs):
        per_file.setdefault((side, path), []).append((seconds, used))
    wall: dict[str, list[tuple[float, str]]] = {side: [] for side in sides}
    cpu: dict[str, list[float]] = {side: [] for side in sides}
    for (side, path), figures in per_file.items():
        wall[side].append((statistics.median(w for w, _ in figures), path))
        cpu[side].append(statistics.median(c for _, c in figures))
    chosen = "all of them" if len(paths) == len(found) else f"the {n} largest and {n} drawn, seed 13"
    print(
        f"   edited one-file check of {len(paths)} of {len(found)} files a QL1xx/QL2xx prefilter admits"
        f" ({chosen}), median of {runs} run{'s' if runs > 1 else ''} per file"
    )
    for side in sides:
        median, p90, most, over = spread([w for w, _ in wall[side]])
        c_median, c_p90, c_most, _ = spread(cpu[side])
        print(
            f"   qlint{side:9} wall median {median:.3f} s  p90 {p90:.3f} s  max {most:.3f} s  "
            f"over {ONE_FILE_SECONDS} s: {over}   (CPU {c_median:.3f} / {c_p90:.3f} / {c_most:.3f} s)"
        )
        for seconds, path in sorted(wall[side], reverse=True)[: min(over, 5)]:
            print(f"      {seconds:.3f} s  {os.path.relpath(path, tree)}")
    name = f"one file (edited), p90 of {len(paths)} files"
    return {name: {side: spread([w for w, _ in wall[side]])[1] for side in sides}}


_CONFIGS = ("pyproject.toml", "ruff.toml", ".ruff.toml", "setup.cfg", "qlint.toml")
_MATERIALISED = ".bench-commit"  # written beside a materialised tree's sources, read by `_commit`


def materialise(git_dir: str, commit: str, dest: str) -> str:
    """Write `commit`'s Python sources and lint configs from a clone or bare mirror into
    `dest`. Blob by blob through `git cat-file --batch`, because `git archive` stops at the
    first blob a partial mirror lacks (large model weights), none of which a linter reads."""
    git = ["git", "--git-dir", git_dir] if os.path.isdir(os.path.join(git_dir, "objects")) else ["git", "-C", git_dir]
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", commit], capture_output=True, check=True).stdout
    wanted = []
    for record in filter(None, listing.split(b"\0")):
        meta, path = record.split(b"\t", 1)
        mode, kind, sha = meta.split()
        name = path.decode("utf-8", "surrogateescape")
        if (
            kind == b"blob"
            and mode != b"120000"
            and (name.endswith((".py", ".pyi", ".ipynb")) or os.path.basename(name) in _CONFIGS)
        ):
            wanted.append((sha, name))
    with subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        for sha, name in wanted:
            proc.stdin.write(sha + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if header[-1] == b"missing":
                continue
            data = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)
            target = os.path.join(dest, name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as fh:
                fh.write(data)
        proc.stdin.close()
    with open(os.path.join(dest, _MATERIALISED), "w") as fh:
        fh.write(f"{commit} (materialised from {git_dir})\n")
    return dest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--executorch", help=f"a pytorch/executorch tree at {EXECUTORCH_COMMIT}")
    parser.add_argument("--ao", help=f"a pytorch/ao tree at {AO_COMMIT}")
    parser.add_argument("--executorch-git", help="a clone or bare mirror of pytorch/executorch (pinned commit used)")
    parser.add_argument("--ao-git", help="a clone or bare mirror of pytorch/ao (pinned commit used)")
    parser.add_argument("--torch", default=None, help="a torch package tree (default: the installed one)")
    parser.add_argument("--no-torch", action="store_true", help="skip the installed torch package")
    parser.add_argument("--runs", type=int, default=3, help="runs per command; medians are reported")
    parser.add_argument(
        "--survey",
        type=int,
        default=SURVEY_SAMPLE,
        metavar="N",
        help=f"edited one-file check of the N largest admitted files and N drawn (default {SURVEY_SAMPLE}; 0: off)",
    )
    parser.add_argument(
        "--against",
        metavar="SRC",
        help="another qlint source tree (e.g. `git archive main | tar -x -C SRC`), measured in the same "
        "interleaved runs with PYTHONPATH=SRC: before and after figures under the same load",
    )
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="qlint-bench-trees-")
    try:
        for name, commit in (("executorch", EXECUTORCH_COMMIT), ("ao", AO_COMMIT)):
            git_dir = getattr(args, f"{name}_git")
            if git_dir and not getattr(args, name):
                setattr(args, name, materialise(git_dir, commit, os.path.join(scratch, name)))
        return _run(args, parser)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    trees = [
        ("executorch", args.executorch, EXECUTORCH_COMMIT),
        ("ao", args.ao, AO_COMMIT),
        ("torch", None if args.no_torch else (args.torch or default_tree()), None),
    ]
    if not any(t for _, t, _ in trees):
        parser.error("no tree to measure")
    print(
        f"{os.cpu_count()} cores; medians of {args.runs} runs (peak memory too, the highest beside it); "
        "ratios are of commands run side by side"
    )
    floor = _median_runs({"python -c pass": ([sys.executable, "-c", "pass"], _env())}, os.getcwd(), max(args.runs, 5))
    print(f"Python start-up on this machine now (the floor of any `qlint` run): {floor['python -c pass'][0]:.3f} s\n")
    rows = []
    for label, tree, pinned in trees:
        if tree:
            rows += bench_tree(label, os.path.abspath(tree), pinned, args.runs, args.against, args.survey)
            print()
    against = f"{'--against':>11} " if args.against else ""
    print(f"{'measure':52} {'value':>11} {against}target")
    for name, value, target, unit, other in rows:
        verdict = "ok" if value <= target else "MISSED"
        before = f"{other:8.2f}{unit:<3} " if other is not None else ""
        print(f"{name:52} {value:8.2f}{unit:<3} {before}≤ {target:g}{unit.strip() or 'x'}  {verdict}")
    return 0 if all(value <= target for _, value, target, _, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

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
counts), then the instructions glibc's allocator ran in the parent and in the children. With
`--against`, the merged ratio (`this / against`), then the parent's and the children's each,
each difference split into the engine's and glibc malloc's part (both in % of the other
checkout's count for that role, so the two add up to the difference). A forked child starts on
its parent's heap: where glibc's `malloc`/`free` find room there moves with what the parent
allocated before the fork, and so does the child's count (stop 64: the wrapper index's child
moved by ~1% on ao, +10 M, from imports that only moved in the parent). malloc's part is the
self cost of glibc's allocator (its functions from the sources under glibc's `malloc/`, or by
name where the dump has no file: `malloc`, `_int_free`, `malloc_consolidate`, ...), read from
each dump's per-function costs. `--keep DIR` keeps the dumps there (for `callgrind_annotate`);
else they are removed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable

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


# glibc's allocator, by function name (a suffix `.constprop.0`, `'2` stripped), for a dump that
# names no source file for libc's functions (no debug info installed).
_MALLOC_NAMES = frozenset(
    {
        "malloc", "free", "calloc", "realloc", "cfree", "memalign", "posix_memalign", "aligned_alloc",
        "__libc_malloc", "__libc_free", "__libc_calloc", "__libc_realloc", "__libc_memalign",
        "_int_malloc", "_int_free", "_int_realloc", "_int_memalign", "_int_free_merge_chunk",
        "_int_free_create_chunk", "_int_free_maybe_consolidate", "malloc_consolidate", "sysmalloc",
        "sysmalloc_mmap", "sysmalloc_mmap_fallback", "systrim", "unlink_chunk", "munmap_chunk",
        "mremap_chunk", "tcache_init", "tcache_get", "tcache_put", "tcache_thread_shutdown",
        "alloc_perturb", "ptmalloc_init", "arena_get2", "arena_get_retry", "get_free_list",
        "reused_arena", "_int_new_arena", "new_heap", "alloc_new_heap", "shrink_heap", "heap_trim",
        "malloc_trim", "mtrim", "int_mallinfo", "__malloc_arena_thread_freeres",
    }
)  # fmt: skip
_SPEC = re.compile(r"^\((\d+)\)(?: (.*))?$")


def _libc(obj: str) -> bool:
    base = os.path.basename(obj)
    return base.startswith(("libc.so", "libc-"))


def _allocator(obj: str, path: str, name: str) -> bool:
    """A function of glibc's allocator: in libc, from a source under glibc's `malloc/`
    (`malloc.c`, `arena.c`), or of one of its names where the dump knows no file."""
    if not _libc(obj):
        return False
    if path not in ("", "???"):
        return "/malloc/" in path or path.startswith("malloc/")
    return name.split("'")[0].split(".")[0] in _MALLOC_NAMES


def malloc_instructions(lines: Iterable[bytes]) -> int:
    """The instructions glibc's allocator ran in one callgrind dump (its lines, read as they
    come: a parent's dump of ExecuTorch is large): the self cost of its
    functions (`_allocator`), the first event (`Ir`) of each cost line, leaving out the lines
    that give a call's inclusive cost (after `calls=`). Names may be compressed (`fn=(12) free`
    once, `fn=(12)` after; a `cfn=`/`cfi=`/`cob=` may give the name first)."""
    names: dict[str, dict[str, str]] = {"fn": {}, "fl": {}, "ob": {}}
    space = {"fn": "fn", "cfn": "fn", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl"}
    space |= {"ob": "ob", "cob": "ob"}
    positions = 1
    obj = path = ""
    counted = skip_next = False
    total = 0
    for raw in lines:
        first = raw[:1]
        if first in b"\n#":
            continue
        if first.isdigit() or first in b"+-*":
            if skip_next:
                skip_next = False
            elif counted:
                fields = raw.split()
                if len(fields) > positions:
                    total += int(fields[positions])
            continue
        line = raw.decode("utf-8", "replace")
        field, eq, spec = line.partition("=")
        if not eq:
            if line.startswith("positions:"):
                positions = len(line.split()) - 1
            continue
        if field == "calls":
            skip_next = True
            continue
        kind = space.get(field)
        if kind is None:
            continue
        m = _SPEC.match(spec)
        if m is not None:
            if m.group(2) is not None:
                names[kind][m.group(1)] = m.group(2)
            value = names[kind].get(m.group(1), "")
        else:
            value = spec
        if field == "ob":
            obj = value
        elif field == "fl":
            path = value
        elif field == "fn":
            counted = _allocator(obj, path, value)
    return total


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


def _report(label: str, checkout: str, rows: list[tuple[str, int, int]], out_dir: str) -> dict[str, tuple[int, int]]:
    """Print one checkout's processes; (instructions, glibc malloc's) of its parent and of its
    children together."""
    total = sum(n for _, _, n in rows)
    print(f"{label} ({checkout}): {total / 1e6:,.1f} M instructions in {len(rows)} processes")
    for role, pid, n in rows:
        print(f"   {n / 1e6:12,.1f} M  {role} {pid}")
    roles = {"parent": [0, 0], "children": [0, 0]}
    for role, pid, n in rows:
        with open(os.path.join(out_dir, f"cg.{label}.{pid}.out"), "rb") as fh:
            malloc = malloc_instructions(fh)
        kept = roles["parent" if role == "parent" else "children"]
        kept[0] += n
        kept[1] += malloc
    parent, children = roles["parent"][1], roles["children"][1]
    print(f"   glibc malloc: {parent / 1e6:,.1f} M in the parent, {children / 1e6:,.1f} M in the children")
    return {role: (n, malloc) for role, (n, malloc) in roles.items()}


def split(this: tuple[int, int], against: tuple[int, int]) -> str:
    """`this / against` of one role's (instructions, glibc malloc's), and its difference as the
    engine's part and malloc's, in % of `against`'s instructions."""
    (n, malloc), (m, other) = this, against
    if not m:
        return "nothing to compare"
    engine = ((n - malloc) - (m - other)) / m * 100
    noise = (malloc - other) / m * 100
    return f"{n / m:.3f}x (engine {engine:+.2f}%, glibc malloc {noise:+.2f}%)"


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
        roles = {
            label: _report(label, checkouts[label], counts(out_dir, label, parents[label]), out_dir)
            for label in checkouts
        }
        totals = {label: tuple(map(sum, zip(*kept.values(), strict=True))) for label, kept in roles.items()}
        if totals.get("against", (0,))[0]:
            print(f"this / against: {totals['this'][0] / totals['against'][0]:.3f}x")
            print(f"merged: {split(totals['this'], totals['against'])}")
            for role in ("parent", "children"):
                print(f"{role}: {split(roles['this'][role], roles['against'][role])}")
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(out_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

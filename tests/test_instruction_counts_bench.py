"""benchmarks/instruction_counts.py counts each process of a run once: a child's counters start
at its fork, and the run's count is the sum over its processes."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path


def _bench():
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "instruction_counts.py"
    spec = importlib.util.spec_from_file_location("instruction_counts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _dump(total: int) -> bytes:
    head = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\n"
    return f"{head}fn=main\n0 {total}\nsummary: {total}\ntotals: {total}\n".encode()


def test_children_are_counted_from_their_fork(tmp_path):
    bench = _bench()
    cmd = bench.command(str(tmp_path), "this", "tree", 1, ["--select", "QL101"])
    # Without it a child's dump repeats all that its parent ran before the fork.
    assert "--zero-before=PyOS_AfterFork_Child" in cmd
    assert cmd[cmd.index("check") :] == [
        "check",
        "--no-cache",
        "-q",
        "--exit-zero",
        "-j1",
        "--select",
        "QL101",
        os.path.abspath("tree"),
    ]
    assert f"--callgrind-out-file={tmp_path}/cg.this.%p.out" in cmd


def test_the_parent_first_then_its_children_and_unfinished_dumps_left_out(tmp_path):
    bench = _bench()
    (tmp_path / "cg.this.100.out").write_bytes(_dump(9_000))
    (tmp_path / "cg.this.101.out").write_bytes(_dump(1_000))
    (tmp_path / "cg.this.102.out").write_bytes(_dump(3_000))
    (tmp_path / "cg.this.103.out").write_bytes(b"")  # killed before it dumped
    (tmp_path / "cg.against.200.out").write_bytes(_dump(5))  # another run's
    rows = bench.counts(str(tmp_path), "this", 100)
    assert rows == [("parent", 100, 9_000), ("child", 102, 3_000), ("child", 101, 1_000)]
    assert bench.dump_total(b"summary: 12\n") == 12 and bench.dump_total(b"totals: 7\n") == 7
    assert bench.dump_total(b"events: Ir\n") is None


def _stubbed(bench, monkeypatch, tmp_path, fake_run):
    """The bench with `fake_run` for valgrind's runs and nothing else to start: the other
    checkout it compares against (an empty directory)."""
    monkeypatch.setattr(bench, "_run", fake_run)
    monkeypatch.setattr(bench, "byte_compile", lambda checkout: None)
    monkeypatch.setattr(bench.shutil, "which", lambda name: "/usr/bin/" + name)
    other = tmp_path / "other"
    other.mkdir()
    return other


def test_a_run_sums_its_processes_and_compares_the_checkouts(tmp_path, monkeypatch, capsys):
    bench = _bench()
    keep = tmp_path / "dumps"
    ran = {}

    def fake_run(commands, cwd):
        for label, (cmd, env) in commands.items():
            ran[label] = (cmd, env["PYTHONPATH"], env.get("PYTHONHASHSEED"))
            out = next(a for a in cmd if a.startswith("--callgrind-out-file=")).partition("=")[2]
            parent, child = (10, 11) if label == "this" else (20, 21)
            Path(out.replace("%p", str(parent))).write_bytes(_dump(300 if label == "this" else 200))
            Path(out.replace("%p", str(child))).write_bytes(_dump(100))
        return {"this": 10, "against": 20}

    other = _stubbed(bench, monkeypatch, tmp_path, fake_run)
    assert bench.main([str(tmp_path), "--against", str(other), "--keep", str(keep), "--", "--select", "QL101"]) == 0
    out = capsys.readouterr().out
    assert ran["against"][1] == str(other) and ran["this"][1] == str(Path(bench.__file__).resolve().parent.parent)
    assert "--select" in ran["this"][0] and "--select" in ran["against"][0]
    assert ran["this"][2] == ran["against"][2] == "0"  # one seed: counts repeat run after run
    assert "this (" in out and ": 0.0 M instructions in 2 processes" in out  # 400 instructions
    assert "this / against: 1.333x" in out
    assert sorted(os.listdir(keep)) == ["cg.against.20.out", "cg.against.21.out", "cg.this.10.out", "cg.this.11.out"]


def test_cached_runs_keep_their_cache_each_in_an_empty_directory_of_its_own(tmp_path, monkeypatch):
    """`--cached`: a user's first run, which writes the cache later runs read (and pays for it),
    not `--no-cache`."""
    bench = _bench()
    ran = {}

    def fake_run(commands, cwd):
        for label, (cmd, _) in commands.items():
            cache = cmd[cmd.index("--cache-dir") + 1]
            ran[label] = (cmd, os.path.exists(cache), os.path.dirname(cache) == cwd)
        return {"this": 10, "against": 20}

    other = _stubbed(bench, monkeypatch, tmp_path, fake_run)
    assert bench.main([str(tmp_path), "--against", str(other), "--cached"]) == 0
    caches = []
    for cmd, existed, in_cwd in ran.values():
        assert "--no-cache" not in cmd
        assert not existed and in_cwd  # made empty by the run itself, removed with the run's directory
        caches.append(cmd[cmd.index("--cache-dir") + 1])
    assert len(set(caches)) == 2


# A dump as callgrind writes one (`--compress-strings`): a name given once as `(id) name`, then
# `(id)` alone, possibly first by a call (`cfn=`); `calls=` followed by the call's inclusive cost.
_MALLOC_DUMP = b"""# callgrind format
version: 1
positions: line
events: Ir
summary: 1000

ob=(1) /root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0
fl=(1) Objects/obmalloc.c
fn=(1) PyObject_Malloc
10 100
cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
cfi=(2) ./malloc/./malloc/malloc.c
cfn=(2) malloc
calls=3 20
11 70
+2 5

ob=(2)
fl=(2)
fn=(2)
20 40
fi=(3) ./malloc/./malloc/arena.c
300 6
fe=(2)
+1 4
cfn=(3) _int_malloc
calls=2 40
21 20

fn=(3)
40 20

ob=(1)
fl=(1)
fn=(4) free
50 7

ob=(2)
fl=(4) ???
fn=(5) _int_free.constprop.0
60 9
fn=(6) memcpy
70 11
fl=(5) ./string/memmove.S
fn=(7) __memmove_avx_unaligned
80 13
"""


def test_glibc_malloc_is_its_functions_own_cost_in_libc():
    bench = _bench()
    # malloc's own 40 + 6 (inlined from arena.c) + 4, not the 20 its call of _int_malloc costs
    # (counted as _int_malloc's own); _int_malloc 20; _int_free 9 (no file: by name). Not
    # libpython's `free` (another library), nor PyObject_Malloc's line calling malloc.
    assert bench.malloc_instructions(_MALLOC_DUMP.splitlines(keepends=True)) == 40 + 6 + 4 + 20 + 9
    assert bench.malloc_instructions([b"events: Ir\n", b"fn=main\n", b"0 5\n"]) == 0


def test_the_difference_split_into_the_engine_and_glibc_malloc(tmp_path, monkeypatch, capsys):
    """The parent and the forked children each compared, their differences split into the
    engine's and malloc's (stop 64: the index child moved ~1% with the parent's heap alone)."""
    bench = _bench()

    def dump(total: int, malloc: int) -> bytes:
        return (
            f"events: Ir\nob=(1) /usr/lib/libc.so.6\nfl=(1) malloc/malloc.c\nfn=(1) _int_malloc\n0 {malloc}\n"
            f"ob=(2) /usr/bin/python\nfl=(2) ???\nfn=(2) main\n0 {total - malloc}\nsummary: {total}\n"
        ).encode()

    def fake_run(commands, cwd):
        sizes = {"this": ((10_000, 500), (2_020, 120)), "against": ((10_100, 500), (2_000, 100))}
        for label, (cmd, _) in commands.items():
            out = next(a for a in cmd if a.startswith("--callgrind-out-file=")).partition("=")[2]
            for pid, (total, malloc) in zip((10, 11), sizes[label], strict=True):
                Path(out.replace("%p", str(pid))).write_bytes(dump(total, malloc))
        return {"this": 10, "against": 10}

    other = _stubbed(bench, monkeypatch, tmp_path, fake_run)
    assert bench.main([str(tmp_path), "--against", str(other)]) == 0
    out = capsys.readouterr().out.splitlines()
    # The lines read before stay as they were.
    assert "   glibc malloc: 0.0 M in the parent, 0.0 M in the children" in out
    assert "            0.0 M  parent 10" in out and "this / against: 0.993x" in out
    # 12,020 / 12,100; engine (11,400 - 11,500) / 12,100, malloc (620 - 600) / 12,100.
    assert "merged: 0.993x (engine -0.83%, glibc malloc +0.17%)" in out
    assert "parent: 0.990x (engine -0.99%, glibc malloc +0.00%)" in out
    # The child's count grew by 1%, all of it malloc's.
    assert "children: 1.010x (engine +0.00%, glibc malloc +1.00%)" in out

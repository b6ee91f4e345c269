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

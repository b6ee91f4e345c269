"""benchmarks/bench_trees.py judges issue 13's one-file target on more than its one file: the
edited check of a fixed sample of the files a QL1xx/QL2xx prefilter admits, its spread
printed and its p90 a row of the summary table; `--survey 0` leaves it out."""

from __future__ import annotations

import os
import sys

from tests.conftest import old_package
from tests.snippets import SEQUENTIAL_CAPTURE as _CAPTURE
from tests.test_bench_trees_bytecode import _ROOT, _bench


def _quick(bench, monkeypatch):
    """Everything but the survey answered at once: the whole-tree and single-file commands
    (measured by other tests and by hand) are not what these tests are about."""
    monkeypatch.setattr(bench, "_median_runs", lambda commands, cwd, runs: dict.fromkeys(commands, (0.1, 1, 1, 1, 1)))
    monkeypatch.setattr(bench, "measure", lambda *args, **kwargs: None)
    monkeypatch.setattr(bench, "_files_with_findings", lambda *args: [])


def _tree(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").mkdir()
    pkg = old_package(tree, capture=_CAPTURE, plain="def f(x):\n    return x\n")
    return tree, pkg


def test_the_survey_checks_the_admitted_files_and_its_p90_is_a_row(tmp_path, monkeypatch, capsys):
    tree, _ = _tree(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(_ROOT))
    bench = _bench()
    _quick(bench, monkeypatch)
    argv = ["bench_trees.py", "--ao", str(tree), "--no-torch", "--runs", "1", "--survey", "1"]
    monkeypatch.setattr(sys, "argv", argv)
    bench.main()
    out = capsys.readouterr().out
    # `plain` holds no trigger: one file of the tree is admitted and checked, edited.
    assert "check of 1 of 1 files a QL1xx/QL2xx prefilter admits (all of them), median of 1 run per file" in out
    assert "   qlint          wall median " in out
    row = next(line for line in out.splitlines() if line.startswith("ao: one file (edited), p90 of 1 files"))
    assert row.endswith(("ok", "MISSED")) and "≤ 0.15s" in row


def test_survey_zero_leaves_it_out(tmp_path, monkeypatch, capsys):
    tree, _ = _tree(tmp_path)
    bench = _bench()
    _quick(bench, monkeypatch)

    def not_asked(tree):
        raise AssertionError("the survey ran")

    monkeypatch.setattr(bench, "admitted", not_asked)
    argv = ["bench_trees.py", "--ao", str(tree), "--no-torch", "--runs", "1", "--survey", "0"]
    monkeypatch.setattr(sys, "argv", argv)
    bench.main()
    out = capsys.readouterr().out
    assert "ao: cold qlint / ruff ALL" in out  # the existing rows are kept
    assert "p90 of" not in out and "edited one-file check of" not in out


def test_the_spread_is_the_median_the_nearest_rank_p90_and_the_max(tmp_path, monkeypatch, capsys):
    walls = [0.40, 0.05, 0.06, 0.20, 0.07, 0.08, 0.09, 0.10, 0.12, 0.16]
    paths = [str(tmp_path / f"m{i}.py") for i in range(len(walls))]
    bench = _bench()
    monkeypatch.setattr(bench, "admitted", lambda tree: paths)

    def checks(chosen, sides, cwd, runs):
        assert chosen == sorted(paths) and runs == 3  # 10 files, no more than twice 5: all of them
        for path, wall in zip(paths, walls, strict=True):
            for run in range(runs):
                for side in sides:  # the second run of every file stalls: each file's median is untouched
                    yield path, side, run, wall, 5.0 if run == 1 else wall

    monkeypatch.setattr(bench, "edited_checks", checks)
    rows = bench.survey_edited(str(tmp_path), 5, {"": ("cache", {})}, str(tmp_path), 3)
    assert rows == {"one file (edited), p90 of 10 files": {"": 0.20}}  # the 9th of 10, not the max
    out = capsys.readouterr().out
    assert "median of 3 runs per file" in out
    assert "wall median 0.095 s  p90 0.200 s  max 0.400 s  over 0.15 s: 3" in out
    assert "(CPU 0.095 / 0.200 / 0.400 s)" in out
    slow = [line.split()[-1] for line in out.splitlines() if line.startswith("      ")]
    assert slow == ["m0.py", "m3.py", "m9.py"]  # the files over the target, slowest first


def test_the_sample_is_the_largest_and_a_seeded_draw(tmp_path):
    bench = _bench()
    paths = []
    for i in range(12):
        path = tmp_path / f"m{i:02}.py"
        path.write_text("x" * (i + 1))
        paths.append(str(path))
    chosen = bench.sample(paths, 3)
    assert len(chosen) == 6 and chosen == sorted(chosen)
    assert set(paths[-3:]) <= set(chosen)  # the three largest
    assert chosen == bench.sample(list(reversed(paths)), 3)  # the same draw whatever the order
    assert bench.sample(paths[:6], 3) == paths[:6]  # no more than 2n: all of them
    assert {os.path.basename(p) for p in bench.sample(paths, 0)} == set()

"""Adopting qlint in a repository that has findings: `--add-noqa` and baselines."""

from __future__ import annotations

import json
import subprocess

import pytest

from qlint.add_noqa import add_noqa_to_text, directive_for
from qlint.diagnostic import Diagnostic, Range
from tests.rollout_support import BUGGY, CAPTURE, make_repo, qlint


def diag(code: str, row: int, noqa_row: int | None = None) -> Diagnostic:
    return Diagnostic(code, "x", "m", "f.py", Range.of(row, 0, row, 1), noqa_row=noqa_row)


@pytest.mark.parametrize(
    ("comment", "expected"),
    [
        ("# noqa: F401", "# noqa: F401, QL101"),
        ("# noqa:F401,E501  why", "# noqa: F401, E501, QL101  why"),
        ("# NOQA: QL101", None),
        ("# noqa", None),  # already silences everything
        ("# type: ignore", "# type: ignore  # noqa: QL101"),
        ("# noqa:", None),  # read as a bare noqa by qlint.suppressions
    ],
)
def test_directive_merging(comment, expected):
    assert directive_for(comment, ["QL101"]) == expected


def test_noqa_goes_on_the_rows_qlint_reads_and_never_into_a_string():
    text = (
        "x = f(\n"  # 1
        "    a,\n"  # 2
        ")  # keep me\n"  # 3
        's = """\n'  # 4
        "inside\n"  # 5
        '"""\n'  # 6
        "y = 1 + \\\n"  # 7
        "    2\n"  # 8
        "z = 3\r\n"  # 9
    )
    diags = [diag("QL101", 1, noqa_row=3), diag("QL201", 1, noqa_row=3), diag("QL101", 4), diag("QL101", 7)]
    diags += [diag("QL401", 9), diag("QL001", 9)]
    new, added, unplaced = add_noqa_to_text(text, diags)
    lines = new.split("\n")
    assert lines[2] == ")  # keep me  # noqa: QL101, QL201"
    assert lines[0] == "x = f(" and lines[4] == "inside"
    assert lines[8] == "z = 3  # noqa: QL401\r"  # CRLF kept; syntax errors never get a noqa
    assert added == 2 and unplaced == [(4, "QL101"), (7, "QL101")]
    assert add_noqa_to_text(new, diags[:2])[1] == 0


@pytest.fixture
def repo(tmp_path):
    merged = BUGGY.replace("aten.relu\n", "aten.relu  # noqa: E501\n")
    multi = "import torch\n\n\ndef f(n):\n    return (\n        n.target\n        == torch.ops.aten.relu\n    )\n"
    return make_repo(tmp_path / "r", {"a.py": BUGGY, "b.py": merged, "c.py": CAPTURE, "d.py": multi})


def test_add_noqa_silences_every_finding_and_is_idempotent(repo):
    run = qlint(repo, "check", "--no-cache", "--add-noqa", ".")
    assert run.returncode == 0, run.stderr
    assert "Added 4 noqa directives." in run.stderr
    assert (repo / "a.py").read_text().endswith("aten.relu  # noqa: QL101\n")
    assert (repo / "b.py").read_text().endswith("aten.relu  # noqa: E501, QL101\n")
    assert "import prepare_pt2e  # noqa: QL401\n" in (repo / "c.py").read_text()
    after = qlint(repo, "check", "--no-cache", ".")
    assert after.returncode == 0, after.stdout
    before = {p.name: p.read_bytes() for p in repo.glob("*.py")}
    again = qlint(repo, "check", "--no-cache", "--add-noqa", ".")
    assert "Added 0 noqa directives." in again.stderr
    assert {p.name: p.read_bytes() for p in repo.glob("*.py")} == before


def test_baseline_reports_only_new_findings(repo):
    baseline = repo / "qlint-baseline.json"
    wrote = qlint(repo, "check", "--no-cache", "--write-baseline", str(baseline), ".")
    assert wrote.returncode == 0 and "Wrote a baseline of 4 findings in 4 files" in wrote.stderr
    entries = json.loads(baseline.read_text())["entries"]
    assert {"repository": "r", "path": "a.py", "code": "QL101", "source": "torch.ops.aten.relu", "count": 1} in entries
    assert (
        qlint(repo, "check", "--no-cache", "--output-format", "concise", "--baseline", str(baseline), ".").returncode
        == 0
    )
    # An unrelated edit above the finding moves its line: still recorded.
    (repo / "a.py").write_text("# header\n\n" + BUGGY)
    clean = qlint(repo, "check", "--no-cache", "--output-format", "concise", "--baseline", str(baseline), ".")
    assert clean.returncode == 0 and clean.stdout.strip() == "All checks passed!", clean.stdout
    # A second copy of the same bug in the same file is new.
    (repo / "a.py").write_text(BUGGY + "\n\ndef g(n):\n    return n.target == torch.ops.aten.relu\n")
    new = qlint(repo, "check", "--no-cache", "--output-format", "concise", "--baseline", str(baseline), ".")
    assert new.returncode == 1 and new.stdout.count("QL101") == 1, new.stdout
    # A fixed finding leaves a stale entry behind, reported so the baseline can shrink.
    (repo / "c.py").write_text(CAPTURE.replace("torch.ao.quantization", "torchao.quantization.pt2e"))
    stale = qlint(
        repo, "check", "--no-cache", "--output-format", "concise", "--baseline", str(baseline), "--repo-summary", "."
    )
    assert "c.py: QL401" in stale.stderr and "no longer found" in stale.stderr
    assert "baseline hid 3, 1 stale" in stale.stdout
    # Checking another file only says nothing about c.py's entry.
    part = qlint(repo, "check", "--no-cache", "--output-format", "concise", "--baseline", str(baseline), "b.py")
    assert "no longer found" not in part.stderr


def test_baseline_works_in_another_clone(repo, tmp_path):
    baseline = tmp_path / "base.json"
    qlint(repo, "check", "--no-cache", "--write-baseline", str(baseline), ".")
    clone = tmp_path / "elsewhere"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    assert (
        qlint(clone, "check", "--no-cache", "--output-format", "concise", "--baseline", str(baseline), ".").returncode
        == 0
    )


def test_bad_baseline_is_a_usage_error(repo):
    (repo / "bad.json").write_text("{}")
    run = qlint(repo, "check", "--no-cache", "--output-format", "concise", "--baseline", "bad.json", ".")
    assert run.returncode == 2 and "not a qlint baseline" in run.stderr


def test_a_baseline_over_several_repositories_keeps_them_apart(tmp_path):
    a = make_repo(tmp_path / "a", {"m.py": BUGGY})
    b = make_repo(tmp_path / "b", {"m.py": BUGGY})
    baseline = tmp_path / "base.json"
    assert qlint(tmp_path, "check", "--no-cache", "--write-baseline", str(baseline), "a", "b").returncode == 0
    assert {e["repository"] for e in json.loads(baseline.read_text())["entries"]} == {"a", "b"}
    (b / "m.py").write_text(BUGGY + "\n\ndef g(n):\n    return n.target == torch.ops.aten.relu\n")
    run = qlint(tmp_path, "check", "--no-cache", "--output-format", "concise", "--baseline", str(baseline), "a", "b")
    assert run.returncode == 1 and "b/m.py:9:24: QL101" in run.stdout and "a/m.py" not in run.stdout, run.stdout
    (a / "m.py").write_text("")
    fixed = qlint(tmp_path, "check", "--no-cache", "--output-format", "concise", "--baseline", str(baseline), "a")
    assert "qlint: baseline: a: m.py: QL101" in fixed.stderr and "b:" not in fixed.stderr

"""Output formats: text, json, json-lines, sarif, github, lintrunner."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.parse
from pathlib import Path

import pytest

from qlint.diagnostic import Applicability, Diagnostic, Edit, Fix, Range, RelatedInfo, RuntimeVerdict
from qlint.reporters import FORMATS, ReportOptions, render, rule_url
from qlint.reporters.text import diff_summary
from qlint.rules import RULES
from qlint.settings import Settings


def diag(
    code="QL101",
    row=2,
    col=4,
    end_col=9,
    applicability: Applicability | None = None,
    path="pkg/mod.py",
    message="packet compared with node targets",
    **kw,
) -> Diagnostic:
    r = Range.of(row, col, row, end_col)
    fix = None
    if applicability is not None:
        edits = () if applicability is Applicability.DISPLAY_ONLY else (Edit(r, "aten.relu.default"),)
        fix = Fix(applicability, "Use the overload", edits)
    name = RULES[code].name if code in RULES else "x"
    return Diagnostic(code, name, message, os.path.abspath(path), r, fix, noqa_row=row, **kw)


SAFE, UNSAFE, DISPLAY = Applicability.SAFE, Applicability.UNSAFE, Applicability.DISPLAY_ONLY


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


# ------------------------------------------------------------------ text


def test_text_lines_use_one_based_columns_and_fix_markers():
    out = render(
        "text",
        [diag(applicability=SAFE), diag(row=3, applicability=UNSAFE), diag(row=4, applicability=DISPLAY)],
        ReportOptions(),
    )
    lines = out.splitlines()
    assert lines[0] == "pkg/mod.py:2:5: QL101 [*] packet compared with node targets"
    assert lines[1] == "pkg/mod.py:3:5: QL101 packet compared with node targets"  # unsafe: hidden
    assert lines[2] == "pkg/mod.py:4:5: QL101 packet compared with node targets"  # display-only
    assert lines[3] == "Found 3 errors."
    assert lines[4] == "[*] 1 fixable with `qlint fix` (1 hidden fix can be enabled with the `--unsafe-fixes` option)."
    unsafe = render("text", [diag(row=3, applicability=UNSAFE)], ReportOptions(unsafe_fixes=True))
    assert "QL101 [*]" in unsafe
    assert unsafe.splitlines()[-1] == "[*] 1 fixable with `qlint fix --unsafe-fixes`."


def test_text_summaries():
    assert render("text", [], ReportOptions()) == "All checks passed!\n"
    one = render("text", [diag()], ReportOptions())
    assert one.splitlines()[-1] == "Found 1 error."
    hidden = render("text", [diag(applicability=UNSAFE), diag(row=5, applicability=UNSAFE)], ReportOptions())
    assert (
        hidden.splitlines()[-1]
        == "No fixes available (2 hidden fixes can be enabled with the `--unsafe-fixes` option)."
    )
    quiet = render("text", [diag()], ReportOptions(quiet=True))
    assert quiet == "pkg/mod.py:2:5: QL101 packet compared with node targets\n"
    fixed = render("text", [diag()], ReportOptions(mode="fix", fixed=2))
    assert fixed.splitlines()[-1] == "Found 3 errors (2 fixed, 1 remaining)."
    all_fixed = render("text", [], ReportOptions(mode="fix", fixed=2))
    assert all_fixed == "Found 2 errors (2 fixed, 0 remaining).\n"
    assert diff_summary(1, 0) == "Would fix 1 error."
    assert diff_summary(2, 1) == "Would fix 2 errors (1 additional fix available with `--unsafe-fixes`)."
    assert diff_summary(0, 0) == "No errors would be fixed."


def test_text_runtime_line():
    d = diag(runtime=RuntimeVerdict("confirmed", "no node matched", True, 0.44))
    lines = render("text", [d], ReportOptions(quiet=True)).splitlines()
    assert lines == [
        "pkg/mod.py:2:5: QL101 packet compared with node targets",
        "  runtime: confirmed — no node matched; fix verified (0.4s)",
    ]


def test_statistics_table():
    ds = [diag(applicability=SAFE), diag(row=3, applicability=SAFE), diag("QL102", row=4)] + [
        diag("QL001", row=r) for r in range(5, 15)
    ]
    lines = render("text", ds, ReportOptions(statistics=True)).splitlines()
    assert lines[:3] == [
        "10\tQL001\t[ ] syntax-error",
        " 2\tQL101\t[*] packet-matcher",
        " 1\tQL102\t[ ] packet-insertion",
    ]
    assert lines[3] == "Found 13 errors."


# ------------------------------------------------------------------ json


def test_json_is_ruff_shaped():
    d = diag(applicability=UNSAFE, related=(RelatedInfo("pkg/q.py", Range.of(1, 0, 1, 3), "defined here"),))
    [obj] = json.loads(render("json", [d, diag(row=7)], ReportOptions()))[:1]
    assert set(obj) == {
        "cell",
        "code",
        "end_location",
        "filename",
        "fix",
        "location",
        "message",
        "name",
        "noqa_row",
        "severity",
        "url",
        "related",
    }
    assert obj["code"] == "QL101" and obj["name"] == "packet-matcher"
    assert obj["filename"] == os.path.abspath("pkg/mod.py")
    assert obj["location"] == {"row": 2, "column": 5}
    assert obj["end_location"] == {"row": 2, "column": 10}
    assert obj["noqa_row"] == 2
    assert obj["url"] == rule_url("QL101") and obj["url"].startswith("file://")
    assert Path(urllib.parse.urlparse(obj["url"]).path).read_text().startswith("# QL101 packet-matcher")
    assert obj["fix"] == {
        "applicability": "unsafe",
        "message": "Use the overload",
        "edits": [
            {
                "content": "aten.relu.default",
                "location": {"row": 2, "column": 5},
                "end_location": {"row": 2, "column": 10},
            }
        ],
    }
    assert obj["related"] == [
        {
            "filename": os.path.abspath("pkg/q.py"),
            "location": {"row": 1, "column": 1},
            "end_location": {"row": 1, "column": 4},
            "message": "defined here",
        }
    ]
    second = json.loads(render("json", [diag(row=7)], ReportOptions()))[0]
    assert second["fix"] is None and "related" not in second and "runtime" not in second
    rt = json.loads(render("json", [diag(runtime=RuntimeVerdict("refuted", "e", None, 1.5))], ReportOptions()))
    assert rt[0]["runtime"] == {"verdict": "refuted", "evidence": "e", "fix_verified": None, "seconds": 1.5}
    assert json.loads(render("json", [], ReportOptions())) == []


def test_json_columns_count_code_points():
    d = diag(col=2, end_col=3, message="ünïcödé ✓")
    obj = json.loads(render("json", [d], ReportOptions()))[0]
    assert obj["message"] == "ünïcödé ✓" and obj["location"]["column"] == 3


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_json_has_every_key_ruff_emits(tmp_path):
    (tmp_path / "r.py").write_text("import os\n")
    proc = subprocess.run(
        ["ruff", "check", "--isolated", "--no-cache", "--select", "F401", "--output-format", "json", "r.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    theirs = json.loads(proc.stdout)[0]
    ours = json.loads(render("json", [diag(applicability=SAFE)], ReportOptions()))[0]
    assert set(theirs) <= set(ours), set(theirs) - set(ours)
    assert set(theirs["location"]) == set(ours["location"])
    assert set(theirs["fix"]) == set(ours["fix"])
    assert set(theirs["fix"]["edits"][0]) == set(ours["fix"]["edits"][0])
    assert theirs["location"]["column"] == 8  # both 1-based: `os` starts at index 7


def test_json_lines_matches_json():
    ds = [diag(applicability=SAFE), diag(row=9)]
    lines = render("json-lines", ds, ReportOptions()).splitlines()
    assert [json.loads(line) for line in lines] == json.loads(render("json", ds, ReportOptions()))


# ------------------------------------------------------------------ sarif


def test_sarif_structure():
    ds = [
        diag(applicability=SAFE, related=(RelatedInfo("pkg/q.py", Range.of(1, 0, 1, 3), "here"),)),
        diag("QL001", row=1, col=0, end_col=0),
        diag(row=5, applicability=DISPLAY, runtime=RuntimeVerdict("confirmed", "x", None, 0.1)),
    ]
    doc = json.loads(render("sarif", ds, ReportOptions()))
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    [run] = doc["runs"]
    assert run["columnKind"] == "unicodeCodePoints"
    driver = run["tool"]["driver"]
    assert driver["name"] == "qlint"
    rules = driver["rules"]
    assert [r["id"] for r in rules] == sorted(RULES)
    assert all(r["helpUri"] == rule_url(r["id"]) and r["shortDescription"]["text"] for r in rules)
    first, second, third = run["results"]
    assert rules[first["ruleIndex"]]["id"] == "QL101" and rules[second["ruleIndex"]]["id"] == "QL001"
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == Path(os.path.abspath("pkg/mod.py")).as_uri()
    assert loc["region"] == {"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 10}
    [fix] = first["fixes"]
    [change] = fix["artifactChanges"]
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 2, "startColumn": 5, "endLine": 2, "endColumn": 10},
            "insertedContent": {"text": "aten.relu.default"},
        }
    ]
    assert first["relatedLocations"][0]["message"]["text"] == "here"
    assert "fixes" not in second and "fixes" not in third  # display-only has no edits
    assert third["properties"]["runtime"]["verdict"] == "confirmed"
    assert all(r["level"] in ("error", "warning", "note") and r["message"]["text"] for r in run["results"])


# ------------------------------------------------------------------ github


def test_github_annotations_are_escaped():
    d = diag(path="dir,x/a:b.py", message="100% bad\nsecond line")
    line = render("github", [d], ReportOptions()).rstrip("\n")
    assert line == (
        "::warning title=qlint (QL101),file=dir%2Cx/a%3Ab.py,line=2,col=5,endLine=2,endColumn=10"
        "::QL101 100%25 bad%0Asecond line"
    )


# ------------------------------------------------------------------ lintrunner


def test_lintrunner_messages_carry_one_whole_file_patch(tmp_path):
    src = "x = 1  # noqa: QL101\ny = 2  # noqa: QL102\nz = 3\n"
    (tmp_path / "m.py").write_text(src)
    settings = Settings(root=tmp_path)
    from qlint.engine import check_source

    result = check_source(src.encode(), str(tmp_path / "m.py"), settings)
    assert [d.code for d in result.diagnostics] == ["QL002", "QL002"]
    syntax = diag("QL001", path="other.py", row=1, col=0, end_col=0)
    out = render("lintrunner", [*result.diagnostics, syntax], ReportOptions(settings=settings))
    msgs = [json.loads(line) for line in out.splitlines()]
    assert [set(m) for m in msgs] == [
        {"path", "line", "char", "code", "severity", "name", "original", "replacement", "description"}
    ] * 3
    first, second, third = msgs
    assert first["path"] == "m.py" and first["line"] == 1 and first["char"] == 6
    assert first["code"] == "QLINT" and first["name"] == "QL002" and first["severity"] == "warning"
    assert first["original"] == src
    assert first["replacement"] == "x = 1\ny = 2\nz = 3\n"
    assert second["original"] is None and second["replacement"] is None
    assert third["severity"] == "error" and third["original"] is None
    assert rule_url("QL002") in first["description"]
    assert (tmp_path / "m.py").read_text() == src  # computing the patch writes nothing


def test_every_format_renders_an_empty_list():
    empty = {
        "text": "All checks passed!\n",
        "full": "All checks passed!\n",
        "concise": "All checks passed!\n",
        "json": "[]\n",
        "json-lines": "",
        "github": "",
        "lintrunner": "",
    }
    for fmt in FORMATS:
        out = render(fmt, [], ReportOptions())
        assert isinstance(out, str)
        if fmt == "sarif":
            [run] = json.loads(out)["runs"]
            assert run["results"] == [] and [r["id"] for r in run["tool"]["driver"]["rules"]] == sorted(RULES)
        else:
            assert out == empty[fmt], fmt
    with pytest.raises(ValueError, match="unknown output format"):
        render("xml", [], ReportOptions())


@pytest.mark.parametrize("text", ["", "a", "a\nb\n", "a\r\nb", "a\rb\nc\r\n", "\r", "\n\n", "x\x0cy\x1cz\u2028w\n"])
def test_snippet_rows_are_the_interpreters_rows(text):
    from qlint.reporters.snippet import _ROWS, _rows

    assert _rows(text) == _ROWS.split(text)

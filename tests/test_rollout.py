"""`qlint check|fix ROOT...` over several real git repositories made by the tests: each
repository with its own settings, per-repository patches that `git apply` accepts on a
clean checkout, per-repository summaries, and cross-module resolution kept inside one."""

from __future__ import annotations

import json
import py_compile
from pathlib import Path

import pytest

from qlint.analysis.names.project import ProjectIndex
from qlint.config import Overrides
from qlint.engine import check_source
from qlint.file_settings import settings_for_path
from qlint.repos import group_paths
from tests.rollout_support import BUGGY, CAPTURE, FIXED, git, make_repo, qlint
from tests.snippets import QDQ_USER, QDQ_UTILS

NO_EOL = "import torch\n\n\ndef g(n):\n    return n.target is torch.ops.aten.relu or n.target == torch.ops.aten.relu"
# A finding near the top: the hunk's context includes the first line (and a BOM before it).
TOP = "import torch\ndef f(n):\n    return n.target == torch.ops.aten.relu\n"
# A form feed is a line break for str.splitlines, not for git: a patch must not split there.
FORM_FEED = "import torch\n\x0c\ndef h(n):  \x0c\n    return n.target == torch.ops.aten.relu\n"


@pytest.fixture
def workspace(tmp_path) -> Path:
    ws = tmp_path / "ws"
    # The workspace's own config must not leak into the repositories below it.
    (ws).mkdir()
    (ws / "pyproject.toml").write_text('[tool.qlint]\nselect = ["QL401"]\n')
    odd = {"q/crlf.py": BUGGY.replace("\n", "\r\n").encode(), "q/bom.py": b"\xef\xbb\xbf" + TOP.encode()}
    latin = BUGGY.replace("def f(n):", "def f(n):  # caf\u00e9")
    odd["q/latin.py"] = ("# -*- coding: latin-1 -*-\n" + latin).encode("latin-1")
    make_repo(ws / "quantizers", {"q/passes.py": BUGGY, "q/capture.py": CAPTURE, "q/tail.py": NO_EOL, **odd})
    make_repo(
        ws / "lowering",
        {
            "pyproject.toml": '[tool.qlint]\nignore = ["QL401"]\n',
            "low/passes.py": BUGGY,
            "low/capture.py": CAPTURE,
            "low/ff.py": FORM_FEED,
        },
    )
    return ws


def check_file(path, settings, project=None):
    with open(path, "rb") as fh:
        return check_source(fh.read(), path, settings, project)


def test_each_path_gets_its_repository_and_settings(workspace):
    low = workspace / "lowering"
    repos = group_paths([str(workspace / "quantizers"), str(low / "low"), str(low)])
    assert [r.name for r in repos] == ["quantizers", "lowering"]
    quantizers, lowering = repos
    assert quantizers.root == workspace / "quantizers" and quantizers.is_git
    assert quantizers.settings.config_path is None  # ws/pyproject.toml is above the repository
    assert quantizers.settings.root == (workspace / "quantizers").resolve()
    assert lowering.settings.config_path == (workspace / "lowering" / "pyproject.toml").resolve()
    assert lowering.paths == [str(workspace / "lowering" / "low"), str(workspace / "lowering")]
    assert "QL401" in quantizers.settings.enabled_codes and "QL401" not in lowering.settings.enabled_codes
    one_file = settings_for_path(str(low / "low" / "passes.py"))
    assert one_file.config_path == lowering.settings.config_path


def test_outside_a_repository_the_nearest_config_still_counts(workspace):
    loose = workspace / "scripts"
    loose.mkdir()
    (loose / "s.py").write_text(BUGGY)
    (repo,) = group_paths([str(loose)], overrides=Overrides(ignore=("QL002",)))
    assert repo.settings.config_path == (workspace / "pyproject.toml").resolve() and not repo.is_git
    assert "QL002" not in repo.settings.enabled_codes


def test_same_directory_names_are_told_apart(tmp_path):
    a = make_repo(tmp_path / "x" / "executorch", {"m.py": BUGGY})
    b = make_repo(tmp_path / "y" / "executorch", {"m.py": BUGGY})
    names = [r.name for r in group_paths([str(a), str(b)])]
    assert names == ["x-executorch", "y-executorch"]


def test_check_reports_each_repository_with_its_own_settings(workspace):
    run = qlint(workspace, "check", "--no-cache", "--summary-json", "summary.json", "quantizers", "lowering")
    assert run.returncode == 1, run.stderr
    assert "quantizers/q/capture.py:2:1: QL401" in run.stdout
    assert "lowering/low/capture.py" not in run.stdout  # that repository ignores QL401
    assert "lowering/low/passes.py:5:24: QL101" in run.stdout
    assert "Per repository:" in run.stdout  # two repositories: the table comes by itself
    assert run.stdout.index("Found 9 errors.") < run.stdout.index("Per repository:")  # after the report
    summary = json.loads((workspace / "summary.json").read_text())
    by_name = {r["name"]: r for r in summary["repositories"]}
    assert by_name["quantizers"]["findings"] == {"QL101": 6, "QL401": 1}
    assert by_name["lowering"]["findings"] == {"QL101": 2}
    assert by_name["lowering"]["files_checked"] == 3 and summary["totals"]["findings"] == 9


def test_json_output_stays_ruffs_list(workspace):
    run = qlint(workspace, "check", "--no-cache", "--output-format", "json", "quantizers", "lowering")
    data = json.loads(run.stdout)  # the per-repository table never mixes into the JSON
    assert isinstance(data, list) and {d["code"] for d in data} == {"QL101", "QL401"}


def test_fix_writes_patches_that_apply_to_clean_checkouts(workspace, tmp_path):
    run = qlint(workspace, "fix", "--no-cache", "--patch-dir", "patches", "quantizers", "lowering")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (workspace / "quantizers" / "q" / "passes.py").read_text() == FIXED
    patches = sorted(p.name for p in (workspace / "patches").iterdir())
    assert patches == ["lowering.patch", "quantizers.patch"]
    for name in ("quantizers", "lowering"):
        repo = workspace / name
        patch = workspace / "patches" / f"{name}.patch"
        text = patch.read_text(errors="replace")  # each file in its own encoding
        assert f"diff --git a/{'q' if name == 'quantizers' else 'low'}/passes.py" in text
        fixed = {p: p.read_bytes() for p in repo.rglob("*.py")}
        for path in fixed:
            py_compile.compile(str(path), doraise=True)
        clone = tmp_path / f"clone-{name}"
        git(tmp_path, "clone", "-q", str(repo), str(clone))
        check = git(clone, "apply", "--check", str(patch), check=False)
        assert check.returncode == 0, check.stderr
        git(clone, "apply", str(patch))
        for path, data in fixed.items():
            assert (clone / path.relative_to(repo)).read_bytes() == data, path
        # and on the original checkout, stashed back to its commit
        git(repo, "stash", "-q")
        assert git(repo, "apply", "--check", str(patch), check=False).returncode == 0
    tail = (workspace / "quantizers" / "q" / "tail.py").read_bytes()
    assert not tail.endswith(b"\n")  # the fix kept the missing final newline
    assert "\\ No newline at end of file" in (workspace / "patches" / "quantizers.patch").read_text(errors="replace")


def test_second_run_finds_nothing_left_to_fix(workspace):
    assert qlint(workspace, "fix", "--no-cache", "quantizers", "lowering").returncode == 0
    again = qlint(workspace, "fix", "--no-cache", "--diff", "quantizers", "lowering")
    assert again.returncode == 0 and again.stdout == "", again.stdout


def test_diff_prints_one_diff_per_repository(workspace):
    run = qlint(workspace, "fix", "--no-cache", "--diff", "quantizers", "lowering")
    assert run.returncode == 1
    assert (workspace / "quantizers" / "q" / "passes.py").read_text() == BUGGY  # nothing written
    headers = [line for line in run.stdout.splitlines() if line.startswith("# repository ")]
    assert [h.split()[2] for h in headers] == ["quantizers", "lowering"]
    lowering_part = run.stdout.split("# repository lowering")[1]
    assert "--- a/low/passes.py" in lowering_part and "capture.py" not in lowering_part
    assert "Per repository:" in run.stderr and "Per repository:" not in run.stdout


def test_markdown_summary_links_each_rule_page(workspace):
    run = qlint(workspace, "fix", "--no-cache", "--summary-dir", "md", "quantizers", "lowering")
    assert run.returncode == 0, run.stderr
    md = (workspace / "md" / "quantizers.md").read_text()
    settings = group_paths([str(workspace / "lowering")])[0].settings
    assert check_file(str(workspace / "lowering" / "low" / "ff.py"), settings).diagnostics == []  # fixed
    from qlint.reporters import rule_url

    assert f"[QL101 packet-matcher]({rule_url('QL101')})" in md
    assert f"[QL401 torch-ao-pt2e-import]({rule_url('QL401')})" in md
    assert "| 6 | 6 | 0 |" in md  # QL101: found, fixed, remaining
    assert "- `q/passes.py`" in md
    low = (workspace / "md" / "lowering.md").read_text()
    assert "QL401" not in low


def test_text_summary_for_one_repository_on_request(workspace):
    one = qlint(workspace / "quantizers", "check", "--no-cache", ".")
    assert "Per repository:" not in one.stdout
    asked = qlint(workspace / "quantizers", "check", "--no-cache", "--repo-summary", ".")
    assert "Per repository:" in asked.stdout and "quantizers: findings QL101 x6, QL401 x1" in asked.stdout


def test_project_index_stays_inside_one_repository(tmp_path):
    # Packages all the way up: without a boundary `ws.other.qdq_utils` resolves into a
    # neighbouring checkout.
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "__init__.py").touch()
    utils = "import torch\n\nDQ_OPS = [torch.ops.quantized_decomposed.dequantize_per_channel]\n"
    make_repo(ws / "other", {"__init__.py": "", "qdq_utils.py": utils})
    user = "from ws.{}.qdq_utils import DQ_OPS\n\n\ndef is_dq(n):\n    return n.target in DQ_OPS\n"
    files = {"__init__.py": "", "qdq_utils.py": utils, "a.py": user.format("other"), "b.py": user.format("mine")}
    mine = make_repo(ws / "mine", files)
    settings = group_paths([str(mine)])[0].settings
    project = ProjectIndex()
    assert check_file(str(mine / "a.py"), settings, project).diagnostics == []
    assert [d.code for d in check_file(str(mine / "b.py"), settings, project).diagnostics] == ["QL101"]


def test_an_empty_path_list_checks_nothing(workspace):
    (workspace / "empty.txt").write_text("")
    run = qlint(workspace / "quantizers", "check", "--no-cache", f"@{workspace / 'empty.txt'}")
    assert run.returncode == 0 and run.stdout == ""


def test_installed_trees_outside_the_working_directory_are_units_of_their_own(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    for name in ("torchao", "executorch"):
        (site / name).mkdir(parents=True)
        (site / name / "m.py").write_text(BUGGY)
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    monkeypatch.chdir(work)
    repos = group_paths([str(site / "torchao"), str(site / "executorch"), "src", "."])
    assert [(r.name, r.is_git) for r in repos] == [("torchao", False), ("executorch", False), ("work", False)]
    assert repos[0].relative(str(site / "torchao" / "m.py")) == "m.py"
    assert repos[2].paths == ["src", "."]


def test_summary_counts_runtime_verdicts_and_fixes_per_rule(tmp_path):
    from collections import Counter

    from qlint import rollout_report
    from qlint.diagnostic import Diagnostic, Range, RuntimeVerdict
    from qlint.patches import FileChange
    from qlint.repos import Repository
    from qlint.rollout import RepoOutcome, Rollout
    from qlint.settings import Settings

    def finding(code, verdict=None):
        d = Diagnostic(code, "n", "m", str(tmp_path / "a.py"), Range.of(1, 0, 1, 1))
        return d.with_runtime(RuntimeVerdict(verdict, "")) if verdict else d

    repo = Repository("r", tmp_path, Settings(root=tmp_path), [str(tmp_path)], True)
    left = [finding("QL101", "confirmed"), finding("QL101", "confirmed"), finding("QL201", "refuted"), finding("QL401")]
    outcome = RepoOutcome(repo, left, ["a", "b"], before=Counter(QL101=5, QL201=1, QL401=1), fixed=3)
    outcome.changes = [FileChange("a.py", "x\n", "y\n")]
    data = rollout_report.summary(outcome, unsafe=False)
    assert data["fixed"] == {"QL101": 3} and data["remaining"] == {"QL101": 2, "QL201": 1, "QL401": 1}
    assert data["runtime"] == {"QL101": {"confirmed": 2}, "QL201": {"refuted": 1}}
    text = rollout_report.text(Rollout([outcome], "fix"), unsafe=False)
    assert "runtime QL101 confirmed 2; QL201 refuted 1" in text
    md = rollout_report.markdown(outcome, Rollout([outcome], "fix"), unsafe=False)
    assert "- QL101: confirmed 2" in md and "Fix 3 PT2E quantization issues" in md


def test_a_clean_repository_leaves_no_old_patch_behind(workspace):
    patches = workspace / "patches"
    patches.mkdir()
    (patches / "quantizers.patch").write_text("old\n")
    (patches / "lowering.patch").write_text("old\n")
    assert qlint(workspace, "fix", "--no-cache", "quantizers").returncode == 0
    run = qlint(workspace, "fix", "--no-cache", "--patch-dir", "patches", "quantizers", "lowering")
    assert "quantizers: nothing to patch (removed the earlier" in run.stderr
    assert sorted(p.name for p in patches.iterdir()) == ["lowering.patch"]


def test_unwritable_outputs_are_errors_not_crashes(workspace):
    (workspace / "taken").write_text("a file, not a directory\n")
    run = qlint(workspace, "fix", "--no-cache", "--diff", "--patch-dir", "taken", "quantizers")
    assert run.returncode == 2 and "cannot write" in run.stderr and "internal error" not in run.stderr


def test_a_nested_config_inside_a_walked_directory_is_not_checked_twice(workspace):
    sub = workspace / "lowering" / "low"
    (sub / "qlint.toml").write_text('select = ["QL1"]\n')
    alone = group_paths([str(sub)])
    assert alone[0].settings.config_path == (sub / "qlint.toml").resolve()
    (repo,) = group_paths([str(workspace / "lowering"), str(sub)])
    assert repo.paths == [str(workspace / "lowering"), str(sub)]
    run = qlint(workspace, "check", "--no-cache", "lowering", "lowering/low")
    assert run.stdout.count("lowering/low/passes.py:5:24: QL101") == 1, run.stdout


def test_a_cross_module_fix_counts_once_found_and_once_fixed(tmp_path):
    repo = make_repo(tmp_path / "r", {"pkg/__init__.py": "", "pkg/qdq_utils.py": QDQ_UTILS, "pkg/passes.py": QDQ_USER})
    run = qlint(tmp_path, "fix", "--no-cache", "--summary-json", "s.json", "r")
    assert run.returncode == 0, run.stdout + run.stderr
    (summary,) = json.loads((tmp_path / "s.json").read_text())["repositories"]
    assert summary["findings"] == {"QL101": 1} and summary["fixed"] == {"QL101": 1} and summary["remaining"] == {}
    assert summary["files_changed"] == ["pkg/qdq_utils.py"] and summary["fixed_total"] == 1
    assert "dequantize_per_channel.default]" in (repo / "pkg" / "qdq_utils.py").read_text()

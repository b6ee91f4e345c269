"""Standard input (`-`, `--stdin-filename`), paths that cannot be checked, and the summary
that must never claim a pass for them."""

from __future__ import annotations

import json
import os

from tests.conftest import ROOT
from tests.snippets import PACKET_MATCHER as PACKET
from tests.test_cli import no_traceback, qlint

FIXED = PACKET.replace("aten.relu\n", "aten.relu.default\n")


def test_missing_path_is_an_error_without_all_checks_passed(tmp_path):
    proc = qlint("check", "--no-cache", "nope.py", cwd=tmp_path)
    assert proc.returncode == 2 and "All checks passed" not in proc.stdout
    assert "nope.py: No such file or directory" in proc.stderr
    proc = qlint("fix", "--no-cache", "nope.py", cwd=tmp_path)
    assert proc.returncode == 2 and "All checks passed" not in proc.stdout


def test_nothing_readable_is_an_error_without_all_checks_passed(tmp_path):
    os.symlink(tmp_path / "gone.py", tmp_path / "a.py")
    proc = qlint("check", "--no-cache", ".", cwd=tmp_path)
    assert proc.returncode == 2 and "All checks passed" not in proc.stdout
    assert "not everything was checked (1 problem" in proc.stdout


def test_a_named_fifo_is_reported_and_the_run_goes_on(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "a.py").write_text(PACKET)
    proc = qlint("check", "--no-cache", "pipe.py", "a.py", cwd=tmp_path)  # would block forever on read
    assert proc.returncode == 2 and "a.py:5:24: QL101" in proc.stdout
    assert "pipe.py: not a regular file" in proc.stderr
    no_traceback(proc)


def test_check_stdin_uses_the_stdin_filename_for_config_and_output(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.qlint]\nper-file-ignores = { "quiet/*" = ["QL101"] }\n')
    proc = qlint("check", "--no-cache", "--stdin-filename", "pkg/m.py", "-", cwd=tmp_path, input=PACKET)
    assert proc.returncode == 1 and proc.stdout.startswith("pkg/m.py:5:24: QL101"), proc.stderr
    proc = qlint("check", "--stdin-filename", "quiet/m.py", cwd=tmp_path, input=PACKET)  # no `-`: still stdin
    assert proc.returncode == 0 and proc.stdout == "All checks passed!\n", proc.stderr
    proc = qlint("check", "-", "--output-format", "json", cwd=tmp_path, input=PACKET)
    assert proc.returncode == 1 and json.loads(proc.stdout)[0]["filename"] == str(tmp_path / "-")
    assert not (tmp_path / "pkg").exists()


def test_fix_stdin_writes_the_fixed_text_to_stdout_and_the_report_to_stderr(tmp_path):
    proc = qlint("fix", "-", "--stdin-filename", "m.py", cwd=tmp_path, input=PACKET)
    assert proc.returncode == 0 and proc.stdout == FIXED
    assert "1 fixed, 0 remaining" in proc.stderr and not (tmp_path / "m.py").exists()
    proc = qlint("fix", "-", cwd=tmp_path, input="x = (\n")  # a broken buffer passes through unchanged
    assert proc.stdout == "x = (\n"
    proc = qlint("fix", "--diff", "-", "--stdin-filename", "m.py", cwd=tmp_path, input=PACKET)
    assert proc.returncode == 1 and "+++ b/m.py" in proc.stdout and "+    return n.target" in proc.stdout


def test_force_exclude_passes_an_excluded_stdin_buffer_through(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.qlint]\nextend-exclude = ["gen"]\n')
    args = ("--force-exclude", "--stdin-filename", "gen/m.py", "-")
    assert qlint("fix", *args, cwd=tmp_path, input=PACKET).stdout == PACKET
    assert qlint("check", *args, cwd=tmp_path, input=PACKET).returncode == 0


def test_stdin_cannot_be_mixed_with_paths(tmp_path):
    proc = qlint("check", "-", "a.py", cwd=tmp_path, input="")
    assert proc.returncode == 2 and "cannot be combined" in proc.stderr


def test_rule_by_name_and_statistics_as_json(tmp_path):
    proc = qlint("rule", "packet-matcher", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("# QL101 packet-matcher")
    (tmp_path / "a.py").write_text(PACKET)
    proc = qlint("check", "--no-cache", "--statistics", "--output-format", "json", cwd=tmp_path)
    assert proc.returncode == 1
    assert json.loads(proc.stdout) == [
        {"code": "QL101", "name": "packet-matcher", "count": 1, "fixable": True, "fixable_count": 1}
    ]


def test_repository_root_does_not_report_the_examples_unless_named(tmp_path):
    proc = qlint("check", "--no-cache", "--output-format", "json", "--exit-zero", ".", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert not [d for d in json.loads(proc.stdout) if "/examples/" in d["filename"]]
    named = qlint("check", "--no-cache", "examples/", cwd=ROOT)
    assert named.returncode == 1 and "examples/capture/" in named.stdout
    forced = qlint("check", "--no-cache", "--force-exclude", "examples/capture/ptq_without_eval.py", cwd=ROOT)
    assert forced.returncode == 0, forced.stdout


def test_a_buffer_check_hashes_no_module_for_the_project_scans(tmp_path, monkeypatch):
    # `qlint check -`: what the check read is recorded nowhere, so QL102's scan of every module
    # for consumers takes their stats and answers, not their hashes; the findings are the same.
    from qlint import stdin
    from qlint.analysis.names.project import ProjectIndex
    from qlint.engine import check_source
    from tests.conftest import old_file, settings_for
    from tests.test_ql102_consumers import ADD, PIPELINE, REMOVE

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    old_file(pkg / "__init__.py", "")
    for name, text in (("remove", REMOVE), ("pipeline", PIPELINE.format(between="pass"))):
        old_file(pkg / f"{name}.py", text)
    add = old_file(pkg / "add.py", ADD)
    hashed: list[str] = []
    real = ProjectIndex.digest

    def digest(self, path, key=None):
        hashed.append(path)
        return real(self, path, key)

    monkeypatch.setattr(ProjectIndex, "digest", digest)
    settings = settings_for(("QL102",))
    outcome = stdin.check(ADD.encode(), str(add), settings)
    assert str(pkg / "remove.py") not in hashed and str(pkg / "pipeline.py") not in hashed
    result = check_source(ADD, str(add), settings, ProjectIndex())
    assert [d.code for d in outcome.diagnostics] == [d.code for d in result.diagnostics] == []
    assert str(pkg / "remove.py") in hashed  # a check whose result may be kept hashes them


def test_a_buffer_gets_the_settings_its_file_gets(tmp_path):
    # A config above the repository is not the repository's (`qlint check FILE` stops at its
    # top); a buffer named like the file must not find it either, or an editor's check and a
    # tree run disagree, and the buffer's summary store is not the tree run's.
    (tmp_path / "pyproject.toml").write_text('[tool.qlint]\nper-file-ignores = { "*" = ["QL101"] }\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "m.py").write_text(PACKET)
    on_disk = qlint("check", "--no-cache", "repo/m.py", cwd=tmp_path)
    buffer = qlint("check", "--no-cache", "--stdin-filename", "repo/m.py", "-", cwd=tmp_path, input=PACKET)
    assert on_disk.returncode == buffer.returncode == 1, (on_disk.stderr, buffer.stderr)
    assert on_disk.stdout.splitlines()[0] == buffer.stdout.splitlines()[0]
    assert buffer.stdout.startswith("repo/m.py:5:24: QL101")
    explicit = qlint(
        "check",
        "--no-cache",
        "--config",
        "pyproject.toml",
        "--stdin-filename",
        "repo/m.py",
        "-",
        cwd=tmp_path,
        input=PACKET,
    )
    assert explicit.returncode == 0, explicit.stdout


def test_a_named_fifo_beside_the_checked_module_is_not_read(tmp_path):
    # Rules read other modules of the project (dead_code reads a script's neighbours).
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "a.py").write_text(PACKET)
    proc = qlint("check", "--no-cache", "a.py", cwd=tmp_path)
    assert proc.returncode == 1 and "a.py:5:24: QL101" in proc.stdout
    no_traceback(proc)

"""The command line, end to end: real `python -m qlint` runs plus in-process edge cases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from qlint import __version__, cli, cli_parser
from qlint.diagnostic import Applicability, Edit, Fix, Range
from qlint.rules import RULES
from qlint.rules.base import Rule

ROOT = Path(__file__).resolve().parents[1]
NOQA_ONLY = "x = 1  # noqa: QL101\n"  # QL002: an unused suppression, with a safe fix
# A matcher row and a packet (the triggers of QL101 and its packet gate): parsed, so QL001.
SYNTAX_ERROR = "node.target = (torch.ops.aten.relu,\n"


def qlint(*args: str, cwd: Path, input: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "qlint", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        input=input,
    )


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr


# ------------------------------------------------------------------ subprocess runs


def test_version_and_help(tmp_path):
    proc = qlint("--version", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == f"qlint {__version__}"
    proc = qlint(cwd=tmp_path)
    assert proc.returncode == 2 and "check" in proc.stderr


def test_version_is_printed_without_building_the_parser(tmp_path):
    """`qlint --version` (what editors and pre-commit hooks ask first) prints what argparse's
    version action printed, without importing argparse and building every command's parser."""
    code = (
        "import sys; from qlint.cli import main\ncode = main(['--version'])\nprint(code, 'argparse' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.stdout == f"qlint {__version__}\n0 False\n", done.stderr


def test_clean_tree_exits_zero(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\n\nx = torch.ops.aten.relu(torch.ones(1))\n")
    proc = qlint("check", cwd=tmp_path)  # default PATH is `.`
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "All checks passed!\n"


def test_invalid_escapes_in_checked_files_print_no_warning(tmp_path, monkeypatch):
    """Python warns on stderr when it parses `"\\d"` (3.12+: SyntaxWarning; 3.11: a
    DeprecationWarning, shown here under -W default): users' code, not a finding."""
    (tmp_path / "esc.py").write_text('import torch\npat = "\\d+"\nx = node.target == torch.ops.aten.relu\n')
    monkeypatch.setenv("PYTHONWARNINGS", "default")
    proc = qlint("check", "--no-cache", "esc.py", cwd=tmp_path)
    assert proc.returncode == 1 and "QL101" in proc.stdout
    assert "escape" not in proc.stderr, proc.stderr


def test_findings_text_json_statistics_exit_zero(tmp_path):
    (tmp_path / "a.py").write_text(NOQA_ONLY)
    (tmp_path / "b.py").write_text(SYNTAX_ERROR)
    proc = qlint("check", ".", "--no-cache", "--output-format", "concise", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "a.py:1:6: QL002 [*] Unused `noqa` directive (unused: QL101)",
        f"b.py:1:{proc.stdout.splitlines()[1].split(':')[2]}: QL001 " + proc.stdout.splitlines()[1].split(" QL001 ")[1],
        "Found 2 errors.",
        "[*] 1 fixable with `qlint fix`.",
    ]
    assert qlint("check", "--exit-zero", cwd=tmp_path).returncode == 0

    proc = qlint("check", "--output-format", "json", cwd=tmp_path)
    data = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert [(d["code"], Path(d["filename"]).name) for d in data] == [("QL002", "a.py"), ("QL001", "b.py")]
    assert data[0]["fix"]["applicability"] == "safe"

    proc = qlint("check", "--statistics", cwd=tmp_path)
    assert proc.stdout.splitlines()[:2] == ["1\tQL001\t[ ] syntax-error", "1\tQL002\t[*] unused-noqa"]

    proc = qlint("check", "--ignore", "QL002", cwd=tmp_path)
    assert proc.returncode == 1 and "QL002" not in proc.stdout and "QL001" in proc.stdout
    proc = qlint("check", "--ignore", "QL0", cwd=tmp_path)  # ignores QL002; a broken file still shows
    assert proc.returncode == 1 and "QL002" not in proc.stdout and "b.py:1:15: QL001" in proc.stdout


@pytest.mark.parametrize("fmt", ["sarif", "github", "lintrunner", "json-lines"])
def test_other_formats_through_the_cli(tmp_path, fmt):
    (tmp_path / "a.py").write_text(NOQA_ONLY)
    proc = qlint("check", "--output-format", fmt, cwd=tmp_path)
    # lintrunner takes any nonzero exit for "Linter failed": its findings are its messages.
    assert proc.returncode == (0 if fmt == "lintrunner" else 1), proc.stderr
    if fmt == "github":
        # QL002 is a warning (its rule's severity), so the annotation is one.
        assert proc.stdout.startswith("::warning title=qlint (QL002),file=a.py,line=1,col=6")
    else:
        first = json.loads(proc.stdout if fmt == "sarif" else proc.stdout.splitlines()[0])
        assert first


def test_output_file(tmp_path):
    (tmp_path / "a.py").write_text(NOQA_ONLY)
    proc = qlint("check", "--output-format", "sarif", "--output-file", "out.sarif", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    assert json.loads((tmp_path / "out.sarif").read_text())["version"] == "2.1.0"


def test_broken_config_exits_2_naming_key_and_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.qlint]\nselekt = ["QL1"]\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    proc = qlint("check", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        'qlint: error: pyproject.toml: [tool.qlint] unknown key "selekt" (did you mean "select"?)'
    )
    no_traceback(proc)
    (tmp_path / "pyproject.toml").write_text("[tool.qlint.QL101]\nfix-style = 'sometimes'\n")
    proc = qlint("check", cwd=tmp_path)
    assert proc.returncode == 2 and '[tool.qlint.QL101] "fix-style": "sometimes" is not one of' in proc.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.qlint\n")
    proc = qlint("check", cwd=tmp_path)
    assert proc.returncode == 2 and "pyproject.toml: invalid TOML" in proc.stderr
    no_traceback(proc)


def test_config_file_option(tmp_path):
    (tmp_path / "a.py").write_text(NOQA_ONLY)
    (tmp_path / "strict.toml").write_text("ignore = ['QL002']\n")
    assert qlint("check", "--config", "strict.toml", cwd=tmp_path).returncode == 0
    proc = qlint("check", "--config", "missing.toml", cwd=tmp_path)
    assert proc.returncode == 2 and "missing.toml: config file not found" in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "--select", "QL9999"], '--select: unknown rule selector "QL9999"'),
        (["check", "--output-format", "xml"], "invalid choice"),
        (["check", "--jobs", "0"], "must be at least 1"),
        (["check", "--bogus"], "unrecognized arguments"),
        (["rule", "QL999"], "unknown rule 'QL999'"),
    ],
)
def test_usage_errors_exit_2(tmp_path, args, message):
    proc = qlint(*args, cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr
    no_traceback(proc)


def test_unreadable_paths_are_errors_but_other_files_are_still_reported(tmp_path):
    (tmp_path / "a.py").write_text(NOQA_ONLY)
    os.symlink(tmp_path / "nowhere.py", tmp_path / "broken.py")
    proc = qlint("check", ".", "missing_dir", "--exit-zero", cwd=tmp_path)
    assert proc.returncode == 2  # errors win over --exit-zero
    assert "a.py:1:6: QL002" in proc.stdout
    assert "qlint: error: broken.py: broken symbolic link" in proc.stderr
    assert "qlint: error: missing_dir: No such file or directory" in proc.stderr
    no_traceback(proc)


def test_bad_inputs_never_crash_the_run(tmp_path):
    (tmp_path / "empty.py").write_text("")
    (tmp_path / "latin.py").write_bytes(b"node.target == '\xff\xfe'\n")
    (tmp_path / "nul.py").write_bytes(b"node.target, torch.ops.aten.relu\x00 == 1\n")
    (tmp_path / "nested.py").write_text("node.target == torch.ops.aten.relu + " + "(" * 5000 + ")" * 5000 + "\n")
    (tmp_path / "big.py").write_text("node.target, torch.ops.aten.relu\n" + "x = 1\n" * 100_000)
    cookie = b"# -*- coding: latin-1 -*-\nname = '\xe9'\nnode.target, torch.ops.aten.relu\n"
    (tmp_path / "cookie.py").write_bytes(cookie)
    loop = tmp_path / "loop"
    loop.mkdir()
    os.symlink(loop, loop / "again")
    (tmp_path / "a.py").write_text(NOQA_ONLY)
    proc = qlint("check", "--output-format", "json", cwd=tmp_path)
    no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    by_file = {}
    for d in json.loads(proc.stdout):
        by_file.setdefault(Path(d["filename"]).name, []).append(d["code"])
    assert by_file == {"a.py": ["QL002"], "latin.py": ["QL001"], "nul.py": ["QL001"], "nested.py": ["QL001"]}


def test_fix_diff_then_fix_then_clean(tmp_path):
    target = tmp_path / "a.py"
    target.write_text("import os\n" + NOQA_ONLY)
    proc = qlint("fix", "--diff", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("--- a/a.py\n+++ b/a.py\n")
    assert "-x = 1  # noqa: QL101\n+x = 1\n" in proc.stdout
    assert proc.stderr.strip() == "Would fix 1 error."
    assert target.read_text() == "import os\n" + NOQA_ONLY  # --diff writes nothing

    proc = qlint("fix", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Found 1 error (1 fixed, 0 remaining).\n"
    assert target.read_text() == "import os\nx = 1\n"

    proc = qlint("fix", cwd=tmp_path)  # idempotent
    assert proc.returncode == 0 and proc.stdout == "All checks passed!\n"
    assert qlint("fix", "--diff", cwd=tmp_path).returncode == 0
    assert qlint("check", cwd=tmp_path).returncode == 0


def test_check_fix_reports_what_remains(tmp_path):
    (tmp_path / "a.py").write_text(NOQA_ONLY)
    (tmp_path / "b.py").write_text(SYNTAX_ERROR)
    proc = qlint("check", "--fix", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[-1] == "Found 2 errors (1 fixed, 1 remaining)."
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


def test_rules_and_rule_pages(tmp_path):
    proc = qlint("rules", cwd=tmp_path)
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:3] == ["Code", "Name", "Fix"]
    for code, rule in RULES.items():
        assert any(line.split()[:3] == [code, rule.name, rule.fix_availability] for line in lines)
    proc = qlint("rule", "ql101", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout == (ROOT / "rules" / "QL101.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------ in-process


class FakeFixRule(Rule):
    code = "QL902"
    name = "fake-fix"
    summary = "test-only rule with safe, unsafe and display-only fixes"
    triggers = ("FAKE_",)
    fix_availability = "sometimes"

    def check(self, ctx):
        kinds = {"FAKE_SAFE": Applicability.SAFE, "FAKE_UNSAFE": Applicability.UNSAFE}
        kinds["FAKE_SHOW"] = Applicability.DISPLAY_ONLY
        for row, line in enumerate(ctx.text.split("\n"), 1):
            for word, how in kinds.items():
                col = line.find(word)
                if col < 0:
                    continue
                r = Range.of(row, col, row, col + len(word))
                edits = () if how is Applicability.DISPLAY_ONLY else (Edit(r, word.replace("FAKE", "DONE")),)
                yield ctx.diagnostic(self, r, f"{word} found", Fix(how, "replace", edits))


@pytest.fixture
def fake_rule(monkeypatch, tmp_path):
    monkeypatch.setitem(RULES, FakeFixRule.code, FakeFixRule)
    monkeypatch.chdir(tmp_path)


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_unsafe_fixes_are_hidden_until_asked_for(tmp_path, fake_rule, capsys):
    (tmp_path / "a.py").write_text("FAKE_SAFE\nFAKE_UNSAFE\nFAKE_SHOW\n")
    code, out, _ = run(capsys, "check", "--select", "QL902", "--no-cache", "--output-format", "concise")
    assert code == 1
    assert out.splitlines() == [
        "a.py:1:1: QL902 [*] FAKE_SAFE found",
        "a.py:2:1: QL902 FAKE_UNSAFE found",
        "a.py:3:1: QL902 FAKE_SHOW found",
        "Found 3 errors.",
        "[*] 1 fixable with `qlint fix` (1 hidden fix can be enabled with the `--unsafe-fixes` option).",
    ]
    code, out, err = run(capsys, "fix", "--diff", "--select", "QL902", "--no-cache")
    assert code == 1 and "+DONE_SAFE" in out and "DONE_UNSAFE" not in out
    assert err.strip() == "Would fix 1 error (1 additional fix available with `--unsafe-fixes`)."
    code, out, _ = run(capsys, "fix", "--select", "QL902", "--no-cache")
    assert code == 1 and out.splitlines()[-2:] == [
        "Found 3 errors (1 fixed, 2 remaining).",
        "No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option).",
    ]
    code, out, _ = run(capsys, "fix", "--unsafe-fixes", "--select", "QL902", "--no-cache")
    assert code == 1 and out.splitlines()[-1] == "Found 2 errors (1 fixed, 1 remaining)."
    assert (tmp_path / "a.py").read_text() == "DONE_SAFE\nDONE_UNSAFE\nFAKE_SHOW\n"


def test_unsafe_fixes_from_config(tmp_path, fake_rule, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.qlint]\nselect = ['QL902']\nunsafe-fixes = true\n")
    (tmp_path / "a.py").write_text("FAKE_UNSAFE\n")
    code, out, _ = run(capsys, "check", "--no-cache")
    assert code == 1 and out.splitlines()[0] == "a.py:1:1: QL902 [*] FAKE_UNSAFE found"


def test_keyboard_interrupt_exits_130_quietly(tmp_path, monkeypatch, capsys):
    import qlint.runner

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(qlint.runner, "run_check", interrupted)
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "check") == (130, "", "")


def test_internal_error_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    import qlint.runner

    def broken(*a, **k):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(qlint.runner, "run_check", broken)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("QLINT_DEBUG", raising=False)
    code, out, err = run(capsys, "check")
    assert code == 2 and out == ""
    assert err == "qlint: error: internal error: RuntimeError: kaboom (set QLINT_DEBUG=1 for a traceback)\n"


def _missing_module(importing: str, missing: str | None = None):
    """`import_module(importing)` fails as if `missing` (default: itself) were not installed."""
    real = cli.importlib.import_module
    missing = missing or importing

    def fake(module, *args):
        if module == importing:
            raise ModuleNotFoundError(f"No module named {missing!r}", name=missing)
        return real(module, *args)

    return fake


def test_runtime_checker_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli.importlib, "import_module", _missing_module("qlint.runtime"))
    monkeypatch.chdir(tmp_path)
    expected = "qlint: error: runtime checker not available in this build of qlint\n"
    assert run(capsys, "check", "--runtime")[::2] == (2, expected)


def test_runtime_checker_annotates(tmp_path, monkeypatch, capsys):
    import types

    from qlint.diagnostic import RuntimeVerdict

    fake = types.ModuleType("qlint.runtime")
    calls = []

    def attach_verdicts(diags, settings, *, verify_fixes, cache=True):
        calls.append((verify_fixes, cache))
        return [d.with_runtime(RuntimeVerdict("confirmed", "seen", True, 0.2)) for d in diags]

    fake.attach_verdicts = attach_verdicts
    monkeypatch.setitem(sys.modules, "qlint.runtime", fake)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(NOQA_ONLY)
    code, out, _ = run(capsys, "check", "--runtime", "--no-cache")
    assert code == 1 and out.splitlines()[1] == "  runtime: confirmed — seen; fix verified (0.2s)"
    assert calls == [(True, False)]


def test_runtime_checker_failure_keeps_the_findings(tmp_path, monkeypatch, capsys):
    import types

    fake = types.ModuleType("qlint.runtime")

    def attach_verdicts(diags, settings, **kw):
        raise OSError("worker would not start")

    fake.attach_verdicts = attach_verdicts
    monkeypatch.setitem(sys.modules, "qlint.runtime", fake)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(NOQA_ONLY)
    code, out, err = run(capsys, "check", "--runtime", "--no-cache")
    assert code == 2 and out.startswith("a.py:1:6: QL002")
    assert err == "qlint: error: runtime checker failed: OSError: worker would not start\n"


def test_server_without_pygls(monkeypatch, capsys):
    monkeypatch.setattr(cli.importlib, "import_module", _missing_module("qlint.lsp.features", "pygls"))
    code, _, err = run(capsys, "server")
    assert code == 2 and "pip install 'qlint-pt2e[lsp]'" in err
    monkeypatch.setattr(cli.importlib, "import_module", _missing_module("qlint.lsp.features", "qlint.lsp"))
    code, _, err = run(capsys, "server")
    assert code == 2 and "language server not available" in err


def test_server_runs_the_lsp_main(monkeypatch, capsys):
    import types

    fake = types.ModuleType("qlint.lsp.features")
    fake.main = lambda: 0
    monkeypatch.setitem(sys.modules, "qlint.lsp.features", fake)
    monkeypatch.setattr(cli.importlib, "import_module", lambda name: sys.modules[name])
    assert cli.main(["server"]) == 0


def test_non_ascii_paths(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "módulo_ü.py").write_text(NOQA_ONLY)
    code, out, _ = run(capsys, "check", "--no-cache")
    assert code == 1 and out.startswith("módulo_ü.py:1:6: QL002")


def _torch_dir() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("torch")  # locates the package without importing it
    return Path(spec.origin).parent if spec and spec.origin else None


@pytest.mark.skipif(_torch_dir() is None, reason="needs a big tree to interrupt (torch)")
def test_ctrl_c_stops_workers_and_exits_130_quietly(tmp_path):
    import signal
    import time

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))))
    proc = subprocess.Popen(
        # -j3: two workers beside the parent, which checks too (a Ctrl-C lands in its checks)
        [sys.executable, "-m", "qlint", "check", str(_torch_dir()), "--no-cache", "-j3"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, like a shell job
    )
    deadline = time.time() + 60
    while time.time() < deadline:  # wait until the workers are busy
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout
        if len(children.split()) >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be interrupted"
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    start = time.time()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err == b"" and out == b""
    assert time.time() - start < 10
    leftover = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True).stdout
    assert leftover.strip() == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--exit-zero", "-q", "--select", "QL1,QL2", "a.py", "b"],
        ["check", "--stdin-filename", "m.py", "-"],
        ["fix", "--diff", "--unsafe-fixes", "-j", "2", "src"],
        ["rule", "QL101"],
        ["rules"],
        ["server"],
    ],
)
def test_the_parser_of_one_command_parses_as_the_whole_one(argv):
    assert cli_parser.build_parser(argv[0]).parse_args(argv) == cli_parser.build_parser().parse_args(argv)


def test_the_parser_of_one_command_keeps_only_that_command():
    sub = next(a for a in cli_parser.build_parser("check")._actions if a.dest == "command")
    assert list(sub.choices) == ["check"]
    sub = next(a for a in cli_parser.build_parser("nonsense")._actions if a.dest == "command")
    assert list(sub.choices) == list(cli_parser.COMMANDS)

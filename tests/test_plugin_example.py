"""examples/plugin, installed by pip into a throw-away virtual environment, end to end:
listed with its package, checked, selected and ignored, suppressed, its page printed, its
own tests run; beside it a crashing plugin and one that claims the same code."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv

import pytest

from tests.conftest import ROOT
from tests.plugin_support import rule_source, write_plugin

PASS_SOURCE = """\
import torch


def fuse_pass(gm):
    print("fusing")
    return gm.target == torch.ops.aten.relu
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """The venv's python, with the example plugin installed from a copy (a build writes into
    its source tree) and qlint imported from this checkout."""
    base = tmp_path_factory.mktemp("plugin")
    source = base / "src"
    shutil.copytree(ROOT / "examples" / "plugin", source)
    env_dir = base / "venv"
    # System site-packages: the build backend (setuptools) and pytest come from there.
    venv.create(env_dir, system_site_packages=True, with_pip=False)
    python = env_dir / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps"]
    subprocess.run(
        [*install, "--no-build-isolation", "--no-index", str(source)], check=True, capture_output=True, timeout=300
    )
    work = base / "work"
    work.mkdir()
    (work / "m.py").write_text(PASS_SOURCE)
    return python, work, source


def qlint(env, *args, extra_path=()):
    python, work, _ = env
    environ = {k: v for k, v in os.environ.items() if k != "QLINT_DEBUG"}
    environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *map(str, extra_path)])
    return subprocess.run(
        [python, "-m", "qlint", *args], cwd=work, capture_output=True, text=True, env=environ, timeout=120
    )


def test_rules_lists_the_plugin_with_its_package(env):
    proc = qlint(env, "rules")
    assert proc.returncode == 0, proc.stderr
    [row] = [line.split()[:5] for line in proc.stdout.splitlines() if line.startswith("EXQ101")]
    assert row == ["EXQ101", "print-in-graph-pass", "none", "info", "qlint-example-plugin"]
    assert any(
        line.split()[:5] == ["QL101", "packet-matcher", "sometimes", "warning", "qlint"]
        for line in proc.stdout.splitlines()
    )


def test_check_reports_the_plugin_and_selection_works(env):
    proc = qlint(env, "check", "--no-cache", "--output-format", "concise", "m.py")
    assert proc.returncode == 1, proc.stderr
    first, second = proc.stdout.splitlines()[:2]
    assert first == "m.py:5:5: EXQ101 `print()` in graph pass `fuse_pass`: use `logging`"
    assert second.startswith("m.py:6:25: QL101 [*] `torch.ops.aten.relu` is an OpOverloadPacket")
    only = qlint(env, "check", "--no-cache", "--select", "EXQ101", "--output-format", "json", "m.py")
    [finding] = json.loads(only.stdout)
    assert (finding["code"], finding["severity"], finding["location"]) == ("EXQ101", "info", {"row": 5, "column": 5})
    assert finding["url"].endswith("/examples/plugin/qlint_example_plugin/EXQ101.md")
    builtin_only = qlint(env, "check", "--no-cache", "--output-format", "concise", "--select", "QL", "m.py")
    assert "EXQ101" not in builtin_only.stdout and "QL101" in builtin_only.stdout
    ignored = qlint(env, "check", "--no-cache", "--output-format", "concise", "--ignore", "EXQ", "m.py")
    assert "EXQ101" not in ignored.stdout and "QL101" in ignored.stdout


def test_noqa_suppresses_a_plugin_code(env):
    _, work, _ = env
    (work / "n.py").write_text(
        'def fuse_pass(gm):\n    print("x")  # noqa: EXQ101\n\n\ndef b_pass(gm):\n    print(1)\n'
    )
    proc = qlint(env, "check", "--no-cache", "--output-format", "concise", "n.py")
    assert [line.split(": ")[0:2] for line in proc.stdout.splitlines()[:-1]] == [
        ["n.py:6:5", "EXQ101 `print()` in graph pass `b_pass`"]
    ]


def test_rule_prints_the_plugin_page_by_code_and_by_name(env):
    _, _, source = env
    page = (source / "qlint_example_plugin" / "EXQ101.md").read_text()
    for name in ("EXQ101", "print-in-graph-pass"):
        proc = qlint(env, "rule", name)
        assert proc.returncode == 0 and proc.stdout == page, proc.stderr


def test_a_crashing_plugin_rule_is_one_error_line_and_the_run_goes_on(env, tmp_path):
    crashing = write_plugin(
        tmp_path / "crash",
        "crashing-plugin",
        "crashing_rules",
        rule_source(cls="Boom", code="EXQ901", name="boom", trigger="print", crash=True),
        {"boom": "crashing_rules:Boom"},
    )
    proc = qlint(env, "check", "--no-cache", "--output-format", "concise", "m.py", extra_path=[crashing])
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"qlint: error: {env[1] / 'm.py'}: internal error in EXQ901 boom (plugin crashing-plugin 0.1): "
        "RuntimeError: plugin bug"
    ]
    codes = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("m.py:")]
    assert codes == ["EXQ101", "QL101"]


def test_a_plugin_claiming_the_same_code_stops_start_up(env, tmp_path):
    duplicate = write_plugin(
        tmp_path / "dup",
        "copycat-plugin",
        "copycat_rules",
        rule_source(cls="Copy", code="EXQ101", name="copycat"),
        {"copy": "copycat_rules:Copy"},
    )
    proc = qlint(env, "check", "--no-cache", "m.py", extra_path=[duplicate])
    assert proc.returncode == 2 and proc.stdout == ""
    [line] = proc.stderr.splitlines()
    assert line.startswith("qlint: error: two rules claim the code EXQ101: ")
    assert "copycat-plugin 0.1" in line and "qlint-example-plugin 0.1.0" in line


def test_the_plugins_own_tests_pass(env):
    python, _, source = env
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(source / "tests")],
        cwd=source,
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 passed" in proc.stdout

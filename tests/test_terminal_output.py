"""What a person reads in a terminal: one-sentence messages, the source line with a caret,
a help line, and colour only where it can be shown."""

from __future__ import annotations

import json
import re

import pytest

from qlint.diagnostic import Diagnostic, Range
from qlint.reporters import ReportOptions, render
from qlint.reporters.snippet import use_color
from tests.conftest import ROOT
from tests.test_cli import qlint

PACKET = "import torch\n\n\ndef f(n):\n\treturn n.target == torch.ops.aten.relu\n"


def test_full_output_shows_the_line_a_caret_and_the_help(tmp_path):
    (tmp_path / "a.py").write_text(PACKET)
    proc = qlint("check", "--no-cache", "a.py", cwd=tmp_path)  # full is the default
    lines = proc.stdout.splitlines()
    assert lines[0] == (
        "a.py:5:21: QL101 [*] `torch.ops.aten.relu` is an OpOverloadPacket compared with FX node targets:"
        " it never matches a graph node"
    )
    assert lines[1:5] == [
        "  |",
        "5 |     return n.target == torch.ops.aten.relu",  # a tab shows as four spaces
        "  |                        ^^^^^^^^^^^^^^^^^^^ QL101",
        "  |",
    ]
    assert lines[5].startswith("  = help: It never matches a graph node: graphs carry `.default`")
    assert "\x1b[" not in proc.stdout  # not a terminal: no colour
    concise = qlint("check", "--no-cache", "--output-format", "concise", "a.py", cwd=tmp_path)
    assert concise.stdout.splitlines()[0] == lines[0] and concise.stdout.splitlines()[1] == "Found 1 error."


def test_colour_follows_the_terminal_no_color_and_force_color(monkeypatch):
    class Tty:
        def isatty(self):
            return True

    class Pipe:
        def isatty(self):
            return False

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert use_color(Tty()) and not use_color(Pipe())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color(Tty())
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert use_color(Pipe())


def test_forced_colour_reaches_the_terminal_but_never_an_output_file(tmp_path):
    (tmp_path / "a.py").write_text(PACKET)
    import os
    import subprocess
    import sys

    env = {**os.environ, "FORCE_COLOR": "1", "PYTHONPATH": str(ROOT)}
    env.pop("NO_COLOR", None)
    run = [sys.executable, "-m", "qlint", "check", "--no-cache", "a.py"]
    coloured = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert "\x1b[1;31mQL101\x1b[0m" in coloured.stdout
    subprocess.run([*run, "--output-file", "out.txt"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert "\x1b[" not in (tmp_path / "out.txt").read_text() and "QL101" in (tmp_path / "out.txt").read_text()


def test_snippet_of_a_multi_row_range_and_of_a_file_that_is_gone():
    d = Diagnostic("QL201", "x", "msg", "/nonexistent/gone.py", Range.of(3, 4, 5, 1), help="why")
    text = render("full", [d], ReportOptions(quiet=True, color=False))
    assert text.splitlines()[1:] == ["  = help: why", ""]  # no source: help only
    sources = {"/nonexistent/gone.py": "a\r\nb\rc   = f(\n  1,\n)\n"}  # rows as the interpreter counts them
    text = render("full", [d], ReportOptions(quiet=True, color=False, sources=sources))
    assert text.splitlines()[1:4] == ["  |", "3 | c   = f(", "  |     ^^^^ QL201"]


def test_every_message_of_the_examples_is_one_short_sentence():
    proc = qlint("check", "--no-cache", "--output-format", "json", "examples/", cwd=ROOT)
    found = json.loads(proc.stdout)
    assert len(found) >= 15
    for d in found:
        message = d["message"]
        assert len(message) <= 160, message
        # One sentence: no full stop followed by another sentence inside it.
        assert not re.search(r"[.;]\s+[A-Z]", message), message
        assert d.get("help"), d["code"]


@pytest.mark.parametrize("fmt", ["github", "lintrunner", "sarif"])
def test_help_reaches_the_other_formats(tmp_path, fmt):
    (tmp_path / "a.py").write_text(PACKET)
    proc = qlint("check", "--no-cache", "--output-format", fmt, "a.py", cwd=tmp_path)
    assert "graphs carry `.default`" in proc.stdout

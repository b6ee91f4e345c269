"""The same tree gives the same findings however the run is split up.

Workers keep one `ProjectIndex` per process and the disk cache keeps module summaries between
runs, so what a check of one file sees of the modules it imports must not depend on which
worker checked which file first, on the order of the files, on the hash seed of the process,
on the worker count, or on whether the summaries came from disk. The tree mixes cross-module
findings (QL101 through a collection of another module, QL201 through a factory and a class
of another module, a quiet capture of a model that holds nothing mode-dependent) with the
shipped examples.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from qlint.settings import Settings

ROOT = Path(__file__).resolve().parents[1]

_MODELS = """\
import torch


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = torch.nn.Dropout(0.1)
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(self.drop(x))


class Plain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)


def build():
    return Head()
"""

_QUANT = """\
import torch
from torch.ao.quantization.quantize_pt2e import prepare_pt2e

from .models import Plain, build


def quantize(quantizer, example):
    model = build()
    captured = torch.export.export(model, example).module()
    return prepare_pt2e(captured, quantizer)


def quantize_plain(quantizer, example):
    model = Plain()
    captured = torch.export.export(model, example).module()
    return prepare_pt2e(captured, quantizer)
"""


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("determinism")
    shutil.copytree(ROOT / "examples", root / "examples")
    pkg = root / "examples" / "crossmod"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "models.py").write_text(_MODELS)
    (pkg / "quant.py").write_text(_QUANT)
    return root


def _cli(tree: Path, *args: str, seed: str) -> list[dict]:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    cmd = [sys.executable, "-m", "qlint", "check", "--exit-zero", "--output-format", "json", *args, "examples"]
    out = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_worker_counts_hash_seeds_and_the_summary_cache_give_the_same_json(tree):
    reference = _cli(tree, "--no-cache", "-j", "1", seed="0")
    codes = {(Path(f["filename"]).name, f["code"]) for f in reference}
    assert {("quant.py", "QL201"), ("fold_pass.py", "QL101")} <= codes
    assert _cli(tree, "--no-cache", "-j", "2", seed="1") == reference
    cache = tree / "cache"
    assert _cli(tree, "--cache-dir", str(cache), "-j", "2", seed="2") == reference
    # Summaries written by that run, results not: every file is checked again from them.
    for index in cache.rglob("*.index"):
        index.unlink()
    assert list(cache.rglob("*.summary"))
    assert _cli(tree, "--cache-dir", str(cache), "-j", "1", seed="3") == reference


def _in_process(tree: Path, files: list[str], fresh: bool) -> list[tuple]:
    settings = Settings(root=tree)
    found = []
    for path in files:
        if fresh:
            ProjectIndex._default = None
        result = check_source(Path(path).read_bytes(), path, settings)
        found += [(d.code, path, str(d.range), d.message) for d in result.diagnostics]
    return sorted(found)


def test_file_order_in_one_worker_does_not_change_findings(tree, monkeypatch):
    monkeypatch.setattr(ProjectIndex, "_default", None)
    files = sorted(str(p) for p in (tree / "examples").rglob("*.py"))
    alone = _in_process(tree, files, fresh=True)
    assert any(code == "QL201" and path.endswith("quant.py") for code, path, *_ in alone)
    ProjectIndex._default = None
    assert _in_process(tree, files, fresh=False) == alone
    ProjectIndex._default = None
    assert _in_process(tree, files[::-1], fresh=False) == alone

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
from tests.snippets import BN_NET_MODULE, SEQUENTIAL_CAPTURE

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


def _env(seed: str) -> dict[str, str]:
    """A fresh process with that hash seed, running this checkout's qlint (not an installed one)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=path)


def _cli(tree: Path, *args: str, seed: str) -> list[dict]:
    env = _env(seed)
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


# -- answers shared across the checks of one process -------------------------------------
# Kept model flows of other modules' helpers (`shared_flows`) and forwarded parameters
# (`forwarding_memos.SHARED`) serve every later check in the worker: a chain of helpers entered at
# two depths, a cycle entered from both sides, and a helper whose callers in other modules
# are read, each checked from files that sort before and after the others.

_NET = BN_NET_MODULE

_CAPTURE = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from lib.{module} import {name}


def quantize(quantizer, example):
    model = {name}()
    return prepare_pt2e(torch.export.export(model, example).module(), quantizer)
"""

_INSERT = (
    "import torch\n\nfrom lib.inserts import {name}\n\n\ndef rewrite(gm):\n    {name}(gm.graph, torch.ops.aten.relu)\n"
)

_INSERTS = """\
def h1(graph, op):
    return h2(graph, op)


def h2(graph, op):
    return h3(graph, op)


def h3(graph, op):
    return h4(graph, op)


def h4(graph, op):
    return h5(graph, op)


def h5(graph, op):
    return h6(graph, op)


def h6(graph, op, stop=False):
    if stop:
        return graph.call_function(op, ())
    return h7(graph, op)


def h7(graph, op):
    return h6(graph, op, True)
"""

_HELPER = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def quantize_module(model, quantizer, example):
    return prepare_pt2e(torch.export.export(model, example).module(), quantizer)
"""

_HELPER_CALLER = "from lib.helper import quantize_module\nfrom lib.f6 import Net\n\n\ndef main(q, x):\n    {call}\n"


def _shared_answers_tree(root: Path) -> list[str]:
    """The files, relative to `root`, with `.git` making it one project."""
    files = {"lib/__init__.py": "", "lib/f6.py": _NET + "\n\ndef f6():\n    return Net()\n"}
    for i in range(1, 6):
        files[f"lib/f{i}.py"] = f"from lib.f{i + 1} import f{i + 1}\n\n\ndef f{i}():\n    return f{i + 1}()\n"
    # `a_*` sort first: they enter the chains deep down, `z_*` at their heads.
    files["scripts/a_capture.py"] = _CAPTURE.format(module="f4", name="f4")
    files["scripts/z_capture.py"] = _CAPTURE.format(module="f1", name="f1")
    files["lib/inserts.py"] = _INSERTS
    files["scripts/a_insert.py"] = _INSERT.format(name="h3")
    files["scripts/m_insert.py"] = _INSERT.format(name="h7")
    files["scripts/z_insert.py"] = _INSERT.format(name="h1")
    files["lib/helper.py"] = _HELPER
    files["scripts/a_eval.py"] = _HELPER_CALLER.format(call="quantize_module(Net().eval(), q, x)")
    files["scripts/z_train.py"] = _HELPER_CALLER.format(call="quantize_module(Net(), q, x)")
    (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return sorted(files)


def _json(root: Path, *args: str, seed: str) -> list[tuple]:
    env = _env(seed)
    cmd = [sys.executable, "-m", "qlint", "check", "--exit-zero", "--output-format", "json", "--no-cache", *args]
    out = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return sorted(
        (Path(f["filename"]).relative_to(root).as_posix(), f["location"]["row"], f["code"], f["message"])
        for f in json.loads(out.stdout)
    )


def test_answers_shared_across_checks_give_every_file_what_a_fresh_process_gives(tmp_path):
    root = tmp_path / "shared"
    _shared_answers_tree(root)
    whole = _json(root, "-j", "1", ".", seed="0")
    assert {(path, code) for path, _, code, _ in whole} >= {
        ("scripts/a_capture.py", "QL201"),
        ("scripts/z_capture.py", "QL201"),
        ("scripts/a_insert.py", "QL102"),
        ("scripts/m_insert.py", "QL102"),
        ("scripts/z_insert.py", "QL102"),
        ("lib/helper.py", "QL201"),
    }
    assert _json(root, "-j", "2", ".", seed="1") == whole
    # Without the files that sort first: each chain met first at its head (or the cycle from
    # its other side) in a fresh process.
    heads = ["scripts/m_insert.py", "scripts/z_capture.py", "scripts/z_insert.py"]
    assert _json(root, "-j", "1", *heads, seed="2") == [f for f in whole if f[0] in heads]


def test_answers_shared_across_checks_in_either_file_order(tmp_path, monkeypatch):
    root = tmp_path / "shared"
    files = [str(root / name) for name in _shared_answers_tree(root)]
    monkeypatch.setattr(ProjectIndex, "_default", None)
    alone = _in_process(root, files, fresh=True)
    assert len({path for _, path, *_ in alone}) == 6
    for order in (files, files[::-1]):
        ProjectIndex._default = None
        assert _in_process(root, order, fresh=False) == alone


def test_of_reasons_that_say_the_same_the_related_location_is_the_leftmost_whatever_the_hash_seed(tmp_path):
    (tmp_path / "examples").mkdir()
    # A model built of parts on one line: each part starts in train mode, and the message says
    # "built at line 7" once, with one of the parts as its related location.
    (tmp_path / "examples" / "parts.py").write_text(SEQUENTIAL_CAPTURE)
    # Seeds 0 and 1 kept different parts before the reasons were ordered by position too.
    runs = [_cli(tmp_path, "--no-cache", seed=seed) for seed in ("0", "1", "2", "3")]
    assert all(run == runs[0] for run in runs)
    (finding,) = runs[0]
    assert finding["code"] == "QL201" and "built at line 7" in finding["message"]
    built = [r for r in finding["related"] if r["message"].startswith("built at line 7")]
    assert [(r["location"], r["end_location"]) for r in built] == [
        ({"row": 7, "column": 27}, {"row": 7, "column": 45})  # `nn.Conv2d(3, 3, 1)`
    ]

"""A check that reads what earlier runs kept (results, module summaries, answers about other
modules) gives, after an edit, exactly the findings a run without the cache gives: the edit
of one function changes a finding in another function of the same module, or in another
module that reads it. Each case first asserts that the edit does change the findings, so an
agreement of two unchanged outputs proves nothing.

The runs are real processes sharing one `--cache-dir`, as pre-commit's and an editor's
`qlint check FILE` / `qlint check --stdin-filename FILE -` after a whole-tree run."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import json_findings, old_file, old_package

FLOWS = """\
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg.helpers import ready
from pkg.readied import Readied


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)


def set_mode(model):
    model.eval()


def capture_local(x, quantizer):
    model = Net()
    set_mode(model)
    ep = export(model, (x,)).module()
    return prepare_pt2e(ep, quantizer)


def capture_remote(x, quantizer):
    model = Net()
    ready(model)
    ep = export(model, (x,)).module()
    return prepare_pt2e(ep, quantizer)


def capture_by_method(x, quantizer):
    model = Net()
    Readied().apply(model)
    ep = export(model, (x,)).module()
    return prepare_pt2e(ep, quantizer)
"""
# A class of another module whose method it inherits from a base of a third module.
READIED = "from pkg.bases import Base\n\n\nclass Readied(Base):\n    pass\n"
BASES = "class Base:\n    def apply(self, model):\n        model.eval()\n        return model\n"
HELPERS = "def ready(model):\n    model.eval()\n    return model\n"
OPS = "import torch\n\nDQ = torch.ops.quantized_decomposed.dequantize_per_tensor.default\n"
MATCH = """\
from pkg.ops import DQ


def find(gm):
    for node in gm.graph.nodes:
        if node.target == DQ:
            return node
"""
CALIB = """\
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def calibrate(model, data):
    for x in data:
        model(x)


def quantize(ep, quantizer, data):
    prepared = prepare_pt2e(ep, quantizer)
    calibrate(prepared, data)
    return convert_pt2e(prepared)
"""
# A test class's helper method and a helper written inside a function: the shape of ao's
# test_quantize_pt2e.py, whose methods benchmarks/bench_trees.py edits.
METHODS = """\
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)


class TestCapture:
    def _ready(self, model):
        model.eval()
        return model

    def test_capture(self, x, quantizer):
        model = Net()
        self._ready(model)
        ep = export(model, (x,)).module()
        return prepare_pt2e(ep, quantizer)


def capture_with_nested_helper(x, quantizer):
    def ready(model):
        model.eval()

    model = Net()
    ready(model)
    ep = export(model, (x,)).module()
    return prepare_pt2e(ep, quantizer)
"""
_SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def repo(tmp_path) -> Path:
    (tmp_path / ".git").mkdir()  # the project's top: the config search and module names stop here
    modules = {"flows": FLOWS, "helpers": HELPERS, "ops": OPS, "match": MATCH, "calib": CALIB, "methods": METHODS}
    old_package(tmp_path, **modules, readied=READIED, bases=BASES)
    # A whole-tree run fills the cache, then an editor's check of each module's buffer as it is
    # on disk keeps the answers a buffer's check takes (`kept_answers`).
    _qlint(tmp_path, "--cache-dir", "cache", "pkg")
    for module in ("flows", "match", "calib", "methods"):
        _buffer(tmp_path, module, (tmp_path / "pkg" / f"{module}.py").read_text(), cached=True)
    return tmp_path


def _qlint(repo: Path, *args: str, stdin: str | None = None) -> list[tuple]:
    found = json_findings(repo, *args, stdin=stdin)
    return sorted(
        (os.path.relpath(d["filename"], repo), d["location"]["row"], d["location"]["column"], d["code"], d["message"])
        for d in found
    )


def _buffer(repo: Path, module: str, text: str, cached: bool) -> list[tuple]:
    cache = ("--cache-dir", "cache") if cached else ("--no-cache",)
    return _qlint(repo, *cache, "--stdin-filename", f"pkg/{module}.py", "-", stdin=text)


def _file(repo: Path, module: str, cached: bool) -> list[tuple]:
    return _qlint(repo, *(("--cache-dir", "cache") if cached else ("--no-cache",)), f"pkg/{module}.py")


def _rows(found: list[tuple]) -> list[tuple[int, str]]:
    return [(row, code) for _, row, _, code, _ in found]


@pytest.mark.parametrize(
    ("module", "old", "new", "before", "after"),
    [
        # The helper the other function calls no longer sets eval mode: its capture is reported.
        (
            "flows",
            "def set_mode(model):\n    model.eval()",
            "def set_mode(model):\n    model.train()",
            [],
            [(26, "QL201")],
        ),
        # A helper that no longer runs the prepared model: its caller converts it uncalibrated.
        ("calib", "        model(x)", "        print(x)", [], [(12, "QL204")]),
        # Lines typed above the capture: the finding moves with it, the rest stays.
        (
            "flows",
            "def set_mode(model):\n    model.eval()",
            "def set_mode(model):\n    model.train()\n    model.train()\n    model.train()",
            [],
            [(28, "QL201")],
        ),
        # A test class's helper method no longer sets eval mode: the test method's capture.
        (
            "methods",
            "    def _ready(self, model):\n        model.eval()",
            "    def _ready(self, model):\n        model.train()",
            [],
            [(24, "QL201")],
        ),
        # The same of a helper written inside the function that calls it.
        (
            "methods",
            "    def ready(model):\n        model.eval()",
            "    def ready(model):\n        model.train()",
            [],
            [(34, "QL201")],
        ),
    ],
)
def test_an_edited_buffer_gets_what_a_run_without_the_cache_gets(repo, module, old, new, before, after):
    text = (repo / "pkg" / f"{module}.py").read_text()
    assert old in text
    assert _rows(_buffer(repo, module, text, cached=True)) == before
    edited = text.replace(old, new)
    cold = _buffer(repo, module, edited, cached=False)
    assert _rows(cold) == after
    assert _buffer(repo, module, edited, cached=True) == cold
    # And back: the finding goes again, though the cache has now seen the edited buffer.
    again = _buffer(repo, module, text, cached=True)
    assert again == _buffer(repo, module, text, cached=False)
    assert _rows(again) == before


@pytest.mark.parametrize(
    ("edited", "old", "new", "checked", "before", "after"),
    [
        # A helper of another module no longer sets eval mode: the capture after it is reported.
        ("helpers", "    model.eval()\n", "    model.train()\n", "flows", [], [(33, "QL201")]),
        # The base class of another module's class, in a third module, no longer sets eval mode.
        ("bases", "        model.eval()\n", "        model.train()\n", "flows", [], [(40, "QL201")]),
        # Another module's constant becomes the packet: the matcher comparing with it is reported.
        ("ops", "dequantize_per_tensor.default", "dequantize_per_tensor", "match", [], [(6, "QL101")]),
    ],
)
def test_an_edit_of_another_module_reaches_the_cached_check(repo, edited, old, new, checked, before, after):
    path = repo / "pkg" / f"{edited}.py"
    text = path.read_text()
    checked_text = (repo / "pkg" / f"{checked}.py").read_text()
    assert _rows(_file(repo, checked, cached=True)) == before
    # Written as a save leaves it (modified just now: its stat is not trusted, its text is
    # hashed), then with a modification time long past, as a checkout leaves it (stat trusted).
    for write in (path.write_text, lambda t: old_file(path, t)):
        write(text.replace(old, new))
        cold = _file(repo, checked, cached=False)
        assert _rows(cold) == after
        assert _file(repo, checked, cached=True) == cold
        assert _buffer(repo, checked, checked_text, cached=True) == _buffer(repo, checked, checked_text, cached=False)
        assert _rows(_buffer(repo, checked, checked_text, cached=True)) == after
        write(text)
        assert _rows(_file(repo, checked, cached=True)) == _rows(_file(repo, checked, cached=False)) == before
        assert _rows(_buffer(repo, checked, checked_text, cached=True)) == before


def test_a_keystroke_keeps_the_findings_of_the_file_on_disk(repo):
    """bench_trees.py's edited one-file check: a whole-tree run filled the cache, then each
    buffer types one statement into another function body of a module with findings (a fresh
    local: nothing reads it). Warm or cold, the findings stay those of the file on disk."""
    sys.path.insert(0, os.path.join(_SOURCE, "benchmarks"))
    from keystroke_edits import keystroke_edits

    path = repo / "pkg" / "methods.py"
    text = METHODS.replace("        model.eval()\n        return model", "        model.train()\n        return model")
    old_file(path, text)
    _qlint(repo, "--cache-dir", "cache", "pkg")
    on_disk = _file(repo, "methods", cached=False)
    assert _rows(on_disk) == [(24, "QL201")]
    buffers = keystroke_edits(text, 4)
    assert len({*buffers, text}) == 5
    for buffer in buffers:
        warm = _buffer(repo, "methods", buffer, cached=True)
        assert warm == _buffer(repo, "methods", buffer, cached=False) == on_disk


def test_a_buffer_s_check_reads_what_the_tree_run_kept(tmp_path):
    """The buffer stands in for the file and its check for `qlint check FILE`: it reads the
    results' and summaries' store the whole-tree run kept (one cache key), rather than a
    store of its own in which it summarised every module it imports again."""
    (tmp_path / ".git").mkdir()
    old_package(tmp_path, flows=FLOWS, helpers=HELPERS, readied=READIED, bases=BASES)
    _qlint(tmp_path, "--cache-dir", "cache", "pkg")
    stores = sorted(p.name for p in (tmp_path / "cache").glob("*/*"))
    assert any(s.endswith(".summaries") for s in stores)
    text = FLOWS.replace("def set_mode(model):\n    model.eval()", "def set_mode(model):\n    model.train()")
    warm = _buffer(tmp_path, "flows", text, cached=True)
    assert warm == _buffer(tmp_path, "flows", text, cached=False) and _rows(warm) == [(26, "QL201")]
    assert sorted(p.name for p in (tmp_path / "cache").glob("*/*")) == stores

"""benchmarks/parse_census.py counts each parse under the rule and site that asked for it."""

from __future__ import annotations

import ast
import builtins
import importlib.util
from pathlib import Path

from qlint import registry
from qlint.analysis import forked_call
from tests.conftest import write_package


def _census():
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "parse_census.py"
    spec = importlib.util.spec_from_file_location("parse_census", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_checked_file_and_an_imported_summary_are_counted_apart(tmp_path, capsys, monkeypatch):
    consts = "import torch\n\nDQ = torch.ops.quantized_decomposed.dequantize_per_tensor\n"
    user = "from pkg.consts import DQ\n\n\ndef f(n):\n    return n.target == DQ\n"
    pkg = write_package(tmp_path, "pkg", consts=consts, user=user)
    monkeypatch.chdir(tmp_path)
    real = (ast.parse, builtins.open, forked_call.call, registry.DeferredRule.check)
    assert _census().main([str(pkg)]) == 0
    assert (ast.parse, builtins.open, forked_call.call, registry.DeferredRule.check) == real  # put back
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first.startswith("parses ") and " of 2 files" in first
    # user.py parsed for its check; consts.py for QL101's question about DQ (its summary).
    assert "[run] engine.parse_module" in err
    assert "[QL101 check] analysis/names/project._parse" in err

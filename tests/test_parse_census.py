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
    assert "[QL101 check] analysis/names/module_entries.summarise" in err
    assert "MiB of text and 0.00 MiB of line breaks" in err  # parsed whole, at their rows


def test_a_module_parsed_in_pieces_is_one_whole_parse(tmp_path, capsys, monkeypatch):
    # A module over `piecewise_parse`'s size, summarised for QL101's question about DQ: one
    # whole parse (of several pieces), at the site that asked for it. Checked after the user
    # (`zconsts`), its summary's tree is kept for its check (`tree_handover`): parsed in pieces.
    consts = "import torch\n\nDQ = torch.ops.quantized_decomposed.dequantize_per_tensor\n" + "".join(
        f"\n\ndef filler_{i}(x):\n    return x + {i}\n" for i in range(2500)
    )
    user = "from pkg.zconsts import DQ\n\n\ndef f(n):\n    return n.target == DQ\n"
    pkg = write_package(tmp_path, "pkg", zconsts=consts, user=user)
    monkeypatch.chdir(tmp_path)
    assert _census().main([str(pkg)]) == 0
    err = capsys.readouterr().err
    assert "1  [QL101 check] analysis/names/module_entries.summarise" in err
    # (The statement binding DQ is parsed alone besides: the module is too large for
    # `recent_trees` to keep the summary's tree for it.)
    assert ", 2 of them whole modules, of 2 files (0 parsed whole more than once)" in err.splitlines()[0]
    assert "] analysis/names/piecewise_parse" not in err

"""The bundled op table is read at its first use (`OpTable.deferred`), not at the start of
every check: most files ask it nothing, and decoding it cost each `qlint check -` about as
much as the rest of its start-up past the imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from qlint.optable import DEFAULT_PATH, OpInfo, OpTable, load_op_table

ROOT = Path(__file__).resolve().parent.parent


def _table(path: Path, overloads: list[str]) -> Path:
    layers = {"base": {"meta": {"features": {"f": len(overloads)}}, "ops": {"qd": {"q": {"overloads": overloads}}}}}
    path.write_text(json.dumps({"format": 1, "layers": layers}))
    return path


def test_a_deferred_table_answers_as_one_read_at_once():
    eager, deferred = load_op_table(DEFAULT_PATH), OpTable.deferred(DEFAULT_PATH)
    assert not deferred.is_loaded
    assert deferred.lookup("aten", "add") == eager.lookup("aten", "add")
    assert deferred.is_loaded
    assert deferred.lookup("quantized_decomposed", "dequantize_per_tensor") == eager.lookup(
        "quantized_decomposed", "dequantize_per_tensor"
    )
    assert deferred.namespaces() == eager.namespaces()
    assert len(deferred) == len(eager)
    assert deferred.meta == eager.meta


def test_its_meta_first_reads_it_too(tmp_path):
    deferred = OpTable.deferred(_table(tmp_path / "t.json", ["default", "out"]))
    assert deferred.feature("f") == 2
    assert deferred.lookup("qd", "q") == OpInfo("qd", "q", ("default", "out"))


def test_the_file_is_read_at_first_use_not_when_deferred(tmp_path):
    path = _table(tmp_path / "t.json", ["default"])
    deferred = OpTable.deferred(path)
    _table(path, ["default", "tensor"])
    assert deferred.lookup("qd", "q").overloads == ("default", "tensor")
    missing = OpTable.deferred(tmp_path / "absent.json")  # no error until it is used
    with pytest.raises(OSError):
        missing.lookup("qd", "q")


def test_loaded_reads_it_now():
    deferred = OpTable.deferred(DEFAULT_PATH)
    assert deferred.loaded() is deferred and deferred.is_loaded


def test_default_table_is_deferred_and_shared():
    assert load_op_table() is load_op_table()
    assert load_op_table().lookup("torchao", "dequantize_affine") is not None


def test_a_check_that_resolves_no_op_never_reads_it():
    # A fresh interpreter: the table of this one may have been read by other tests.
    code = """
import textwrap
from qlint.engine import check_source
from qlint.optable import load_op_table
from qlint.settings import Settings

capture = textwrap.dedent('''
    import torch
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

    def calibrate(model, quantizer, example):
        ep = torch.export.export(model, example)
        return prepare_pt2e(ep.module(), quantizer)
''')
first = check_source(capture, "capture.py", Settings())
assert [d.code for d in first.diagnostics] == ["QL201"], first.diagnostics
assert not load_op_table().is_loaded
matcher = textwrap.dedent('''
    import torch

    def is_dq(node):
        return node.target == torch.ops.quantized_decomposed.dequantize_per_tensor
''')
second = check_source(matcher, "matcher.py", Settings())
assert [d.code for d in second.diagnostics] == ["QL101"], second.diagnostics
assert load_op_table().is_loaded
"""
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_threads_asking_at_once_all_get_the_table(tmp_path):
    import threading

    deferred = OpTable.deferred(_table(tmp_path / "t.json", ["default", "out"]))
    start, answers = threading.Barrier(8), []

    def ask():
        start.wait()
        answers.append(deferred.lookup("qd", "q"))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [OpInfo("qd", "q", ("default", "out"))] * 8


def test_a_failed_read_is_tried_again(tmp_path):
    path = tmp_path / "later.json"
    deferred = OpTable.deferred(path)
    with pytest.raises(OSError):
        deferred.lookup("qd", "q")
    _table(path, ["default"])
    assert deferred.lookup("qd", "q") == OpInfo("qd", "q", ("default",))

"""The op table is what rules believe about torch without importing it, so pin the beliefs.

The facts below are the ones DESIGN.md builds rules and fixes on; if a regenerated table
ever contradicts them, a fix that was safe has become wrong and we want to hear about it.
The drift test reruns the generator against the installed torch/torchao(/executorch).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from qlint.optable import DEFAULT_PATH, OpInfo, OpTable, load_op_table

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = ROOT / "scripts" / "generate_op_table.py"


@pytest.fixture(scope="module")
def table() -> OpTable:
    return load_op_table()


def _info(table: OpTable, dotted: str) -> OpInfo:
    ns, name = dotted.split(".")
    info = table.lookup(ns, name)
    assert info is not None, dotted
    return info


def test_loader_never_imports_torch():
    code = (
        "import sys, qlint.optable as o; t = o.load_op_table(); "
        "assert t.lookup('aten', 'add') is not None; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('torch', 'torchao', 'executorch')]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_default_table_is_cached():
    assert load_op_table() is load_op_table()


def test_table_has_the_namespaces(table):
    assert {"aten", "quantized_decomposed", "torchao"} <= table.namespaces()
    assert len(table.op_names("aten")) > 1000
    assert table.meta["versions"]["torch"]
    assert table.meta["format"] == 1


@pytest.mark.parametrize(
    "op",
    [
        "torchao.quantize_affine",
        "torchao.dequantize_affine",
        "torchao.choose_qparams_affine",
    ],
)
def test_torchao_ops_have_only_default(table, op):
    info = _info(table, op)
    assert info.overloads == ("default",)
    assert info.carried == ("default",)
    assert info.single_carried == "default"


@pytest.mark.parametrize(
    "op",
    [
        "quantized_decomposed.quantize_per_channel",
        "quantized_decomposed.dequantize_per_channel",
        "quantized_decomposed.quantize_per_token",
        "quantized_decomposed.dequantize_per_token",
        "aten.linear",
        "aten.relu",
        "aten.hardtanh",
        "aten.cat",
        "aten.convolution",
        "aten.batch_norm",
        "aten.dropout",
    ],
)
def test_single_default_ops(table, op):
    info = _info(table, op)
    assert info.carried == ("default",)
    # ExecuTorch may add `.out` overloads; nothing else a graph could carry.
    assert set(info.overloads) - {"default"} <= {"out", "Tensor_out"}


@pytest.mark.parametrize(
    ("op", "overload"),
    [
        ("quantized_decomposed.choose_qparams", "tensor"),
        ("aten.flatten", "using_ints"),
        ("aten.select", "int"),
        ("aten.transpose", "int"),
        ("aten.softmax", "int"),
        ("aten.sym_size", "int"),
        ("aten.conv_transpose2d", "input"),
    ],
)
def test_single_non_default_overload(table, op, overload):
    info = _info(table, op)
    assert info.carried == (overload,)
    assert info.evidence == "probe"


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        ("quantized_decomposed.quantize_per_tensor", {"default", "tensor"}),
        ("quantized_decomposed.dequantize_per_tensor", {"default", "tensor"}),
        ("aten.conv2d", {"default", "padding"}),
        ("aten.mean", {"default", "dim"}),
        ("aten.clamp", {"default", "Tensor"}),
        ("aten.view", {"default", "dtype"}),
        ("aten.squeeze", {"default", "dim", "dims"}),
        # The forms probe: each call form of an op that picks another overload.
        ("aten.arange", {"default", "start", "start_step"}),
        ("aten.sum", {"default", "dim_IntList"}),
        ("aten.max", {"default", "dim"}),
        ("aten.div", {"Tensor", "Tensor_mode"}),
        ("aten.eq", {"Scalar", "Tensor"}),
        ("aten.conv1d", {"default", "padding"}),
    ],
)
def test_several_overloads_in_real_graphs(table, op, expected):
    info = _info(table, op)
    assert set(info.carried) == expected
    assert info.evidence == "probe"
    assert info.single_carried is None  # no blind `.default` fix


def test_forms_probe_records_symbolic_sizes():
    # `arange(x.size(0))` with a dynamic first dimension: export records `sym_size.int` and
    # an `arange.default` of it.
    aten = json.loads(DEFAULT_PATH.read_text())["layers"]["base"]["ops"]["aten"]
    assert "export_dynamic" in aten["arange"]["flows"]["default"]
    assert aten["sym_size"]["carried"] == ["int"]


def test_qdq_per_tensor_overloads(table):
    for op in ("quantize_per_tensor", "dequantize_per_tensor"):
        info = table.lookup("quantized_decomposed", op)
        assert {"default", "tensor", "tensor2"} <= set(info.overloads)


@pytest.mark.parametrize("op", ["add", "mul", "sub"])
def test_arithmetic_carries_tensor_not_default(table, op):
    info = table.lookup("aten", op)
    assert info.carried == ("Tensor",)
    assert "default" in info.overloads  # exists, but it is TorchScript's Scalar+Scalar
    assert "default" in info.jit_only


def test_lookup_misses(table):
    assert table.lookup("aten", "no_such_op") is None
    assert table.lookup("no_such_ns", "add") is None
    assert not table.is_overload("aten", "add", "overloads")
    assert table.is_overload("aten", "add", "Tensor")
    assert ("aten", "add") in table


def test_qualified_and_resolve(table):
    info = table.lookup("torchao", "dequantize_affine")
    assert info.qualified() == "torch.ops.torchao.dequantize_affine"
    assert table.resolve("torch.ops.torchao.dequantize_affine.default") == (info, "default")
    assert table.resolve("torchao.dequantize_affine") == (info, None)
    assert table.resolve("torch.ops.torchao.dequantize_affine.Tensor") is None
    assert table.resolve("torch.ops.aten") is None


def test_features_describe_the_dependencies(table):
    assert table.feature("no.such.feature", "dflt") == "dflt"
    assert table.feature("torchao.quantization.pt2e.move_exported_model_to_eval") is True
    assert table.feature("torch.ao.quantization.quantize_pt2e") is False
    assert table.feature("torchao.AffineQuantizedObserverBase.convert_inserts_packets") is True
    if "executorch" in table.meta["layers"]:
        fields = table.feature("executorch.export.QuantizationRecipe.fields")
        assert "pre_prepare_passes" in fields
        preserve = table.feature("executorch.export.QuantizationRecipe.preserve_ops")
        assert preserve == ("preserve_ops" in fields)


def test_layers_merge(tmp_path):
    data = {
        "format": 1,
        "layers": {
            "base": {
                "meta": {"versions": {"torch": "1"}, "features": {"a": 1}},
                "ops": {"qd": {"q": {"overloads": ["default"], "carried": ["default"]}}},
            },
            "executorch": {
                "meta": {"versions": {"executorch": "2"}, "features": {"b": 2}},
                "ops": {"qd": {"q": {"overloads": ["out"]}, "r": {"overloads": ["x"]}}},
            },
        },
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    t = load_op_table(path)
    assert t.lookup("qd", "q") == OpInfo("qd", "q", ("default", "out"), ("default",))
    assert t.lookup("qd", "r").carried == ()
    assert t.meta["versions"] == {"torch": "1", "executorch": "2"}
    assert (t.feature("a"), t.feature("b")) == (1, 2)
    assert t.meta["layers"] == ["base", "executorch"]


def test_table_is_small_and_one_op_per_line():
    text = DEFAULT_PATH.read_text()
    assert len(text.encode()) < 400_000
    assert text.count("\n") > 1000


def test_generator_reports_no_drift():
    pytest.importorskip("torch")
    pytest.importorskip("torchao")
    proc = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr

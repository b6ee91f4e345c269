"""QL101 on matchers keyed on the packet of an op the project defines itself and inserts only as
that packet (`own_op_matchers`; issue 14, pytorch-shir's FPGA backend): a `Library` of the
project's own namespace declares an instruction, instruction selection inserts it as its packet,
and the emission pass dispatches on the packet. No graph holds the op other than as that
packet. Loud again when a module of the package spells an overload of the op (directly, in a
string, or through an alias of `torch.ops.<ns>`), calls it, when no module defines it or a
library of another namespace does, when nothing inserts it, and for an op qlint's table knows."""

from __future__ import annotations

import pytest

from tests.conftest import lint, write_package

OPS = """\
import torch
from torch.library import Library

accel_lib = Library("myaccel", "DEF")
accel_lib.define("fused_conv(Tensor x, Tensor w) -> Tensor")
"""

ISEL = """\
import torch
import torch.fx as fx


def select(gm: fx.GraphModule):
    graph = gm.graph
    for n in graph.nodes:
        if n.op == "call_function" and n.target == torch.ops.aten.convolution.default:
            with graph.inserting_before(n):
                fused = graph.call_function(torch.ops.myaccel.fused_conv, (n.args[0], n.args[1]))
            n.replace_all_uses_with(fused)
            graph.erase_node(n)
    gm.recompile()
"""

EMIT = """\
import torch
import torch.fx as fx


def emit(gm: fx.GraphModule):
    program = []
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target == torch.ops.myaccel.fused_conv:
            program.append(n.name)
    return program
"""

BACKEND = """\
from pkg.emit import emit
from pkg.isel import select


def compiler(gm, example_inputs):
    select(gm)
    emit(gm)
    return gm.forward
"""


def _emit_rows(tmp_path, ops=OPS, isel=ISEL, emit=EMIT, **extra) -> list[int]:
    pkg = write_package(tmp_path, "pkg", ops=ops, isel=isel, emit=emit, backend=BACKEND, **extra)
    path = pkg / "emit.py"
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=("QL101",))]


def test_quiet_on_own_library_op_inserted_as_packet(tmp_path):
    assert _emit_rows(tmp_path) == []


def test_quiet_on_op_defined_by_qualified_name(tmp_path):
    ops = 'import torch\n\ntorch.library.define("myaccel::fused_conv(Tensor x, Tensor w) -> Tensor")\n'
    assert _emit_rows(tmp_path, ops=ops) == []


def test_quiet_on_instruction_assigned_as_target(tmp_path):
    isel = ISEL.replace(
        "            with graph.inserting_before(n):\n"
        "                fused = graph.call_function(torch.ops.myaccel.fused_conv, (n.args[0], n.args[1]))\n"
        "            n.replace_all_uses_with(fused)\n"
        "            graph.erase_node(n)\n",
        "            n.target = torch.ops.myaccel.fused_conv\n",
    )
    assert "n.target = torch.ops.myaccel.fused_conv" in isel
    assert _emit_rows(tmp_path, isel=isel) == []


@pytest.mark.parametrize(
    "lowering",
    [
        "import torch\n\nLOWERINGS = {torch.ops.myaccel.fused_conv.default: 'conv'}\n",
        "import torch\n\nacc = torch.ops.myaccel\nLOWERINGS = {acc.fused_conv.default: 'conv'}\n",
        "NAMES = {'myaccel::fused_conv.default': 'conv'}\n",
    ],
    ids=["overload", "overload-through-alias", "overload-in-a-string"],
)
def test_loud_when_the_package_spells_an_overload(tmp_path, lowering):
    assert _emit_rows(tmp_path, lowering=lowering) == [8]


def test_loud_when_the_package_calls_the_op(tmp_path):
    model = "import torch\n\n\ndef forward(x, w):\n    return torch.ops.myaccel.fused_conv(x, w)\n"
    assert _emit_rows(tmp_path, model=model) == [8]


def test_loud_when_no_module_defines_the_op(tmp_path):
    assert _emit_rows(tmp_path, ops="import torch\n") == [8]


def test_loud_when_another_namespace_defines_an_op_of_that_name(tmp_path):
    assert _emit_rows(tmp_path, ops=OPS.replace('Library("myaccel"', 'Library("other"')) == [8]


def test_loud_when_nothing_inserts_the_packet(tmp_path):
    isel = ISEL.replace("torch.ops.myaccel.fused_conv, (", "torch.ops.myaccel.fused_conv.default, (")
    assert _emit_rows(tmp_path, isel=isel) == [8]


def test_loud_for_an_op_the_table_knows(tmp_path):
    emit = EMIT.replace("torch.ops.myaccel.fused_conv", "torch.ops.aten.relu")
    isel = ISEL.replace("torch.ops.myaccel.fused_conv", "torch.ops.aten.relu")
    ops = OPS.replace('"myaccel"', '"aten"').replace("fused_conv(", "relu(")
    assert _emit_rows(tmp_path, ops=ops, isel=isel, emit=emit) == [8]

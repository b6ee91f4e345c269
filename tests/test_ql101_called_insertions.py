"""QL101 on a matcher that searches the graph a call of the project returned, when that call runs
the project's own insertion of the packet (`called_insertions`; issue 14, apple/coreai-optimization:
`quantizer.finalize(...).graph.find_nodes(target=coreai.quantize)` finds the nodes the
package's `prepare_for_mlir_export` inserted as that packet). Loud for a packet the package never
inserts, a call that does not reach the insertion, a graph from anywhere else (a parameter, a
re-export of the result, a node of another graph compared), an op the op table knows (a capture
puts its overloads beside), and a matcher that is neither a sink call on the result's graph nor
a comparison with the target of one of its nodes."""

from __future__ import annotations

from tests.conftest import lint, write_package

PASSES = """\
import torch
from torch.ops import coreai


def _replace(gm, node):
    with gm.graph.inserting_before(node):
        q = gm.graph.call_function(coreai.quantize, (node.args[0],))
        r = gm.graph.call_function(torch.ops.aten.relu, (q,))
    node.replace_all_uses_with(r)
    gm.graph.erase_node(node)


def prepare_for_export(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    for node in list(gm.graph.nodes):
        if node.op == "call_module":
            _replace(gm, node)
    gm.recompile()
    return gm


def prepare(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    gm.recompile()
    return gm
"""

QUANTIZER = """\
from pkg.passes import prepare, prepare_for_export


class _GraphQuantizer:
    def prepare(self, gm):
        return prepare(gm)

    def finalize(self, gm):
        return prepare_for_export(gm)


class Quantizer:
    def __init__(self):
        self._quantizer = _GraphQuantizer()

    def prepare(self, gm):
        return self._quantizer.prepare(gm)

    def finalize(self, gm):
        return self._quantizer.finalize(gm)
"""

TEST = """\
import torch
from torch.ops import coreai

from pkg.passes import prepare, prepare_for_export
from pkg.quantizer import Quantizer


def _exported():
    return torch.export.export(torch.nn.Linear(2, 2), (torch.randn(1, 2),)).module()


def test_finalize(gm=None):
{body}
"""


def _rows(tmp_path, body: str, passes: str = PASSES) -> list[int]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    write_package(tmp_path, "pkg", passes=passes, quantizer=QUANTIZER)
    tests = write_package(tmp_path, "tests", test_quantizer=TEST.format(body=body.rstrip("\n")))
    path = tests / "test_quantizer.py"
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=("QL101",))]


def test_quiet_on_the_graph_a_called_inserting_function_returns(tmp_path):
    body = """\
    out = prepare_for_export(_exported())
    assert out.graph.find_nodes(op="call_function", target=coreai.quantize)
"""
    assert _rows(tmp_path, body) == []


def test_quiet_through_a_method_of_a_project_class_reaching_the_insertion(tmp_path):
    body = """\
    quantizer = Quantizer()
    finalized = quantizer.finalize(_exported())
    assert finalized.graph.find_nodes(op="call_function", target=coreai.quantize)
"""
    assert _rows(tmp_path, body) == []


def test_loud_on_a_packet_the_package_never_inserts(tmp_path):
    body = """\
    out = prepare_for_export(_exported())
    assert out.graph.find_nodes(op="call_function", target=coreai.dequantize)
"""
    assert _rows(tmp_path, body) == [14]


def test_loud_when_the_called_function_does_not_reach_the_insertion(tmp_path):
    body = """\
    out = Quantizer().prepare(_exported())
    assert out.graph.find_nodes(op="call_function", target=coreai.quantize)
    quantizer = Quantizer()
    prepared = quantizer.prepare(_exported())
    assert prepared.graph.find_nodes(op="call_function", target=coreai.quantize)
"""
    assert _rows(tmp_path, body) == [14, 17]


def test_loud_on_a_graph_from_anywhere_else(tmp_path):
    body = """\
    assert gm.graph.find_nodes(op="call_function", target=coreai.quantize)
    out = prepare_for_export(_exported())
    out = torch.export.export(out, (torch.randn(1, 2),)).module()
    assert out.graph.find_nodes(op="call_function", target=coreai.quantize)
"""
    assert _rows(tmp_path, body) == [13, 16]


def test_loud_on_an_op_the_table_knows(tmp_path):
    body = """\
    out = prepare_for_export(_exported())
    assert out.graph.find_nodes(op="call_function", target=torch.ops.aten.relu)
"""
    assert _rows(tmp_path, body) == [14]


def test_quiet_on_comparisons_with_targets_of_the_returned_graphs_nodes(tmp_path):
    body = """\
    out = prepare_for_export(_exported())
    assert any(n.target == coreai.quantize for n in out.graph.nodes)
    assert [n for n in out.graph.find_nodes(op="call_function") if coreai.quantize is n.target]
    for node in list(out.graph.nodes):
        if node.target != coreai.quantize:
            continue
        assert node.target in (coreai.quantize, torch.ops.aten.relu.default)
"""
    assert _rows(tmp_path, body) == []


def test_loud_on_comparisons_with_targets_of_other_nodes(tmp_path):
    body = """\
    out = prepare_for_export(_exported())
    assert any(n.target == coreai.quantize for n in gm.graph.nodes)
    for node in out.graph.nodes:
        node = node.next
        assert node.target == coreai.quantize
    other = _exported()
    assert [m for n in out.graph.nodes for m in other.graph.nodes if m.target == coreai.quantize]
    prepared = Quantizer().prepare(_exported())
    assert any(n.target == coreai.quantize for n in prepared.graph.nodes)
    assert [n for n in out.graph.nodes if any(n.target == coreai.quantize for n in gm.graph.nodes)]
    assert [n for n in gm.graph.nodes if n.target in {coreai.quantize}]
"""
    assert _rows(tmp_path, body) == [14, 17, 19, 21, 22, 23]


def test_loud_when_the_insertion_is_another_packages(tmp_path):
    # The package the test calls inserts nothing; a sibling package inserts the packet.
    write_package(tmp_path, "other", passes=PASSES)
    passes = PASSES.replace("coreai.quantize", "torch.ops.aten.neg.default")
    body = """\
    out = prepare_for_export(_exported())
    assert out.graph.find_nodes(op="call_function", target=coreai.quantize)
"""
    assert _rows(tmp_path, body, passes=passes) == [14]


def test_quiet_when_the_call_runs_the_other_packages_insertion(tmp_path):
    write_package(tmp_path, "other", passes=PASSES)
    body = """\
    from other.passes import prepare_for_export as other_finalize

    out = other_finalize(_exported())
    assert out.graph.find_nodes(op="call_function", target=coreai.quantize)
"""
    assert _rows(tmp_path, body) == []


METHOD_PASSES = """\
import torch
from torch.ops import coreai


class _Inserter:
    def _insert(self, gm, node):
        with gm.graph.inserting_before(node):
            q = gm.graph.call_function(coreai.quantize, (node.args[0],))
        node.replace_all_uses_with(q)
        gm.graph.erase_node(node)

    def run(self, gm):
        for node in list(gm.graph.nodes):
            if node.op == "call_module":
                self._insert(gm, node)
        gm.recompile()
        return gm


def prepare_for_export(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    return _Inserter().run(gm)


def prepare(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    gm.recompile()
    return gm
"""


def test_quiet_when_the_insertion_is_in_a_method_the_call_reaches(tmp_path):
    body = """\
    out = prepare_for_export(_exported())
    assert out.graph.find_nodes(op="call_function", target=coreai.quantize)
    assert any(n.target == coreai.quantize for n in out.graph.nodes)
    quantizer = Quantizer()
    finalized = quantizer.finalize(_exported())
    assert finalized.graph.find_nodes(op="call_function", target=coreai.quantize)
"""
    assert _rows(tmp_path, body, passes=METHOD_PASSES) == []


def test_loud_when_the_call_does_not_reach_the_inserting_method(tmp_path):
    body = """\
    out = prepare(_exported())
    assert out.graph.find_nodes(op="call_function", target=coreai.quantize)
    quantizer = Quantizer()
    prepared = quantizer.prepare(_exported())
    assert any(n.target == coreai.quantize for n in prepared.graph.nodes)
"""
    assert _rows(tmp_path, body, passes=METHOD_PASSES) == [14, 17]

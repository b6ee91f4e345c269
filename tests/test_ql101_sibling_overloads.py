"""QL101 and a packet a table holds beside overloads of its own op (issue 14, items 9 and 13).

FlatFlow (9rum/flatflow at 3d716be) serializes exported graphs through a table looked up
exactly, mapping `aten.arange` to its ARANGE code beside `aten.arange.start` to ARANGE_START.
The packet stands for the other forms, and exported graphs carry `aten.arange.default` for
`arange(n)` and `.start_step` for `arange(a, b, s)` (the op table's probe records all three):
no key matches those. Quiet still: a packet beside its overloads in a set, a list or a
comparison, or mapped to the same value (an alias of them: torch_xla's list of view ops holds
`aten.view` beside `view.default` and reads the shape `.default` takes, not `view.dtype`);
keys naming every overload graphs carry; the body's comparisons naming the rest; `sym_size`
beside `.int`; an op the probe has no record of; an edge dialect op; a table also looked up by
the target's packet; graphs normalised to packets.
"""

from __future__ import annotations

import pytest

from qlint.diagnostic import Applicability
from qlint.engine import check_source
from tests.conftest import fix, lint, settings_for

HEADER = """
import torch

aten = torch._ops.ops.aten

"""

FLATFLOW = """
OPS = {
    aten._to_copy.default: 1,
    aten.arange: 2,
    aten.arange.start: 3,
    aten.add.Tensor: 4,
}


def serialize(graph):
    return [OPS[n.target] for n in graph.nodes if n.target in OPS]
"""
EXACT = "    return [OPS[n.target] for n in graph.nodes if n.target in OPS]"


def ql101(body: str):
    return lint(HEADER + body, select=("QL101",))


def rows(body: str) -> list[int]:
    return [d.range.start.row for d in ql101(body)]


def test_flatflow_arange_beside_start_is_reported_with_what_it_leaves():
    (diag,) = ql101(FLATFLOW)
    assert diag.range.start.row == 9
    assert "leave `.default`, `.start_step` unmatched" in diag.message
    # One key cannot become two: the fix only says which to key on.
    assert diag.fix.applicability is Applicability.DISPLAY_ONLY
    assert "`aten.arange.default`, `aten.arange.start_step`" in diag.fix.message


def test_one_missing_overload_is_appended_unsafely():
    body = """
REDUCTIONS = {aten.sum: "sum", aten.sum.dim_IntList: "sum_dim"}


def code(node):
    return REDUCTIONS.get(node.target)
"""
    (diag,) = ql101(body)
    assert "leave `.default` unmatched" in diag.message
    assert diag.fix.applicability is Applicability.UNSAFE
    assert fix(HEADER + body, select=("QL101",)) == HEADER + body  # never safe
    fixed = fix(HEADER + body, select=("QL101",), unsafe=True)
    assert fixed == HEADER + body.replace('aten.sum: "sum"', 'aten.sum.default: "sum"')


def test_the_body_comparisons_narrow_what_the_table_leaves():
    body = FLATFLOW.replace(
        EXACT,
        "    for n in graph.nodes:\n"
        "        if n.target == aten.arange.default:\n"
        "            yield 2\n"
        "        elif n.target in OPS:\n"
        "            yield OPS[n.target]",
    )
    (diag,) = ql101(body)
    assert "leave `.start_step` unmatched" in diag.message


@pytest.mark.parametrize(
    "body",
    [
        # beside its overloads in a set or a comparison: it stands for the same nodes
        "def f(n):\n    return n.target in (aten.arange, aten.arange.start)\n",
        "def f(n):\n    return n.target == aten.arange or n.target == aten.arange.start\n",
        "def f(n):\n    return n.target in [aten.mean, aten.mean.dim]\n",
        # torch_xla's view ops: `view.dtype` (a bitcast) is no view of a shape
        """
def replace_dynamic_view(gm):
    VIEW_OPS = [aten.reshape, aten.reshape.default, aten.view, aten.view.default]
    for n in gm.graph.nodes:
        if n.target in VIEW_OPS:
            dims = n.args[1]
""",
        # a table mapping it to its overload's value: an alias
        "T = {aten.view: 'view', aten.view.default: 'view'}\n\n\ndef f(n):\n    return T.get(n.target)\n",
        # keys for every overload graphs carry
        "T = {aten.arange: 0, aten.arange.default: 1, aten.arange.start: 2, aten.arange.start_step: 3}\n\n\n"
        "def f(n):\n    return T.get(n.target)\n",
        # the only one graphs carry (`sym_size.default` is TorchScript's)
        "T = {aten.sym_size: 0, aten.sym_size.int: 1}\n\n\ndef f(n):\n    return T.get(n.target)\n",
        # an op the probe has no record of: a sibling graphs can carry still counts
        "T = {aten.bitwise_and: 0, aten.bitwise_and.Tensor: 1}\n\n\ndef f(n):\n    return T.get(n.target)\n",
        # the table's keys and the body's comparisons together name all three
        FLATFLOW.replace(
            EXACT,
            "    for n in graph.nodes:\n"
            "        if n.target == aten.arange.default or n.target == aten.arange.start_step:\n"
            "            yield 2\n"
            "        elif n.target in OPS:\n"
            "            yield OPS[n.target]",
        ),
        # looked up by the target's packet too (`packet_lookups`)
        FLATFLOW.replace(
            EXACT, "    return [OPS.get(n.target) or OPS.get(n.target.overloadpacket) for n in graph.nodes]"
        ),
    ],
)
def test_siblings_that_handle_what_the_packet_stands_for_are_quiet(body):
    assert rows(body) == []


def test_sibling_graphs_never_carry_leaves_the_plain_finding():
    # `sym_size.default` is TorchScript's: the packet is reported as if alone.
    (diag,) = ql101("T = {aten.sym_size: 0, aten.sym_size.default: 1}\n\n\ndef f(n):\n    return T.get(n.target)\n")
    assert "unmatched" not in diag.message


def test_edge_dialect_sibling_keeps_the_old_reading():
    src = """
        from executorch.exir.dialects._ops import ops as exir_ops

        T = {exir_ops.edge.aten.arange: 0, exir_ops.edge.aten.arange.start: 1}

        def f(n):
            return T.get(n.target)
        """
    assert lint(src, select=("QL101",)) == []


def test_graph_normalised_to_packets_is_quiet(tmp_path):
    (tmp_path / ".git").mkdir()
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "matcher.py").write_text(
        "import torch\n\naten = torch.ops.aten\nT = {aten.arange: 0, aten.arange.start: 1}\n\n\n"
        "def count(gm):\n    return [T.get(n.target) for n in gm.graph.nodes]\n"
    )
    (pkg / "backend.py").write_text(
        "from torch._functorch.compile_utils import strip_overloads\nfrom pkg import matcher\n\n\n"
        "def my_backend(gm, example_inputs):\n    strip_overloads(gm)\n    matcher.count(gm)\n    return gm.forward\n"
    )
    # The same table in a module no normalising backend calls stays reported.
    loud = pkg / "loud.py"
    loud.write_text((pkg / "matcher.py").read_text())
    assert _rows_of(pkg / "matcher.py") == []
    assert _rows_of(loud) == [4]


def _rows_of(path) -> list[int]:
    result = check_source(path.read_bytes(), str(path), settings_for(("QL101",)))
    return [d.range.start.row for d in result.diagnostics]


# -- what the finding hands `--runtime` (`qlint.runtime.checks.sibling_keys`) --------------


def test_the_evidence_names_the_keys_beside_the_packet_and_what_they_leave():
    (diag,) = ql101(FLATFLOW)
    assert diag.evidence["siblings"] == ["start"]
    assert diag.evidence["missed"] == ["default", "start_step"]
    assert diag.evidence["ops"] == [{"namespace": "aten", "op": "arange", "overload": None, "dialect": "aten"}]


def test_the_evidence_counts_the_body_comparisons_among_the_keys():
    body = FLATFLOW.replace(
        EXACT,
        "    for n in graph.nodes:\n"
        "        if n.target == aten.arange.default:\n"
        "            yield 2\n"
        "        elif n.target in OPS:\n"
        "            yield OPS[n.target]",
    )
    (diag,) = ql101(body)
    assert (diag.evidence["siblings"], diag.evidence["missed"]) == (["default", "start"], ["start_step"])


def test_a_packet_reported_as_if_alone_hands_no_siblings():
    (diag,) = ql101("T = {aten.sym_size: 0, aten.sym_size.default: 1}\n\n\ndef f(n):\n    return T.get(n.target)\n")
    assert (diag.evidence["siblings"], diag.evidence["missed"]) == ([], [])
    (alone,) = ql101("def f(n):\n    return n.target == aten.relu\n")
    assert (alone.evidence["siblings"], alone.evidence["missed"]) == ([], [])

"""QL101 and a packet compared beside overloads of its own op (issue 14, items 9 and 13).

FlatFlow (9rum/flatflow at 3d716be) serializes exported graphs through a table looked up
exactly, keyed on `aten.arange` beside `aten.arange.start`. The overload does not make the
packet's row right: exported graphs carry `aten.arange.default` for `arange(n)` and
`.start_step` for `arange(a, b, s)` too (the op table's probe records all three), and nothing
matches those. Quiet still: siblings naming every overload graphs carry (in the collection, in
the body's other comparisons, or both), `sym_size` beside `.int` (the only one graphs carry),
an op the probe has no record of (a sibling graphs can carry handles it, as before), an edge
dialect op, a table also looked up by the target's packet, and graphs normalised to packets.
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


def ql101(body: str):
    return lint(HEADER + body, select=("QL101",))


def rows(body: str) -> list[int]:
    return [d.range.start.row for d in ql101(body)]


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


def test_flatflow_arange_beside_start_is_reported_with_what_it_leaves():
    (diag,) = ql101(FLATFLOW)
    assert diag.range.start.row == 9
    assert "leave `.default`, `.start_step` unmatched" in diag.message
    # A dict key holds one expression: the fix only says what to add.
    assert diag.fix.applicability is Applicability.DISPLAY_ONLY
    assert "`aten.arange.default`, `aten.arange.start_step`" in diag.fix.message


@pytest.mark.parametrize(
    ("expr", "fixed"),
    [
        (
            "node.target == aten.arange or node.target == aten.arange.start",
            "node.target in (aten.arange.default, aten.arange.start_step) or node.target == aten.arange.start",
        ),
        (
            "node.target in [aten.arange, aten.arange.start]",
            "node.target in [aten.arange.default, aten.arange.start_step, aten.arange.start]",
        ),
        (
            "node.target in (aten.mean, aten.mean.dim)",
            "node.target in (aten.mean.default, aten.mean.dim)",
        ),
        (
            "node.target in {aten.div, aten.div.Tensor}",
            "node.target in {aten.div.Tensor_mode, aten.div.Tensor}",
        ),
    ],
)
def test_sibling_leaving_a_carried_overload_is_reported_and_fixed_unsafely(expr, fixed):
    body = f"def is_it(node):\n    return {expr}\n"
    (diag,) = ql101(body)
    assert diag.fix.applicability is Applicability.UNSAFE
    assert fix(HEADER + body, select=("QL101",)) == HEADER + body  # never safe
    assert fix(HEADER + body, select=("QL101",), unsafe=True) == HEADER + body.replace(expr, fixed)


def test_case_pattern_beside_a_sibling_is_fixed_with_the_missing_forms():
    body = """
def is_max(node):
    match node.target:
        case aten.max | aten.max.dim:
            return True
    return False
"""
    assert rows(body) == [9]
    fixed = fix(HEADER + body, select=("QL101",), unsafe=True)
    assert "case aten.max.default | aten.max.dim:" in fixed


@pytest.mark.parametrize(
    "body",
    [
        # every overload graphs carry, beside the packet
        "def f(n):\n    return n.target in (aten.arange, aten.arange.default, aten.arange.start, "
        "aten.arange.start_step)\n",
        "def f(n):\n    t = n.target\n    return t == aten.arange or t == aten.arange.default "
        "or t == aten.arange.start or t == aten.arange.start_step\n",
        # the only one graphs carry (`sym_size.default` is TorchScript's)
        "def f(n):\n    return n.target == aten.sym_size.int or n.target == aten.sym_size\n",
        # an op the probe has no record of: a sibling graphs can carry still counts
        "def f(n):\n    return n.target in (aten.bitwise_and, aten.bitwise_and.Tensor)\n",
        # the table's siblings and the body's comparisons together name all three
        FLATFLOW.replace(
            "    return [OPS[n.target] for n in graph.nodes if n.target in OPS]",
            "    for n in graph.nodes:\n"
            "        if n.target == aten.arange.default or n.target == aten.arange.start_step:\n"
            "            yield 2\n"
            "        elif n.target in OPS:\n"
            "            yield OPS[n.target]",
        ),
        # looked up by the target's packet too (`packet_lookups`)
        FLATFLOW.replace(
            "    return [OPS[n.target] for n in graph.nodes if n.target in OPS]",
            "    return [OPS.get(n.target) or OPS.get(n.target.overloadpacket) for n in graph.nodes]",
        ),
    ],
)
def test_siblings_that_handle_what_graphs_carry_are_quiet(body):
    assert rows(body) == []


def test_the_body_sibling_narrows_what_the_collection_leaves():
    body = FLATFLOW.replace(
        "    return [OPS[n.target] for n in graph.nodes if n.target in OPS]",
        "    for n in graph.nodes:\n"
        "        if n.target == aten.arange.default:\n"
        "            yield 2\n"
        "        elif n.target in OPS:\n"
        "            yield OPS[n.target]",
    )
    (diag,) = ql101(body)
    assert "leave `.start_step` unmatched" in diag.message


def test_sibling_graphs_never_carry_leaves_the_plain_finding():
    # `sym_size.default` is TorchScript's: the packet is reported as if alone.
    (diag,) = ql101("def f(n):\n    return n.target == aten.sym_size.default or n.target == aten.sym_size\n")
    assert "unmatched" not in diag.message


def test_edge_dialect_sibling_keeps_the_old_reading():
    src = """
        from executorch.exir.dialects._ops import ops as exir_ops

        def f(n):
            return n.target in (exir_ops.edge.aten.arange, exir_ops.edge.aten.arange.start)
        """
    assert lint(src, select=("QL101",)) == []


def test_graph_normalised_to_packets_is_quiet(tmp_path):
    (tmp_path / ".git").mkdir()
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "matcher.py").write_text(
        "import torch\n\naten = torch.ops.aten\n\n\ndef count(gm):\n"
        "    return sum(n.target in (aten.arange, aten.arange.start) for n in gm.graph.nodes)\n"
    )
    (pkg / "backend.py").write_text(
        "from torch._functorch.compile_utils import strip_overloads\nfrom pkg import matcher\n\n\n"
        "def my_backend(gm, example_inputs):\n    strip_overloads(gm)\n    matcher.count(gm)\n    return gm.forward\n"
    )
    # The same matcher in a module no normalising backend calls stays reported.
    loud = pkg / "loud.py"
    loud.write_text((pkg / "matcher.py").read_text())
    assert _rows_of(pkg / "matcher.py") == []
    assert _rows_of(loud) == [7]


def _rows_of(path) -> list[int]:
    result = check_source(path.read_bytes(), str(path), settings_for(("QL101",)))
    return [d.range.start.row for d in result.diagnostics]

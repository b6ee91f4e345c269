"""QL102 and a module whose own matchers find the inserted op by the packet's printed name
(the Gaudi bridge's fp8 replacer, whose view-removal pass compares `node.target.__name__`
with the bare `fp8_gemm_v2`; its HPU backend's host-call set of
`_pretty_print_target(node.target)` strings): the packet is what those consumers find, and
the overload would not be. Loud look-alikes: a name carrying an overload, an overload spelled
in the module, a module that consumes no node, a string of another op."""

from __future__ import annotations

import textwrap
from pathlib import Path

INSERT = """
    import torch


    def replace_mm(gm):
        for node in gm.graph.nodes:
            if is_node(node, "mm.default"):
                with gm.graph.inserting_before(node):
                    new = gm.graph.call_function(torch.ops.hpu.fp8_gemm, (node.args[0],))
                node.replace_all_uses_with(new)
                gm.graph.erase_node(node)
"""
ROW = 9  # the insertion's row (0-based)

IS_NODE = """

    def is_node(node, name):
        return node.op == "call_function" and node.target.__name__ == name
"""


def _rows(tmp_path: Path, text: str) -> list[int]:
    from qlint.engine import check_source
    from tests.conftest import settings_for

    (tmp_path / ".git").mkdir()
    path = tmp_path / "passes.py"
    path.write_text(textwrap.dedent(text))
    result = check_source(path.read_bytes(), str(path), settings_for(("QL102",)))
    assert not result.errors, result.errors
    return [d.range.start.row for d in result.diagnostics]


def _consumer(condition: str) -> str:
    return f"""

    def drop_views(gm):
        for node in gm.graph.nodes:
            if {condition}:
                gm.graph.erase_node(node)
"""


# -- quiet: the module's consumers key on the packet's printed name -----------------------------


def test_helper_compared_with_the_bare_name_is_quiet(tmp_path):
    text = INSERT + IS_NODE + _consumer('is_node(node, "fp8_gemm")')
    assert _rows(tmp_path, text) == []


def test_dunder_name_compared_directly_is_quiet(tmp_path):
    text = INSERT + IS_NODE + _consumer('node.target.__name__ == "fp8_gemm"')
    assert _rows(tmp_path, text) == []


def test_pretty_printed_target_in_a_module_set_is_quiet(tmp_path):
    text = (
        INSERT.replace("import torch\n", 'import torch\n\n    HOST = {"torch.ops.hpu.fp8_gemm"}\n')
        + IS_NODE
        + _consumer("node._pretty_print_target(node.target) in HOST")
    )
    assert _rows(tmp_path, text) == []


# -- loud ---------------------------------------------------------------------------------------


def test_no_consumer_is_loud(tmp_path):
    assert _rows(tmp_path, INSERT + IS_NODE) == [ROW]


def test_name_with_an_overload_is_loud(tmp_path):
    text = INSERT + IS_NODE + _consumer('is_node(node, "fp8_gemm.default")')
    assert _rows(tmp_path, text) == [ROW]


def test_packet_name_beside_an_overload_name_is_loud(tmp_path):
    text = INSERT + IS_NODE + _consumer('is_node(node, "fp8_gemm") or is_node(node, "fp8_gemm.scaled")')
    assert _rows(tmp_path, text) == [ROW]


def test_overload_spelled_in_the_module_is_loud(tmp_path):
    text = INSERT + IS_NODE + _consumer('is_node(node, "fp8_gemm") or node.target == torch.ops.hpu.fp8_gemm.default')
    assert _rows(tmp_path, text) == [ROW]


def test_other_op_name_is_loud(tmp_path):
    text = INSERT + IS_NODE + _consumer('is_node(node, "fp8_gemm_v2")')
    assert _rows(tmp_path, text) == [ROW]


def test_pretty_printed_name_of_another_namespace_is_loud(tmp_path):
    text = INSERT + IS_NODE + _consumer('node._pretty_print_target(node.target) == "torch.ops.aten.fp8_gemm"')
    assert _rows(tmp_path, text) == [ROW]


def test_module_that_consumes_no_node_is_loud(tmp_path):
    text = """
        import torch


        def add_gemm(gm, x):
            return gm.graph.call_function(torch.ops.hpu.fp8_gemm, (x,))


        def count(gm):
            return sum(1 for n in gm.graph.nodes if n.target.__name__ == "fp8_gemm")
    """
    assert _rows(tmp_path, text) == [6]

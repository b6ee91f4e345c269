"""QL102 and insertions made only where a node of the graph carries Dynamo's `grapharg` meta
(TensorRT's `replace_symint_with_sym_size`: a placeholder's `grapharg` source decides where a
`sym_size` packet goes). Only Dynamo's output graph carries the key, and whatever keys on
overloads traces that graph first; on any other graph the insertion never runs. Loud
look-alikes: the `else:` of the test, another meta key, `is None`, an `or`, a name rebound
after the lookup, a node of another graph, a loop variable rebound before the test, an
insertion handed the packet through a helper."""

from __future__ import annotations

from tests.conftest import lint


def rows(source: str) -> list[int]:
    return [d.range.start.row for d in lint(source, select=("QL102",))]


# The insertion sits on row 12 of every snippet built by `_pass`.
ROW = 12


def _pass(test: str, before: str = "pass", graph: str = "gm.graph", loop: str = "gm.graph.nodes") -> str:
    return f"""
import torch


def replace_symint_with_sym_size(gm, other):
    for node in {loop}:
        if node.op != "placeholder":
            continue
        {before}
        if {test}:
            with {graph}.inserting_after(node):
                size = {graph}.call_function(torch.ops.aten.sym_size, args=(node, 0))
            node.replace_all_uses_with(size)
    gm.recompile()
    return gm
"""


# -- quiet: only where the node carries Dynamo's meta -------------------------------------------


def test_insertion_under_a_bound_grapharg_lookup_is_quiet():
    assert rows(_pass("ga is not None", before='ga = node.meta.get("grapharg", None)')) == []


def test_insertion_under_a_grapharg_membership_test_is_quiet():
    assert rows(_pass('"grapharg" in node.meta')) == []


def test_insertion_under_a_conjunction_with_a_grapharg_lookup_is_quiet():
    assert rows(_pass('node.users and node.meta.get("grapharg") is not None')) == []


def test_insertion_under_a_subscripted_grapharg_is_quiet():
    assert rows(_pass("ga", before='ga = node.meta["grapharg"]')) == []


def test_insertion_deeper_under_the_guard_is_quiet():
    source = """
import torch


def replace_symint_with_sym_size(gm, sources):
    for node in list(gm.graph.nodes):
        ga = node.meta.get("grapharg", None)
        if ga is not None:
            for symint, (base, idx) in sources.items():
                if ga.source == base:
                    with gm.graph.inserting_after(node):
                        size = gm.graph.call_function(torch.ops.aten.sym_size, args=(node, idx))
                    symint.replace_all_uses_with(size)
    return gm
"""
    assert rows(source) == [], "the TensorRT shape"


# -- loud: the insertion may run on any graph ---------------------------------------------------


def test_insertion_without_a_guard_is_reported():
    assert rows(_pass("node.users")) == [ROW]


def test_insertion_in_the_else_of_the_guard_is_reported():
    source = _pass("ga is not None", before='ga = node.meta.get("grapharg", None)').replace(
        "        if ga is not None:\n", "        if ga is not None:\n            pass\n        else:\n"
    )
    assert rows(source) == [ROW + 2]


def test_insertion_under_another_meta_key_is_reported():
    assert rows(_pass('"val" in node.meta')) == [ROW]


def test_insertion_when_the_meta_is_absent_is_reported():
    assert rows(_pass("ga is None", before='ga = node.meta.get("grapharg", None)')) == [ROW]


def test_insertion_under_a_disjunction_is_reported():
    assert rows(_pass('"grapharg" in node.meta or node.users')) == [ROW]


def test_insertion_after_the_looked_up_name_is_rebound_is_reported():
    before = 'ga = node.meta.get("grapharg", None)\n        ga = node.meta.get("val", None)'
    assert rows(_pass("ga is not None", before=before)) == [ROW + 1]


def test_insertion_with_a_lookup_default_is_reported():
    assert rows(_pass("ga is not None", before='ga = node.meta.get("grapharg", 0)')) == [ROW]


def test_insertion_into_another_graph_is_reported():
    assert rows(_pass('"grapharg" in node.meta', graph="other.graph")) == [ROW]


def test_guard_on_a_node_of_another_graph_is_reported():
    assert rows(_pass('"grapharg" in node.meta', loop="other.graph.nodes")) == [ROW]


def test_loop_variable_rebound_before_the_guard_is_reported():
    assert rows(_pass('"grapharg" in node.meta', before="node = other.graph.output_node()")) == [ROW]


def test_insertion_through_a_helper_is_reported():
    source = """
import torch


def insert(graph, op, args):
    return graph.call_function(op, args)


def replace_symint_with_sym_size(gm):
    for node in gm.graph.nodes:
        if "grapharg" in node.meta:
            insert(gm.graph, torch.ops.aten.sym_size, (node, 0))
    return gm
"""
    assert rows(source) == [12]

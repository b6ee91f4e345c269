"""QL102 and insertions made after the pass read Dynamo's `gm._param_name_to_source` off the
graph module (pytorch-shir's LeNet-5 and VGG instruction selection registers each parameter it
adds there, then retargets the node to `aten.pad` or `aten.view`). Only the `GraphModule`
Dynamo hands a `torch.compile` backend carries the attribute: on any other graph the read
raises before the insertion runs. Loud look-alikes: a guarded read (`getattr` with a default,
under `if hasattr(...)`), an `assert` (dropped by `python -O`), a read after the insertion, in
another branch, under a conditional expression or the right of `or`, on another graph module,
by a nested function that reads only under a test or is called after the insertion, a graph
module rebound in the function, an insertion into another graph, and a node of another loop."""

from __future__ import annotations

import pytest

from tests.conftest import lint

# `{top}` runs before the loop, `{before}` before the insertions, `{after}` after them.
SELECT = """
import torch


def select(gm, other, flag):
    {top}
    graph = gm.graph
    for n in reversed(graph.nodes):
        if n.op == "call_function":
            {before}
            with graph.inserting_before(n):
                v = graph.call_function(torch.ops.aten.view, (n.args[0], [-1]))
            n.target = torch.ops.aten.reshape
            n.args = (v, [-1])
            {after}
    gm.recompile()
"""
INSERTIONS = ["view", "reshape"]  # the view's insertion and the retargeted reshape

NEW_PARAM = """def new_param():
        nonlocal gm
        name = "_isel_param"
        assert not hasattr(gm, name)
        gm._param_name_to_source[name] = None
        return name
    """


def reported(source: str) -> list[str]:
    """The ops of the insertions reported, in order."""
    lines = source.splitlines()
    return [lines[d.range.start.row - 1].partition("torch.ops.aten.")[2].partition(",")[0] for d in _lint(source)]


def _lint(source: str):
    return lint(source, select=("QL102",))


def rows(top: str = "pass", before: str = "pass", after: str = "pass") -> list[str]:
    return reported(SELECT.replace("{top}", top).replace("{before}", before).replace("{after}", after))


def test_without_a_read_both_insertions_are_reported():
    assert rows() == INSERTIONS


@pytest.mark.parametrize(
    "top, before",
    [
        ("pass", 'gm._param_name_to_source["p"] = None'),
        ("pass", 'source = gm._param_name_to_source.get("p")'),
        ("pass", "gm._param_name_to_source.clear()"),
        ("sources = gm._param_name_to_source", "pass"),
        # The read opens a function nested in the pass, called before the insertion.
        (NEW_PARAM, "name = new_param()"),
        (NEW_PARAM, "setattr(gm, new_param(), None)"),
    ],
)
def test_insertions_after_a_read_of_dynamos_attribute_are_quiet(top, before):
    assert rows(top, before) == []


@pytest.mark.parametrize(
    "top, before, after",
    [
        ("pass", 'sources = getattr(gm, "_param_name_to_source", {})', "pass"),
        ("pass", 'if hasattr(gm, "_param_name_to_source"):\n                gm._param_name_to_source["p"] = 1', "pass"),
        ("pass", 'assert "p" not in gm._param_name_to_source', "pass"),
        ("pass", "pass", 'gm._param_name_to_source["p"] = None'),
        ("pass", "sources = gm._param_name_to_source if flag else {}", "pass"),
        ("pass", "sources = flag or gm._param_name_to_source", "pass"),
        ("pass", "sources = [s for s in other.nodes if gm._param_name_to_source]", "pass"),
        ("pass", 'other._param_name_to_source["p"] = None', "pass"),
        ("pass", 'gm._param_name_to_source["p"] = None\n            gm = other', "pass"),
        ("pass", "name = lambda: gm._param_name_to_source", "pass"),
        (NEW_PARAM, "pass", "name = new_param()"),
        (NEW_PARAM.replace("gm._param", "if flag:\n            gm._param"), "name = new_param()", "pass"),
    ],
)
def test_insertions_a_read_does_not_guard_are_reported(top, before, after):
    assert rows(top, before, after) == INSERTIONS


def test_a_read_in_the_other_branch_guards_nothing():
    before = 'if flag:\n                gm._param_name_to_source["p"] = None\n            else:\n                pass'
    assert rows(before=before) == INSERTIONS


def test_an_insertion_into_another_graph_is_reported():
    source = SELECT.replace("{top}", "pass").replace("{after}", "pass")
    source = source.replace("{before}", 'gm._param_name_to_source["p"] = None')
    source = source.replace("v = graph.call_function", "v = other.graph.call_function")
    assert reported(source) == ["view"]


def test_a_node_of_another_graph_is_reported():
    source = SELECT.replace("{top}", "pass").replace("{after}", "pass")
    source = source.replace("{before}", 'gm._param_name_to_source["p"] = None')
    source = source.replace("for n in reversed(graph.nodes)", "for n in reversed(other.graph.nodes)")
    assert reported(source) == ["reshape"]

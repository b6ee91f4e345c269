"""Walks kept on the node they walk (`node_memo.kept_on_node`) must not hold that node: the node
would then refer to itself through its own `__dict__`, and its subtree would outlive its tree
until the cyclic collector ran, which a command-line run pauses during checks and then runs
rarely (`file_checks._GC_THRESHOLDS`). On ao, QL102's consumer sites of a decorated function and
the walk of a function inserting into its parameter's graph left ~4,900 nodes in cycles.

Each kept walk is asked, its tree dropped, and the collector must find nothing to free; the
answers must still be the ones the walk gives (the statement itself among its sites)."""

from __future__ import annotations

import ast
import gc

from qlint.analysis.graphs import graph_parameter_passes
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from qlint.rules import packet_sites
from qlint.rules.packet_scan import checked_once
from tests.conftest import settings_for, write_package

DECORATED = """\
@register(torch.ops.aten.relu)
def match(node):
    if node.target == torch.ops.aten.relu:
        return node
"""

PASS = """\
def pass_(gm, x):
    g = gm.graph
    node = g.call_function(torch.ops.aten.relu, (x,))
    return node
"""

# A pass inserting a packet into its parameter's graph, and a decorated matcher keying nodes
# on that op in the same module: QL102 reads both (its insertion, its consumers).
MODULE = """\
import torch
from torch.fx import GraphModule


def register(op):
    def wrap(fn):
        return fn
    return wrap


@register(torch.ops.quantized_decomposed.dequantize_per_tensor)
def matcher(node):
    if node.target == torch.ops.quantized_decomposed.dequantize_per_tensor:
        return node


def insert_dq(gm: GraphModule, x):
    g = gm.graph
    node = g.call_function(torch.ops.quantized_decomposed.dequantize_per_tensor, (x, 1.0, 0, -128, 127, torch.int8))
    gm.recompile()
    return node
"""


def _cyclic_garbage_of(run) -> int:
    gc.collect()
    gc.disable()
    try:
        run()
        return gc.collect()
    finally:
        gc.enable()


def test_consumer_sites_of_a_decorated_function_hold_no_cycle():
    answers = []

    def ask():
        statement = ast.parse(DECORATED).body[0]
        for _ in range(2):  # computed, then the kept answer read back
            statement_or = [(n or statement, kind) for n, kind in packet_sites._site_nodes(statement)]
            answers.append([(type(n).__name__, n is statement, kind) for n, kind in statement_or])

    assert _cyclic_garbage_of(ask) == 0
    first, second = answers
    assert first == second
    # The statement itself is among its sites (its decorators are a registration table).
    assert ("FunctionDef", True, packet_sites._DECORATED) in first
    assert ("Compare", False, packet_sites._COMPARE) in first


def test_a_pass_s_kept_walk_holds_no_cycle():
    answers = []

    def ask():
        func = ast.parse(PASS).body[0]
        calls = [n for n in ast.walk(func) if isinstance(n, ast.Call)]
        call = next(n for n in calls if getattr(n.func, "attr", "") == "call_function")
        answers.append(graph_parameter_passes.inserts_into_parameter(func, "gm", call.args[0]))
        answers.append(graph_parameter_passes.inserts_into_parameter(func, "x", call.args[0]))
        # The kept walk is the walk below the function: the function itself is no binding.
        kept = func.__dict__[graph_parameter_passes._WALK]
        answers.append(func in kept)

    assert _cyclic_garbage_of(ask) == 0
    assert answers == [True, False, False]


def test_a_check_reading_both_leaves_no_cycles(tmp_path, monkeypatch):
    pkg = write_package(tmp_path, "pkg", passes=MODULE)
    path = str(pkg / "passes.py")
    walked = {"sites": 0, "pass": 0}

    def counted(name, original):
        def run(node):
            walked[name] += 1
            return original(node)

        return run

    monkeypatch.setattr(packet_sites, "_find_site_nodes", counted("sites", packet_sites._find_site_nodes))
    monkeypatch.setattr(graph_parameter_passes, "walk", counted("pass", graph_parameter_passes.walk))
    project = ProjectIndex(track_dependents=False)
    found = []

    def check():
        try:
            result = check_source(MODULE, path, settings_for(("QL102",)), project)
        finally:
            checked_once(path)
        assert not result.errors, result.errors
        found.append(sorted((d.code, d.range.start.row) for d in result.diagnostics))

    check()  # once first: what the index keeps for the run (module summaries) is made here
    assert _cyclic_garbage_of(check) == 0
    assert walked["sites"] and walked["pass"]  # both walks were kept on their nodes
    assert found[0] == found[1] == [("QL102", 19)]

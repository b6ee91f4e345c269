"""QL102's import trigger reads what QL101's found about packets in the same check
(`packet_imports.answered`), and only in that check: a file whose imports start to reach a
packet (a module edited, as the language server sees it) is asked again."""

from __future__ import annotations

import pytest

from qlint.analysis.graphs import packet_imports, wrapper_index
from qlint.analysis.graphs.packet_imports import answered, may_hold_packet
from qlint.analysis.graphs.wrapper_index import inserts_through_imports
from qlint.analysis.names.project import ProjectIndex
from tests.conftest import write_package

# Inserts through an imported wrapper; the op it inserts comes from another module.
PASSES = """\
from pkg.graph_utils import insert_op
from pkg.ops import RELU


def rewrite(gm, node):
    insert_op(gm.graph, RELU, (node,))
"""
GRAPH_UTILS = "def insert_op(graph, op, args):\n    return graph.call_function(op, args)\n"
NO_PACKET = "RELU = 'relu'\n"
PACKET = "import torch\n\nRELU = torch.ops.aten.relu\n"


@pytest.fixture
def package(tmp_path):
    pkg = write_package(tmp_path, "pkg", graph_utils=GRAPH_UTILS, ops=NO_PACKET, passes=PASSES)
    return pkg, str(pkg / "passes.py")


def test_an_answer_serves_the_check_that_asked_it_only(package):
    pkg, path = package
    project = ProjectIndex(overlay={})
    project.begin_check()
    assert may_hold_packet(PASSES, path, project) is False
    assert answered(PASSES, path, project) is False
    # Another text (equal but not the one asked about), another file: not answered.
    assert answered("".join(PASSES), path + "x", project) is None
    project.set_overlay(str(pkg / "ops.py"), PACKET)
    project.begin_check()
    assert answered(PASSES, path, project) is None
    assert may_hold_packet(PASSES, path, project) is True
    assert inserts_through_imports(PASSES, path, project) is True


def test_ql102s_trigger_searches_no_wrapper_where_no_packet_can_reach(package, monkeypatch):
    _, path = package
    project = ProjectIndex()
    project.begin_check()
    assert may_hold_packet(PASSES, path, project) is False  # QL101's trigger asks first

    def searched(*args):
        raise AssertionError("the wrapper search ran")

    monkeypatch.setattr(wrapper_index, "imports_a_wrapper", searched)
    assert inserts_through_imports(PASSES, path, project) is False


def test_without_ql101s_answer_the_wrapper_search_runs(package, monkeypatch):
    pkg, path = package
    (pkg / "ops.py").write_text(PACKET)
    project = ProjectIndex()
    project.begin_check()
    asked = []
    original = wrapper_index.imports_a_wrapper
    monkeypatch.setattr(wrapper_index, "imports_a_wrapper", lambda *a: asked.append(a) or original(*a))
    monkeypatch.setattr(packet_imports, "_ANSWERED", None)
    assert inserts_through_imports(PASSES, path, project) is True
    assert asked


def test_without_an_index_no_wrapper_is_searched_where_no_packet_can_reach(package, monkeypatch):
    # A one-file check (no index of wrapper names): the packet question, which reads only the
    # modules the file imports from, is asked before the search through every imported name.
    _, path = package
    project = ProjectIndex()
    project.begin_check()
    monkeypatch.setattr(packet_imports, "_ANSWERED", None)
    assert wrapper_index.index_for(path, project) is None

    def searched(*args):
        raise AssertionError("the wrapper search ran")

    monkeypatch.setattr(wrapper_index, "imports_a_wrapper", searched)
    assert inserts_through_imports(PASSES, path, project) is False


@pytest.mark.parametrize("packet", [False, True])
def test_with_an_index_the_packet_question_comes_before_the_search(package, monkeypatch, packet):
    # A run over many files: the index's gate lets the file through (it imports a wrapper),
    # and where no packet can reach it the wrapper search is not made.
    pkg, path = package
    if packet:
        (pkg / "ops.py").write_text(PACKET)
    monkeypatch.setattr(packet_imports, "_ANSWERED", None)
    wrapper_index.enable(None)
    try:
        project = ProjectIndex()
        project.begin_check()
        assert wrapper_index.index_for(path, project) is not None
        searched = []
        original = wrapper_index.wrapper_search
        monkeypatch.setattr(wrapper_index, "wrapper_search", lambda *a, **kw: searched.append(a) or original(*a, **kw))
        assert inserts_through_imports(PASSES, path, project) is packet
        assert bool(searched) is packet
    finally:
        wrapper_index.disable()


@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize("writes", [False, True])
@pytest.mark.parametrize("gate", [False, True])
@pytest.mark.parametrize("found", [False, True])
@pytest.mark.parametrize("packet", [False, True])
def test_either_order_answers_the_conjunction(monkeypatch, batch, writes, gate, found, packet):
    # The wrapper half is its gate (the imports the index lets through) and its search.
    wraps = gate and found
    asked = []

    def answer(name, value):
        return lambda *args: asked.append(name) or value

    monkeypatch.setattr(packet_imports, "_ANSWERED", None)
    monkeypatch.setattr(wrapper_index, "_ENABLED", batch)  # a run over many files (`enable`)
    monkeypatch.setattr(wrapper_index, "writes_insertion", answer("writes", writes))
    monkeypatch.setattr(wrapper_index, "_wrapper_imports", answer("gate", [("insert_op", "pkg.insert_op")] * gate))
    monkeypatch.setattr(wrapper_index, "_wrapper_found", answer("search", found))
    monkeypatch.setattr(wrapper_index, "may_hold_packet", answer("packet", packet))
    project = ProjectIndex()
    project.begin_check()
    assert inserts_through_imports(PASSES, "/nowhere/passes.py", project) is ((writes or wraps) and packet)
    assert asked.pop(0) == "writes"
    if writes:
        assert "gate" not in asked  # the file inserts itself: no wrapper is looked for
    elif batch:  # the index's gate first, then the packet question, the search last
        assert asked[0] == "gate"
        assert asked[1:] == (["packet", "search"][: 1 + packet] if gate else [])
    else:  # no index: the packet question first
        assert asked[0] == "packet"
        assert asked[1:] == (["gate", "search"][: 1 + gate] if packet else [])

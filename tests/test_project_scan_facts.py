"""The project scan keeps what it read off each module (per content), not the module's parse:
a fact is recomputed when that module changes, and no tree outlives the checks."""

from __future__ import annotations

import ast
import textwrap

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import project_scan
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import settings_for, write_package

MATCHER = """
import torch

def count_relus(gm):
    return sum(n.target == torch.ops.aten.relu for n in gm.graph.nodes)
"""
LEGACY_INSERTER = """
import torch
from torch.fx import symbolic_trace

def add_op(model, node):
    gm = symbolic_trace(model)
    gm.graph.call_function(torch.ops.aten.OP, (node,))
    return gm
"""
# The same insertion into an exported graph, which carries overloads: no reason for packets.
EXPORTED_INSERTER = LEGACY_INSERTER.replace("from torch.fx import symbolic_trace", "from torch.export import export")
EXPORTED_INSERTER = EXPORTED_INSERTER.replace("symbolic_trace(model)", "export(model, ()).module()")


def _rows(pkg, project):
    path = pkg / "matcher.py"
    result = check_source(path.read_bytes(), str(path), settings_for(("QL1",)), project)
    return [(d.code, d.range.start.row) for d in result.diagnostics]


def _kept(tmp_path):
    return [
        value
        for project in project_scan._PROJECTS.values()
        for path, (_, facts) in project.facts.items()
        if path.startswith(str(tmp_path))
        for value in facts.values()
    ]


def _trees(value) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (ast.AST, FileContext)):
            return True
        if isinstance(item, (tuple, list, set, frozenset)):
            stack.extend(item)
    return False


def test_the_scan_keeps_facts_and_recomputes_them_after_an_edit(tmp_path):
    inserter = textwrap.dedent(LEGACY_INSERTER).replace("OP", "relu")
    pkg = write_package(tmp_path, "pkg", matcher=MATCHER, inserter=inserter)
    project = ProjectIndex()
    assert _rows(pkg, project) == []  # legacy FX graphs carry the packet the matcher compares with
    kept = _kept(tmp_path)
    assert kept and not any(_trees(v) for v in kept)
    # Edited (a different length, so its stat key changes) into an exported graph: reported.
    (pkg / "inserter.py").write_text(textwrap.dedent(EXPORTED_INSERTER).replace("OP", "relu") + "\n")
    assert _rows(pkg, project) == [("QL101", 5)]
    (pkg / "inserter.py").write_text(inserter)
    assert _rows(pkg, project) == []


def test_another_packet_inserted_elsewhere_does_not_quiet_the_matcher(tmp_path):
    inserter = textwrap.dedent(LEGACY_INSERTER).replace("OP", "sigmoid")
    pkg = write_package(tmp_path, "pkg", matcher=MATCHER, inserter=inserter)
    project = ProjectIndex()
    assert _rows(pkg, project) == [("QL101", 5)]
    assert _rows(pkg, project) == [("QL101", 5)]  # from the facts kept, the same answer


def test_a_module_text_is_searched_once_per_content(tmp_path, monkeypatch):
    """A keystroke's check asks whether any kept module renames targets to packets: the text
    of each is searched once per content, not at every check (~470 modules of torch)."""
    from qlint.analysis.graphs import packet_renames

    searched = []

    class Counting:
        def __init__(self, pattern):
            self.pattern = pattern

        def finditer(self, text):
            searched.append(text)
            return self.pattern.finditer(text)

    monkeypatch.setattr(packet_renames, "_LOOKUP", Counting(packet_renames._LOOKUP))
    inserter = textwrap.dedent(LEGACY_INSERTER).replace("OP", "sigmoid")
    inserter += "\n\ndef literal(node):\n    node.target = getattr(torch.ops.aten, 'relu')\n"
    pkg = write_package(tmp_path, "pkg", matcher=MATCHER, inserter=inserter)
    project = ProjectIndex()
    assert _rows(pkg, project) == [("QL101", 5)]
    first = len(searched)
    assert first >= 1
    assert _rows(pkg, project) == [("QL101", 5)]
    assert len(searched) == first
    (pkg / "inserter.py").write_text(inserter + "\n# edited\n")  # a new content is searched again
    assert _rows(pkg, project) == [("QL101", 5)]
    assert len(searched) > first

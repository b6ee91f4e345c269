"""`CallGraph.definition(..., functions_only=True)`: a caller that reads functions only (QL204's
calibration walk turns a class away) gets None for a class, without the class being built:
another module's class comes from its summary and would be parsed out of its text for that
(ExecuTorch's 400-line `QnnQuantizer`, 6 ms of the check of an edited file)."""

from __future__ import annotations

import ast
import marshal

import pytest

from qlint.analysis.flow.callgraph import CallGraph
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ModuleScope
from qlint.analysis.names.summary import ModuleSummary
from qlint.optable import load_op_table

MODULE = (
    "import torch\n\n\n"
    "class Big:\n" + "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(50)) + "\n"
    "def helper(model):\n    return model(1)\n"
)


@pytest.fixture
def lazy_scope() -> ModuleScope:
    """The module's scope as a check reads another module: from its summary, each statement
    parsed out of the text when first asked for."""
    tree = ast.parse(MODULE)
    eager = ModuleScope.build(tree, "pkg.mod", "/p/pkg/mod.py")
    summary = ModuleSummary.from_data(
        marshal.loads(marshal.dumps(ModuleSummary.of(tree, eager, "pkg.mod", "d").to_data()))
    )
    scope = summary.scope("/p/pkg/mod.py", lambda: MODULE)
    assert scope is not None
    return scope


@pytest.fixture
def parses(monkeypatch) -> list[int]:
    parsed: list[int] = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda src, *a, **k: parsed.append(len(src)) or real_parse(src, *a, **k))
    return parsed


def _graph_and_resolver(scope: ModuleScope) -> tuple[CallGraph, Resolver]:
    project = ProjectIndex()
    return CallGraph(project, load_op_table()), Resolver(scope, project, load_op_table())


def test_a_class_is_turned_away_unbuilt(lazy_scope, parses):
    graph, resolver = _graph_and_resolver(lazy_scope)
    assert graph.definition(ast.Name("Big"), resolver, functions_only=True) is None
    assert graph._by_qualname("pkg.mod.Big", lazy_scope, functions_only=True) is None
    assert parses == []


def test_a_function_is_found_all_the_same(lazy_scope, parses):
    graph, resolver = _graph_and_resolver(lazy_scope)
    node, scope, cls = graph.definition(ast.Name("helper"), resolver, functions_only=True)
    assert isinstance(node, ast.FunctionDef) and node.name == "helper" and scope is lazy_scope and cls is None
    assert graph._by_qualname("pkg.mod.helper", lazy_scope, functions_only=True)[0] is node
    assert graph._by_qualname("pkg.mod.Big.m7", lazy_scope, functions_only=True)[0].name == "m7"


def test_other_callers_still_get_the_class(lazy_scope, parses):
    graph, resolver = _graph_and_resolver(lazy_scope)
    node, _, _ = graph.definition(ast.Name("Big"), resolver)
    assert isinstance(node, ast.ClassDef) and node.name == "Big"
    assert len(parses) == 1

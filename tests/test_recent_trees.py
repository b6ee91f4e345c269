"""A statement asked of a module summarised a moment ago comes from the tree its summary was
parsed from, not from a second parse; only for that content, within the budget, once."""

from __future__ import annotations

import ast
import gc

import pytest

from qlint.analysis.names import recent_trees
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.recent_trees import RecentTrees
from qlint.analysis.names.scope import ModuleScope
from qlint.analysis.names.summary import _by_loc
from tests.conftest import old_file
from tests.test_summaries import _same

MOD = (
    "import torch\n"
    "OPS = [torch.ops.aten.add]\n"
    "if torch.cuda.is_available():\n"
    "    @staticmethod\n"
    "    def nested(x):\n"
    "        return x\n"
    "def helper(gm):\n"
    "    return gm.graph.find_nodes(op='call_function', target=OPS[0])\n"
    "class Model:\n"
    "    def forward(self, x):\n"
    "        return x\n"
)


@pytest.fixture
def recent(monkeypatch):
    fresh = RecentTrees()
    monkeypatch.setattr(recent_trees, "RECENT", fresh)
    from qlint.analysis.names import module_entries, summary

    monkeypatch.setattr(module_entries, "RECENT", fresh)
    monkeypatch.setattr(summary, "RECENT", fresh)
    return fresh


@pytest.fixture
def module(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    old_file(pkg / "__init__.py", "")
    old_file(pkg / "mod.py", MOD)
    old_file(pkg / "user.py", "from pkg.mod import helper\n")
    return pkg


def _parses(monkeypatch) -> list[str]:
    seen: list[str] = []
    real = ast.parse

    def counting(source, *a, **k):
        seen.append(source)
        return real(source, *a, **k)

    monkeypatch.setattr(ast, "parse", counting)
    return seen


def test_statements_of_a_module_just_summarised_are_not_parsed_again(module, recent, monkeypatch):
    index = ProjectIndex(track_dependents=False)
    parsed = _parses(monkeypatch)
    scope = index.module_scope("pkg.mod", str(module / "user.py"))
    assert len(parsed) == 1  # the summary's parse of the whole module
    eager = ModuleScope.build(ast.parse(MOD), "pkg.mod", str(module / "mod.py"))
    del parsed[:]
    # Every kind a summary locates: a function, one nested in a module-level `if` (decorated),
    # a class, an assignment; each the node a parse of it alone gives.
    assert _same(scope.functions["helper"], eager.functions["helper"])
    assert _same(scope.functions["nested"], eager.functions["nested"])
    assert _same(scope.classes["Model"].node, eager.classes["Model"].node)
    assert sorted(scope.classes["Model"].methods) == ["forward"]
    assert _same(scope.assigns["OPS"][0], eager.assigns["OPS"][0])
    assert parsed == [] and recent.served == 4
    assert scope.functions["helper"] is scope.functions["helper"]  # kept by the scope, as before


def test_a_tree_another_reader_takes_is_not_kept(module, recent, monkeypatch):
    # `fact_at(..., keep_tree=True)` hands the tree to a caller search: not kept here. While
    # that reader holds it, a statement comes from it (`live_trees`); once it is dropped, the
    # statement is parsed alone.
    from qlint.analysis.flow.class_facts import CLASS_MODES

    index = ProjectIndex(track_dependents=False)
    index.fact_at(str(module / "mod.py"), CLASS_MODES, keep_tree=True)
    parsed = _parses(monkeypatch)
    scope = index.scope_at(str(module / "mod.py"))
    assert scope.functions["helper"].name == "helper"
    assert parsed == [] and recent.served == 0
    index.drop_kept_tree()
    gc.collect()
    assert scope.classes["Model"].node.name == "Model"
    assert len(parsed) == 1 and recent.served == 0  # the class alone


def test_only_the_content_it_was_parsed_from_and_each_statement_once():
    recent = RecentTrees()
    tree = ast.parse(MOD)
    loc = next(iter(_by_loc(tree)))
    recent.keep("/p/mod.py", "d1", len(MOD), tree)
    assert recent.statement("/p/mod.py", "d2", loc, _by_loc) is None  # the module changed since
    assert recent.statement("/p/other.py", "d1", loc, _by_loc) is None
    first = recent.statement("/p/mod.py", "d1", loc, _by_loc)
    assert isinstance(first, ast.Import)
    assert recent.statement("/p/mod.py", "d1", loc, _by_loc) is None  # another asker parses its own
    assert recent.served == 1


def test_the_newest_trees_within_the_budget():
    recent = RecentTrees(budget=100)
    tree = ast.parse("x = 1\n")
    loc = next(iter(_by_loc(tree)))
    recent.keep("/p/big.py", "d", 101, ast.parse("x = 1\n"))  # over the budget alone: not kept
    recent.keep("/p/a.py", "d", 60, ast.parse("x = 1\n"))
    recent.keep("/p/b.py", "d", 30, ast.parse("x = 1\n"))
    recent.keep("/p/c.py", "d", 30, ast.parse("x = 1\n"))  # the oldest goes
    assert recent.statement("/p/big.py", "d", loc, _by_loc) is None
    assert recent.statement("/p/a.py", "d", loc, _by_loc) is None
    assert recent.statement("/p/b.py", "d", loc, _by_loc) is not None
    assert recent.statement("/p/c.py", "d", loc, _by_loc) is not None

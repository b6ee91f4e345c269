"""Lazy summary facts (`SummaryFact.lazy`): computed for the modules they are asked of, from
the parse that summarises the module when it is asked first, else from one parse of its text;
never for a module summarised only for its names."""

from __future__ import annotations

import ast
import gc
import os

import pytest

from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.recent_trees import RECENT
from tests.conftest import write_package


class _Fact:
    """Counts its computations; its value is the module's top-level function names."""

    def __init__(self, key: str, lazy: bool):
        self.key, self.lazy, self.computed = key, lazy, []

    def compute(self, tree, scope, text):
        self.computed.append(scope.path)
        return [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]

    def load(self, path, summary, value):
        return tuple(value)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setattr(ProjectIndex, "facts", {})  # the registered facts are process-wide
    monkeypatch.setattr(ProjectIndex, "store", None)
    write_package(tmp_path, "pkg", a="def f():\n    pass\n", b="def g():\n    pass\n", user="from pkg.a import f\n")
    parses: list[str] = []
    real = ast.parse

    def counting(source, filename="<unknown>", *args, **kwargs):
        parses.append(os.path.basename(str(filename)))
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    index = ProjectIndex(track_dependents=False)
    index.begin_check()
    return index, tmp_path / "pkg", parses


def test_a_module_summarised_for_its_names_does_not_compute_a_lazy_fact(project):
    index, pkg, parses = project
    lazy, eager = _Fact("lazy-test", True), _Fact("eager-test", False)
    index.register_fact(lazy)
    index.register_fact(eager)
    assert index.module_scope("pkg.a", str(pkg / "user.py")) is not None
    assert parses == ["a.py"]
    assert lazy.computed == [] and eager.computed == [str(pkg / "a.py")]


def test_a_lazy_fact_asked_first_comes_from_the_summarising_parse(project):
    index, pkg, parses = project
    lazy = _Fact("lazy-test", True)
    assert index.module_fact("pkg.b", str(pkg / "user.py"), lazy) == ("g",)
    assert index.fact_at(str(pkg / "b.py"), lazy) == ("g",)
    assert parses == ["b.py"] and lazy.computed == [str(pkg / "b.py")]


def test_another_instance_of_the_fact_is_the_same_fact(project):
    # A check makes its own instance (QL101's sinks): the key names the fact.
    index, pkg, parses = project
    first, second = _Fact("lazy-test", True), _Fact("lazy-test", True)
    index.register_fact(first)
    assert index.fact_at(str(pkg / "b.py"), second) == ("g",)
    assert parses == ["b.py"]


def test_a_lazy_fact_asked_of_a_module_summarised_before_parses_it_once_more(project):
    index, pkg, parses = project
    lazy = _Fact("lazy-test", True)
    index.register_fact(lazy)
    index.module_scope("pkg.a", str(pkg / "user.py"))
    RECENT.clear()  # the summary's tree is held no more (see the test below)
    gc.collect()
    assert index.fact_at(str(pkg / "a.py"), lazy, keep_tree=True) == ("f",)
    assert parses == ["a.py", "a.py"]
    # That parse is handed on, as one made for the summary would be.
    tree = index.take_tree(str(pkg / "a.py"), (pkg / "a.py").read_bytes())
    assert tree is not None and tree.body[0].name == "f"
    # ... and the fact is kept with the summary: asked again, nothing is parsed.
    assert index.fact_at(str(pkg / "a.py"), lazy) == ("f",)
    assert parses == ["a.py", "a.py"] and len(lazy.computed) == 1


def test_a_lazy_fact_asked_while_the_summary_s_tree_is_held_parses_nothing_more(project):
    # recent_trees still holds the tree the summary came from: the fact is computed from it.
    index, pkg, parses = project
    lazy = _Fact("lazy-test", True)
    index.register_fact(lazy)
    index.module_scope("pkg.a", str(pkg / "user.py"))
    assert index.fact_at(str(pkg / "a.py"), lazy) == ("f",)
    assert parses == ["a.py"] and len(lazy.computed) == 1

"""A module a check summarises (it is imported) and the run checks later is parsed once: the
summary's tree goes to the engine, and the runner checks that file next."""

from __future__ import annotations

import ast

import pytest

from qlint import file_checks
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.tree_handover import TreeHandover
from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import old_file
from tests.test_summary_facts import EXPECTED, HELPERS, USER, fresh_process  # noqa: F401  (a fixture)

OTHER = "import torch\n\ndef f(gm):\n    return gm.graph.find_nodes(op='call_function', target=torch.ops.aten.add)\n"


@pytest.fixture
def package(tmp_path):
    # The importer sorts first: the helpers are summarised before their own check.
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    old_file(pkg / "__init__.py", "")
    old_file(pkg / "a_user.py", USER.replace("from pkg.helpers", "from pkg.z_helpers"))
    old_file(pkg / "m_other.py", OTHER)
    old_file(pkg / "z_helpers.py", HELPERS)
    return pkg


def _whole_parses(monkeypatch, texts: dict[str, str]) -> list[str]:
    """The files `ast.parse` parsed whole (statement parses of a summary are not counted)."""
    seen: list[str] = []
    real = ast.parse

    def counting(source, filename="<unknown>", *a, **kw):
        if texts.get(str(filename)) == source:
            seen.append(str(filename))
        return real(source, filename, *a, **kw)

    monkeypatch.setattr(ast, "parse", counting)
    return seen


def _findings(run) -> list[tuple[str, str, int]]:
    return sorted((r.path, d.code, d.range.start.row) for r in run.results for d in r.diagnostics)


def test_a_module_summarised_then_checked_is_parsed_once(package, tmp_path, fresh_process, monkeypatch):  # noqa: F811
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL101",))
    helpers = str(package / "z_helpers.py")
    parsed = _whole_parses(monkeypatch, {helpers: HELPERS})
    order: list[str] = []
    check_one = file_checks.check_one_uncached  # the check of a run without a cache

    def recording(path, settings):
        order.append(path)
        return check_one(path, settings)

    monkeypatch.setattr(file_checks, "check_one_uncached", recording)
    run = run_check([str(package)], s, use_cache=False, jobs=1)
    assert parsed == [helpers]
    # Checked right after the file whose check summarised it, before the file between them.
    assert [p.rsplit("/", 1)[1] for p in order] == ["__init__.py", "a_user.py", "z_helpers.py", "m_other.py"]
    together = _findings(run)
    assert [row for path, _, row in together if path.endswith("a_user.py")] == EXPECTED

    # The same findings as checking each file in a process of its own, each parse its own.
    alone = []
    for name in ("__init__.py", "a_user.py", "m_other.py", "z_helpers.py"):
        ProjectIndex._default = None
        alone += _findings(run_check([str(package / name)], s, use_cache=False, jobs=1))
    assert sorted(alone) == together


def test_nothing_is_kept_for_a_file_not_expected_or_over_the_budget():
    handover = TreeHandover(budget=10)
    tree = ast.parse("x = 1")
    handover.keep("/p/a.py", b"x = 1", tree)
    assert handover.kept() == []  # the run does not check it
    handover.expect(["/p/a.py", "/p/b.py"])
    handover.keep("/p/a.py", b"x = 1", tree)
    handover.keep("/p/b.py", b"x = 1 + 1 + 1", tree)  # past the budget: parsed again when checked
    assert handover.kept() == ["/p/a.py"]
    assert handover.take("/p/b.py", b"x = 1 + 1 + 1") is None
    assert handover.take("/p/a.py", b"x = 1") is tree
    assert handover.take("/p/a.py", b"x = 1") is None  # handed over once
    assert handover.handed == 1


def test_a_file_edited_after_its_summary_is_parsed_again():
    handover = TreeHandover()
    handover.expect(["/p/a.py"])
    handover.keep("/p/a.py", b"x = 1", ast.parse("x = 1"))
    assert handover.take("/p/a.py", b"x = 2") is None
    assert handover.kept() == []


def test_a_checked_file_keeps_nothing_and_a_new_run_forgets_the_last():
    handover = TreeHandover()
    handover.expect(["/p/a.py", "/p/b.py"])
    handover.checked("/p/a.py")  # checked without a parse (no rule triggered)
    handover.keep("/p/a.py", b"x = 1", ast.parse("x = 1"))
    assert not handover.expects("/p/a.py") and handover.kept() == []
    handover.keep("/p/b.py", b"x = 1", ast.parse("x = 1"))
    handover.expect([])
    assert handover.kept() == [] and not handover.expects("/p/b.py")


def test_a_module_checked_then_summarised_is_parsed_once(tmp_path, fresh_process, monkeypatch):  # noqa: F811
    # The helpers sort first: checked, then summarised by the importer's check right after.
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    old_file(pkg / "__init__.py", "")
    old_file(pkg / "a_helpers.py", HELPERS)
    old_file(pkg / "z_user.py", USER.replace("from pkg.helpers", "from pkg.a_helpers"))
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL101",))
    helpers = str(pkg / "a_helpers.py")
    parsed = _whole_parses(monkeypatch, {helpers: HELPERS})
    run = run_check([str(pkg)], s, use_cache=False, jobs=1)
    assert parsed == [helpers]
    assert [row for path, _, row in _findings(run) if path.endswith("z_user.py")] == EXPECTED


def test_only_the_newest_checked_trees_are_kept():
    handover = TreeHandover(recent_budget=12)
    handover.expect(["/p/a.py", "/p/b.py", "/p/c.py", "/p/big.py", "/p/test_a.py"])
    trees = {name: ast.parse("x = 1") for name in "abc"}
    for name in "abc":
        handover.checked_tree(f"/p/{name}.py", b"x = 1", trees[name])
    handover.checked_tree("/p/big.py", b"x = 1" * 3, ast.parse("x = 1"))  # larger than the budget
    assert handover.checked_parse("/p/a.py", b"x = 1") is None  # the oldest went
    assert handover.checked_parse("/p/big.py", b"x = 1" * 3) is None
    assert handover.checked_parse("/p/b.py", b"x = 2") is None  # edited since
    assert handover.checked_parse("/p/c.py", b"x = 1") is trees["c"]
    assert handover.checked_parse("/p/c.py", b"x = 1") is None  # handed once
    handover.checked_tree("/p/test_a.py", b"x = 1", trees["a"])  # a test module: rarely imported
    assert handover.checked_parse("/p/test_a.py", b"x = 1") is None
    handover.checked_tree("/p/elsewhere.py", b"x = 1", trees["a"])  # not a file of the run
    assert handover.checked_parse("/p/elsewhere.py", b"x = 1") is None

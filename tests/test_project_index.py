"""ProjectIndex: the one service that reads, decodes, locates and parses other modules."""

from __future__ import annotations

import ast
import os

import pytest

from qlint.analysis.flow.callgraph import node_range
from qlint.analysis.names.module_finder import ModuleFinder
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.recent_trees import RECENT


def _call(tree: ast.Module) -> ast.Call:
    return next(n for n in ast.walk(tree) if isinstance(n, ast.Call))


def test_other_module_is_decoded_with_its_coding_cookie_and_located_in_code_points(tmp_path):
    src = "# -*- coding: latin-1 -*-\nx = 'é'; y = decompose()\n"
    path = tmp_path / "m.py"
    path.write_bytes(src.encode("latin-1"))
    project = ProjectIndex()
    rng = node_range(_call(ast.parse(src)), str(path), project)
    assert (rng.start.row, rng.start.col, rng.end.col) == (2, 13, 24)
    assert project.locate(str(path), _call(ast.parse(src)))[1] == "decompose()"


def test_unsaved_buffer_wins_over_the_file(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("y = decompose()\n", encoding="utf-8")
    buffer = "é = 1; y = decompose()\n"
    project = ProjectIndex({str(path): buffer})
    rng = node_range(_call(ast.parse(buffer)), str(path), project)
    assert (rng.start.row, rng.start.col) == (1, 11)


def test_same_tree_agrees_with_ast_dump():
    from qlint.analysis.names.scope import same_tree

    sources = [
        "torch.ops.aten.add",
        "torch.ops.aten.add.Tensor",
        "(torch.ops.aten.add)",
        "{a, b}",
        "{b, a}",
        "1",
        "1.0",
        "True",
        "-0.0",
        "0.0",
        "float('nan')",
        "u'x'",
        "'x'",
        "f(x, *a, k=1)",
        "f(x, *a, k=2)",
        "lambda x: x",
        "lambda y: y",
    ]
    trees = [ast.parse(s, mode="eval").body for s in sources]
    for a in trees:
        for b in trees:
            assert same_tree(a, b) == (ast.dump(a) == ast.dump(b)), (ast.dump(a), ast.dump(b))


MATCHER = """
from .ops import DQ

def is_dq(node):
    return node.target in DQ
"""


def test_update_returns_the_files_that_read_the_module_and_serves_its_new_content(tmp_path):
    from qlint.engine import check_source
    from tests.conftest import settings_for, write_package

    pkg = write_package(tmp_path, "pkg", ops="import torch\nDQ = {torch.ops.aten.add.Tensor}\n", match=MATCHER)
    match, ops = str(pkg / "match.py"), str(pkg / "ops.py")
    settings = settings_for(("QL101",))
    project = ProjectIndex()
    assert check_source(MATCHER, match, settings, project).diagnostics == []
    assert project.update(ops, "import torch\nDQ = {torch.ops.aten.add}\n") == {match}
    (finding,) = check_source(MATCHER, match, settings, project).diagnostics
    assert finding.code == "QL101" and finding.range.start.row == 5
    # The matcher no longer reads ops.py: its edits no longer concern it.
    assert check_source("def f(node):\n    return node.target\n", match, settings, project).diagnostics == []
    assert project.dependents(ops) == set()
    assert project.update(ops, None) == set()


def _self_lookup(tmp_path, monkeypatch, overlay: bool, on_disk: str | None = None):
    """Check `helpers/utils.py` (no `__init__.py`: its module is `utils`) with a rule that
    looks up `utils` from inside it; count the parses of that file outside the engine."""
    from qlint.diagnostic import Range
    from qlint.engine import check_source
    from qlint.rules import RULES
    from qlint.rules.base import Rule
    from qlint.settings import Settings

    class SelfLookup(Rule):
        code = "QL905"
        name = "self-lookup"
        summary = "test-only"
        triggers = ("LOOKUP",)

        def check(self, ctx):
            scope = ctx.project.module_scope("utils", ctx.path)
            yield ctx.diagnostic(self, Range.of(1, 0, 1, 1), ",".join(sorted(scope.functions)))

    monkeypatch.setitem(RULES, SelfLookup.code, SelfLookup)
    path = tmp_path / "helpers" / "utils.py"
    path.parent.mkdir(parents=True)
    text = "LOOKUP = 1\ndef helper():\n    pass\n"
    path.write_text(on_disk if on_disk is not None else text)
    parsed = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda src, *a, **k: parsed.append(src) or real(src, *a, **k))
    project = ProjectIndex({str(path): text} if overlay else None)
    settings = Settings(root=tmp_path, select=(SelfLookup.code,))
    result = check_source(text, str(path), settings, project)
    return [d.message for d in result.diagnostics], parsed.count(text), result.dependencies


def test_the_checked_file_looked_up_from_itself_is_not_parsed_again(tmp_path, monkeypatch):
    for overlay in (True, False):
        messages, parses, deps = _self_lookup(tmp_path / str(overlay), monkeypatch, overlay)
        assert messages == ["helper"]
        assert parses == 1  # the engine's own parse
        assert len(deps) == 1  # still a dependency of itself, with its digest


def test_a_buffer_that_differs_from_the_file_on_disk_is_not_used_for_the_file(tmp_path, monkeypatch):
    # Checked text and file content differ (no overlay): the lookup reads the file.
    messages, _, _ = _self_lookup(tmp_path, monkeypatch, False, on_disk="LOOKUP = 1\ndef other():\n    pass\n")
    assert messages == ["other"]


def test_star_sources_found_in_every_spelling_and_only_there(tmp_path):
    from qlint.analysis.names.star_imports import star_sources

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    cases = {
        "none.py": "import os\n\ndef f(*args, **kwargs):\n    return os.path.join(*args)\n",
        "spaced.py": "from pkg.a import\t*\nfrom .b import  *\n  from pkg.c import *\n",
        "text.py": 's = """import *"""\nx = 2 * 3  # import *\n',
    }
    for name, text in cases.items():
        (pkg / name).write_text(text)
    project = ProjectIndex()
    found = {name: star_sources(project, str(pkg / name), None) for name in cases}
    assert found == {"none.py": (), "spaced.py": ("pkg.a", "pkg.b", "pkg.c"), "text.py": ()}


def test_the_checked_files_tree_goes_when_its_check_ends_and_its_facts_stay(tmp_path):
    from qlint.analysis.names.references import REFERENCES

    path = tmp_path / "helpers" / "utils.py"
    path.parent.mkdir()
    text = "import torch\n\ndef helper(x):\n    return torch.relu(x)\n"
    path.write_text(text)
    project = ProjectIndex()
    project.begin_check(str(path), text, ast.parse(text))
    assert "helper" in project.module_scope("utils", str(path)).functions
    loaded = project.entries[str(path)][2]
    assert loaded._parsed is not None  # the engine's tree, for facts a rule may ask
    project.checked_once(str(path))
    assert loaded._parsed is None
    fresh = ProjectIndex()
    fresh.module_scope("utils", str(path))
    asked, expected = project.fact_at(str(path), REFERENCES), fresh.fact_at(str(path), REFERENCES)
    assert asked.rows(asked.names_for("relu")) == expected.rows(expected.names_for("relu")) != set()


def test_a_command_line_index_records_dependencies_but_not_dependents(tmp_path):
    ops, match = tmp_path / "ops.py", tmp_path / "match.py"
    ops.write_text("X = 1\n")
    for project in (ProjectIndex.for_path(str(match)), ProjectIndex(track_dependents=False)):
        project.module_scope("ops", str(match))
        assert str(ops) in project.dependencies_of(str(match))
        assert project.dependents(str(ops)) == set()
    editor = ProjectIndex()
    editor.module_scope("ops", str(match))
    editor.dependencies_of(str(match))
    assert editor.dependents(str(ops)) == {str(match)}


def _layout(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").touch()
    (pkg / "a.py").write_text("from pkg.ops import DQ\n")
    (pkg / "b.py").write_text("from pkg.ops import DQ\n")
    return pkg


def test_a_run_over_a_tree_looks_each_module_up_once(tmp_path, monkeypatch):
    from qlint.settings import Settings
    from qlint.summary_cache import summary_store

    pkg = _layout(tmp_path)
    project = ProjectIndex()
    monkeypatch.setattr(ProjectIndex, "_default", project)
    looked: list[str] = []
    real = ModuleFinder.find
    monkeypatch.setattr(ModuleFinder, "find", lambda self, m, r, p=None: looked.append(m) or real(self, m, r, p))
    with summary_store(Settings(root=tmp_path), False):
        for name in ("a.py", "b.py"):
            project.begin_check(str(pkg / name))
            assert project.module_scope("pkg.ops", str(pkg / name)) is None
        assert looked == ["pkg.ops"]  # the second check of the run asks no file system
    assert not ProjectIndex.fixed_layout
    # The next run sees a module created in between; outside a run each check looks again.
    (pkg / "ops.py").write_text("DQ = 1\n")
    with summary_store(Settings(root=tmp_path), False):
        project.begin_check(str(pkg / "a.py"))
        assert project.module_scope("pkg.ops", str(pkg / "a.py")) is not None
    (pkg / "ops.py").unlink()
    project.begin_check(str(pkg / "b.py"))
    assert project.module_scope("pkg.ops", str(pkg / "b.py")) is None


def test_a_check_run_takes_each_content_key_once(tmp_path, monkeypatch):
    from qlint.analysis.names import content_keys

    module = tmp_path / "m.py"
    module.write_text("X = 1\n")
    project = ProjectIndex()
    stats: list[str] = []
    real = content_keys.content_key
    monkeypatch.setattr(
        content_keys, "content_key", lambda overlay, path, *more: stats.append(path) or real(overlay, path, *more)
    )
    with ProjectIndex.contents_fixed():
        assert project.content_key(str(module)) == project.content_key(str(module)) is not None
        assert ProjectIndex().content_key(str(module)) is not None  # one memo for the run
    assert stats == [str(module)]
    module.write_text("X = 22\n")  # the next run (or a check outside one) sees the change
    assert project.content_key(str(module))[1] == len("X = 22\n")
    with ProjectIndex.contents_fixed():
        assert project.content_key(str(module))[1] == len("X = 22\n")
        buffers = ProjectIndex({str(module): "X = 333\n"})  # an editor's buffers are never frozen
        assert buffers.content_key(str(module)) == ("overlay", hash("X = 333\n"))
    assert not ProjectIndex.fixed_content and len(stats) == 4  # a stat per run, one outside, the buffer


def test_beside_a_buffer_the_other_modules_keys_are_taken_once_and_the_buffer_is_never_frozen(tmp_path, monkeypatch):
    # `qlint check -` checks one buffer while the files beside it hold still: their keys are
    # taken once (the kept answers of torch's builder.py asked ~13,000 times), the buffer's
    # key is its text, whatever was asked before.
    from qlint.analysis.names import content_keys

    module, buffer = tmp_path / "m.py", tmp_path / "b.py"
    module.write_text("X = 1\n")
    buffer.write_text("Y = 1\n")
    stats: list[str] = []
    real = content_keys.content_key
    monkeypatch.setattr(
        content_keys, "content_key", lambda overlay, path, *more: stats.append(path) or real(overlay, path, *more)
    )
    project = ProjectIndex({str(buffer): "Y = 22\n"})
    with ProjectIndex.contents_fixed():
        assert project.content_key(str(module)) == project.content_key(str(module)) is not None
        assert project.content_key(str(module), True) == project.content_key(str(module))
        assert project.content_key(str(buffer)) == project.content_key(str(buffer)) == ("overlay", hash("Y = 22\n"))
        project.overlay[str(buffer)] = "Y = 333\n"
        assert project.content_key(str(buffer)) == ("overlay", hash("Y = 333\n"))
    assert stats.count(str(module)) == 1 and stats.count(str(buffer)) == 3
    module.write_text("X = 22\n")  # outside the check: taken again
    assert project.content_key(str(module))[1] == len("X = 22\n")


def test_a_buffer_check_freezes_content_keys_while_it_runs(tmp_path, monkeypatch):
    from qlint import stdin
    from qlint.engine import check_source as real
    from tests.conftest import settings_for

    seen: list[bool] = []
    monkeypatch.setattr(
        "qlint.engine.check_source", lambda *args: seen.append(ProjectIndex.fixed_content) or real(*args)
    )
    stdin.check(b"import torch\nprepare_pt2e(m)\n", str(tmp_path / "a.py"), settings_for(("QL201",)))
    assert seen == [True] and not ProjectIndex.fixed_content


def test_only_the_check_run_freezes_content_keys(tmp_path, monkeypatch):
    from qlint import file_checks, runner
    from qlint.settings import Settings

    (tmp_path / "a.py").write_text("import torch\nprepare_pt2e(m)\n")
    seen: list[bool] = []
    real = file_checks.check_one_uncached  # the check of a run without a cache
    monkeypatch.setattr(
        file_checks, "check_one_uncached", lambda path, s: seen.append(ProjectIndex.fixed_content) or real(path, s)
    )
    runner.run_check([str(tmp_path)], Settings(root=tmp_path), use_cache=False, jobs=1)
    assert seen == [True] and not ProjectIndex.fixed_content


def test_a_check_by_relative_path_records_its_reads_under_the_absolute_path(tmp_path, monkeypatch):
    # Lookups answered from the check's memo record the requester as the first one did.
    from qlint.engine import check_source
    from tests.conftest import settings_for, write_package

    pkg = write_package(tmp_path, "pkg", ops="import torch\nDQ = {torch.ops.aten.add}\n", match=MATCHER)
    monkeypatch.chdir(tmp_path)
    project = ProjectIndex()
    (finding,) = check_source(MATCHER, "pkg/match.py", settings_for(("QL101",)), project).diagnostics
    assert finding.code == "QL101"
    assert project.dependents(str(pkg / "ops.py")) == {str(pkg / "match.py")}
    assert project.module_scope("pkg.ops", "pkg/match.py") is project.module_scope("pkg.ops", str(pkg / "match.py"))
    assert project.dependents(str(pkg / "ops.py")) == {str(pkg / "match.py")}


def test_a_module_read_keeps_one_copy_of_its_content(tmp_path):
    # Its bytes until a statement is first parsed, then only the text that parse keeps: both
    # side by side were a second copy of every module a run read.
    ops, match = tmp_path / "ops.py", tmp_path / "match.py"
    ops.write_text("import torch\n\nDQ = torch.ops.quantized_decomposed.dequantize_per_tensor\n")
    match.write_text("from ops import DQ\n")
    project = ProjectIndex()
    scope = project.module_scope("ops", str(match))
    source = project.entries[str(ops)][2].text
    assert source._data is not None  # nothing asked yet: not decoded
    RECENT.clear()  # the summary's tree is gone (`recent_trees`): the statement comes from the text
    assert ast.unparse(scope.assigns["DQ"][0]) == "torch.ops.quantized_decomposed.dequantize_per_tensor"
    assert source._data is None
    assert source() == ops.read_text()


def test_an_undecodable_module_stays_without_text(tmp_path):
    bad, match = tmp_path / "bad.py", tmp_path / "match.py"
    bad.write_bytes(b"# -*- coding: nonexistent -*-\nX = 1\n")
    match.write_text("from bad import X\n")
    project = ProjectIndex()
    project.module_scope("bad", str(match))
    source = project.entries[str(bad)][2].text
    assert source() is None and source._data is None
    assert source() is None


def test_the_same_scan_recorded_again_keeps_its_dependents_exact(tmp_path):
    # An editor's next check hands `record_reads` the very list it took before: the checked
    # file is still a user of each read, unless a check in between stopped reading one.
    a, b, me = (str(tmp_path / n) for n in ("a.py", "b.py", "me.py"))
    project = ProjectIndex()
    reads = [(a, "1"), (b, "2")]
    for _ in range(2):
        project.record_reads(me, reads)
        assert project.dependencies_of(me) == {a: "1", b: "2"}
        assert project.dependents(a) == project.dependents(b) == {me}
    project.record_reads(me, [(a, "1")])  # a check that reads `a` only
    project.dependencies_of(me)
    assert project.dependents(b) == set()
    project.record_reads(me, reads)
    project.dependencies_of(me)
    project.dependencies_of(me)  # a check that scans nothing
    assert project.dependents(a) == project.dependents(b) == set()
    project.record_reads(me, reads)  # the old list again: `b` is read once more
    project.dependencies_of(me)
    assert project.dependents(a) == project.dependents(b) == {me}


@pytest.mark.parametrize("path", ["/a/b.py", "/a//b/../c.py", "//a/b.py", "/a/./b/", "a/b.py", "../a.py", "."])
def test_absolute_is_abspath(path):
    """`module_keys._absolute` (asked whether a module is an open buffer, at every key) keeps the
    lexical answer for absolute paths; relative ones follow the working directory."""
    from qlint.analysis.names import module_keys

    assert module_keys._absolute(path) == os.path.abspath(path)
    assert module_keys._absolute(path) == os.path.abspath(path)  # kept

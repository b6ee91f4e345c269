"""Each module is parsed once per process in a cold run, and no statement is parsed alone while a
tree of its module is held (issue 13): readers take a tree another reader still holds
(`live_trees`), and a caller module that a helper's check parses goes to its own check
(`tree_handover`)."""

from __future__ import annotations

import ast
import gc

import pytest

from qlint.analysis.names.live_trees import LiveTrees
from qlint.analysis.names.project import ProjectIndex
from qlint.runner import run_check
from qlint.settings import Settings
from tests.test_ql201_project_callers import BN_CALLER, EVAL_CALLER, HELPER, _repo
from tests.test_summary_facts import fresh_process  # noqa: F401  (a fixture)


# -- the registry -------------------------------------------------------------------------------------
def test_a_tree_is_served_for_its_own_text_while_something_holds_it():
    live = LiveTrees()
    text = "import torch\n\n\ndef f(m):\n    return m\n"
    tree = ast.parse(text)
    live.add("/p/a.py", text, tree)
    assert live.tree("/p/a.py", text) is tree
    assert live.tree("/p/a.py", text + "\n") is None  # another content
    assert live.tree("/p/b.py", text) is None  # another file
    by_loc = lambda t: {(s.lineno, s.lineno, s.end_lineno, s.col_offset): s for s in t.body}  # noqa: E731
    stmt = live.statement("/p/a.py", text, (4, 4, 5, 0), by_loc)
    assert stmt is tree.body[1]
    assert live.served == 1 and live.statements == 1
    # Held by nobody else, it goes, and its entry with it: the registry keeps nothing alive.
    del tree, stmt
    gc.collect()
    assert live.tree("/p/a.py", text) is None
    assert live._trees == {}


def test_a_newer_tree_of_a_file_replaces_the_older_one():
    live = LiveTrees()
    old, new = ast.parse("x = 1"), ast.parse("x = 2")
    live.add("/p/a.py", "x = 1", old)
    live.add("/p/a.py", "x = 2", new)
    del old
    gc.collect()  # the older tree going does not drop the newer one's entry
    assert live.tree("/p/a.py", "x = 2") is new and live.tree("/p/a.py", "x = 1") is None


# -- a cold run ---------------------------------------------------------------------------------------
@pytest.fixture
def counted(monkeypatch):
    """(path -> whole parses, path -> statements parsed alone) of the project's files."""
    whole: dict[str, int] = {}
    alone: dict[str, int] = {}
    texts: dict[str, str] = {}
    real = ast.parse

    def parse(source, filename="<unknown>", *a, **kw):
        name = str(filename)
        if name.endswith(".py"):
            if name not in texts:
                with open(name, encoding="utf-8") as fh:
                    texts[name] = fh.read()
            counts = whole if source == texts[name] else alone
            counts[name] = counts.get(name, 0) + 1
        return real(source, filename, *a, **kw)

    monkeypatch.setattr(ast, "parse", parse)
    return whole, alone


def test_each_module_of_a_cold_run_is_parsed_once(tmp_path, counted, fresh_process):  # noqa: F811
    # The helper's check (its file sorts first) searches its callers: both scripts are parsed
    # for it, then checked; the callers resolve the helper in the module being checked.
    root = _repo(tmp_path, a=EVAL_CALLER, b=BN_CALLER)
    whole, alone = counted
    s = Settings(root=root, cache_dir=tmp_path / "cache", select=("QL201",))
    run = run_check([str(root)], s, use_cache=False, jobs=1)
    helper = str(root / "pkg" / "utils" / "export_utils.py")
    scripts = [str(root / "scripts" / n) for n in ("a.py", "b.py")]
    # The train-mode caller keeps the helper's finding.
    assert [(r.path, d.code) for r in run.results for d in r.diagnostics] == [(helper, "QL201")]
    assert whole == dict.fromkeys([helper, *scripts], 1)
    assert alone == {}  # the helper's function, asked of its summary, came from the engine's tree


def test_a_caller_candidate_that_calls_another_function_of_the_name_is_parsed_once(tmp_path, counted, fresh_process):  # noqa: F811
    # c.py spells the helper's name but imports another module's function of that name: the
    # search drops the tree its summary parsed without analysing it, and c.py's check takes it.
    other = "def quantize_module(m, q, x):\n    return m\n"
    caller = "from pkg.other import quantize_module\n\n\ndef main(m, q, x):\n    return quantize_module(m, q, x)\n"
    root = _repo(tmp_path, a=EVAL_CALLER, c=caller)
    (root / "pkg" / "other.py").write_text(other)
    whole, _ = counted
    s = Settings(root=root, cache_dir=tmp_path / "cache", select=("QL201",))
    run = run_check([str(root)], s, use_cache=False, jobs=1)
    assert [d.code for r in run.results for d in r.diagnostics] == []  # the eval-mode caller vouches
    assert whole[str(root / "scripts" / "c.py")] == 1
    assert all(n == 1 for n in whole.values())


def test_a_one_file_check_parses_each_module_once(tmp_path, counted, fresh_process):  # noqa: F811
    root = _repo(tmp_path, a=EVAL_CALLER, b=BN_CALLER)
    whole, alone = counted
    s = Settings(root=root, cache_dir=tmp_path / "cache", select=("QL201",))
    helper = root / "pkg" / "utils" / "export_utils.py"
    run = run_check([str(helper)], s, use_cache=False, jobs=1)
    assert [d.code for r in run.results for d in r.diagnostics] == ["QL201"]
    assert all(n == 1 for n in whole.values()) and str(helper) in whole
    assert alone == {}
    ProjectIndex._default = None


def test_an_editor_check_parses_its_own_tree(tmp_path):
    # An editor's index grafts the last check's statements into the tree it checks: a tree
    # another reader holds is not taken for that (the graft would change it under the reader).
    from qlint.analysis.names.live_trees import LIVE
    from qlint.engine import check_source
    from tests.conftest import settings_for

    path = str(tmp_path / "m.py")
    text = HELPER
    held = ast.parse(text)
    LIVE.add(path, text, held)
    project = ProjectIndex()  # an editor's: it keeps the last checked trees
    check_source(text, path, settings_for(("QL201",)), project)
    checked = project.previous_trees._trees[path].tree
    assert checked is not held and ast.dump(checked) == ast.dump(held)
    # A command-line check of the same text takes the held tree.
    assert LIVE.tree(path, text) is checked  # the newest tree of the file is the one registered
    LIVE.add(path, text, held)
    served = LIVE.served
    check_source(text, path, settings_for(("QL201",)), ProjectIndex(track_dependents=False))
    assert LIVE.served == served + 1

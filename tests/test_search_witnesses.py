"""A search of the project whose answer one module decides depends on that module alone.

The callers of a method are unknown once another module subclasses its class and takes the
method as a value (ExecuTorch's test_qnn_delegate.py subclasses qualcomm/tests/utils.py's
TestQNN, and hands on `self.get_qdq_module`); a
function is named elsewhere once one module loads its name; a module may be imported once
another module's text holds its name. Whatever the other modules hold, the answer stays
while that module does: it is the check's one dependency for the answer, so a warm `qlint
check FILE` validates one stat, not the project's 3,784. An answer no one module decides
(no subclass, named nowhere) still depends on every module and on the listing: a module
edited or created later that names it refreshes the result.
"""

from __future__ import annotations

import ast
import os

import pytest

from qlint.analysis.context import FileContext
from qlint.analysis.flow import project_search, subclassed_methods
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.config import Overrides, load_settings
from qlint.runner import run_check
from qlint.source import LineIndex
from tests import test_tree_snapshot
from tests.conftest import check_file, rows_of
from tests.test_ql201_method_callers import CAPTURE_ROW, IMPORT, _repo

# A subclass that hands the method on as a value: its calls are none a flow reads (one that
# calls `self.quantize(...)` is read, `test_ql201_subclass_callers`).
SUBCLASS = "\nclass Sub(Builder):\n    def go(self, x):\n        return run(self.quantize, Net().eval(), x)\n"
EVAL_CALLER = "\ndef main(q, x):\n    Builder(q).quantize(Net().eval(), x)\n"
TRAIN_CALLER = "\ndef main(q, x):\n    Builder(q).quantize(Net(), x)\n"
_PAST = 1_600_000_000
listed_from_now = test_tree_snapshot.listed_from_now  # the fixture, for the snapshot test


def _age(root) -> None:
    """Old stats, so the results cache trusts them (as it does files not touched for a while)."""
    for directory, _, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(directory, name), (_PAST, _PAST))


def _listings(deps) -> list[str]:
    return [d for d in deps if d.startswith("qlint-listing:")]


def _fresh() -> None:
    """What a new process knows: nothing kept of earlier searches."""
    subclassed_methods._SUBCLASSING.clear()
    project_search._NAMED.clear()
    project_search._SCANS.clear()


def _check_builder(root):
    _fresh()
    path = root / "pkg" / "builder.py"
    result = check_file(path, ("QL201",))
    return rows_of(result.diagnostics), result.dependencies


def test_a_subclass_elsewhere_is_the_one_module_the_methods_verdict_depends_on(tmp_path):
    root = _repo(tmp_path, script=SUBCLASS, other=EVAL_CALLER, unrelated="X = 1\n")
    rows, deps = _check_builder(root)
    assert rows == [CAPTURE_ROW]
    assert str(root / "pkg" / "script.py") in deps
    # Neither the other modules nor the listing: no module added or edited can make the
    # subclass's calls readable. (The eval-mode caller may be one too: the first module found
    # to name the method or the checked module, which the verdict asks before it searches.)
    assert str(root / "pkg" / "unrelated.py") not in deps
    assert _listings(deps) == []


def test_without_a_subclass_every_module_and_the_listing_decide(tmp_path):
    root = _repo(tmp_path, other=EVAL_CALLER, unrelated="X = 1\n")
    rows, deps = _check_builder(root)
    assert rows == []
    assert {str(root / "pkg" / "other.py"), str(root / "pkg" / "unrelated.py")} <= deps.keys()
    assert any('["quantize"]' in d for d in _listings(deps))


def _runner(tmp_path, checked):
    settings = load_settings([str(checked)], overrides=Overrides(cache_dir=str(tmp_path / "cache"), select=("QL201",)))

    def run():
        _fresh()
        result = run_check([str(checked)], settings, use_cache=True, jobs=1)
        assert result.all_errors == []
        return result.cached, [d.range.start.row for r in result.results for d in r.diagnostics]

    return run


def test_a_cached_verdict_a_subclass_decided_holds_while_that_module_is_unchanged(tmp_path):
    root = _repo(tmp_path, script=SUBCLASS, other=EVAL_CALLER, unrelated="X = 1\n")
    _age(root)
    run = _runner(tmp_path, root / "pkg" / "builder.py")
    assert run() == (0, [CAPTURE_ROW])
    assert run() == (1, [CAPTURE_ROW])
    # A module edited, a caller added: the subclass still leaves the callers unknown.
    (root / "pkg" / "unrelated.py").write_text(IMPORT + "X = 2\n")
    (root / "pkg" / "late.py").write_text(IMPORT + TRAIN_CALLER)
    assert run() == (1, [CAPTURE_ROW])
    os.remove(root / "pkg" / "late.py")
    # The subclass goes: checked again; every caller left passes an eval-mode model.
    (root / "pkg" / "other.py").write_text(IMPORT + EVAL_CALLER)
    (root / "pkg" / "script.py").write_text(IMPORT + EVAL_CALLER)
    assert run() == (0, [])


def test_a_module_edited_in_place_to_subclass_refreshes_a_quiet_cached_verdict(tmp_path):
    root = _repo(tmp_path, other=EVAL_CALLER, script="X = 1\n")
    _age(root)
    run = _runner(tmp_path, root / "pkg" / "builder.py")
    assert run() == (0, [])
    assert run() == (1, [])
    script = root / "pkg" / "script.py"
    script.write_text(IMPORT + SUBCLASS)
    os.utime(script, (_PAST + 7, _PAST + 7))  # a new stat, its directory's untouched
    assert run() == (0, [CAPTURE_ROW])


def _ctx(path) -> FileContext:
    text = path.read_text()
    return FileContext(
        str(path), text, ast.parse(text), LineIndex(text), None, ProjectIndex(), module_name_for(str(path))
    )


def _asked(path, ask):
    _fresh()
    ctx = _ctx(path)
    answer = ask(ctx)
    return answer, ctx.project.dependencies_of(str(path))


def test_a_name_loaded_elsewhere_depends_on_the_module_loading_it(tmp_path):
    root = _repo(tmp_path, other=EVAL_CALLER, unrelated="X = 1\n")
    path = root / "pkg" / "builder.py"
    named, deps = _asked(path, lambda ctx: project_search.named_elsewhere(ctx, "quantize", str(path)))
    assert named is True
    assert str(root / "pkg" / "other.py") in deps
    assert str(root / "pkg" / "unrelated.py") not in deps and _listings(deps) == []
    # Named nowhere: every module, and the listing.
    named, deps = _asked(path, lambda ctx: project_search.named_elsewhere(ctx, "default", str(path)))
    assert named is False
    assert str(root / "pkg" / "unrelated.py") in deps and _listings(deps) != []


def test_a_module_name_another_text_holds_depends_on_that_module(tmp_path):
    root = _repo(tmp_path, other=EVAL_CALLER, unrelated="X = 1\n")
    path = root / "pkg" / "builder.py"
    held, deps = _asked(path, lambda ctx: project_search.named_in_text(ctx, "builder"))
    assert held is True
    assert str(root / "pkg" / "other.py") in deps
    assert str(root / "pkg" / "unrelated.py") not in deps and _listings(deps) == []
    held, deps = _asked(path, lambda ctx: project_search.named_in_text(ctx, "nowhere_named"))
    assert held is False
    assert str(root / "pkg" / "unrelated.py") in deps and _listings(deps) != []


def _whole_tree_settings(root):
    from qlint.settings import Settings

    return Settings(select=("QL102", "QL201"), root=root, cache_dir=root / ".qlint_cache")


def _warm_rows(root, path, use_cache=True):
    run = run_check([str(path)], _whole_tree_settings(root), use_cache=use_cache, jobs=1)
    assert run.all_errors == []
    return run.cached, [d.range.start.row for r in run.results for d in r.diagnostics]


def test_a_warm_check_takes_the_project_listing_from_the_wrapper_snapshot(tmp_path, monkeypatch, listed_from_now):
    # Quiet (every caller passes an eval-mode model): the verdict depends on every module and
    # on which exist. After a run over the tree, whose wrapper record keeps a snapshot of the
    # tree's stats, a warm check of the module takes the listing from that snapshot (no
    # kept listing read back nor walked), and still sees a caller edited or added later.
    from qlint import cache as cache_module
    from qlint import cache_derived

    root = _repo(tmp_path, other=EVAL_CALLER, **{f"m{i}": "X = 1\n" for i in range(30)})
    _age(root)
    listed_from_now(root)
    path = root / "pkg" / "builder.py"
    run = run_check([str(root)], _whole_tree_settings(root), use_cache=True, jobs=1)
    assert run.all_errors == [] and [d for r in run.results if r.path == str(path) for d in r.diagnostics] == []
    real = cache_module.disk_files
    for module in (cache_module, cache_derived):  # where the cache lists and sets dependencies aside
        monkeypatch.setattr(module, "disk_files", lambda *a: pytest.fail(f"listed: {a[0]}"))
    assert _warm_rows(root, path) == (1, [])
    for module in (cache_module, cache_derived):
        monkeypatch.setattr(module, "disk_files", real)
    other = root / "pkg" / "other.py"
    other.write_text(IMPORT + TRAIN_CALLER.replace("Net()", "Net() "))  # edited in place
    os.utime(other, (_PAST + 7, _PAST + 7))
    assert _warm_rows(root, path) == (0, [CAPTURE_ROW]) == (0, _warm_rows(root, path, use_cache=False)[1])
    other.write_text(IMPORT + EVAL_CALLER)
    (root / "pkg" / "late.py").write_text(IMPORT + TRAIN_CALLER)  # a caller added
    assert _warm_rows(root, path) == (0, [CAPTURE_ROW])

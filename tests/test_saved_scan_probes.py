"""Whether a kept module of the project scan holds a probe's needles and pattern (the front-end
rename search, the normalisers) is kept between runs (`scanned_facts.module_facts(saved=True)`,
`scan_memo`): a later `qlint check -` reads only the kept modules that may answer, and an
edit to one of them (a renaming front end appears, a normaliser disappears) still changes the
verdict through the cache."""

from __future__ import annotations

import os
import textwrap

from qlint.analysis import scan_memo
from qlint.analysis.graphs import project_scan
from tests.test_front_end_renames import FRONT_END, INSERTER, MATCHER
from tests.test_scan_memo import PAST, _new_process, _package, _reads, _use
from tests.test_scan_memo import store as _store

store = _store  # the fixture: a summary store, and each test starts as a new process

# A kept module (it inserts nodes) that renames nothing.
PASS = """
import torch

def add_sigmoid(gm, node):
    return gm.graph.call_function(torch.ops.aten.sigmoid.default, (node,))
"""
# The front end written as a normaliser: it strips overloads, then runs the project's pass.
NORMALISER = """
import torch
from torch._functorch.compile_utils import strip_overloads
from pkg.matcher import count_relus

def run(gm):
    strip_overloads(gm)
    return count_relus(gm)
"""


def _check(path: str, select: tuple[str, ...]) -> list[int]:
    from qlint.analysis.names.project import ProjectIndex
    from qlint.engine import check_source
    from tests.conftest import settings_for

    with open(path) as fh:
        text = fh.read()
    _use(os.path.dirname(path), ProjectIndex.store)
    result = check_source(text, path, settings_for(select), ProjectIndex({path: text}))
    assert not result.errors, result.errors
    scan_memo.flush()
    return [d.range.start.row for d in result.diagnostics]


def _edit(path: str, text: str, tick: int) -> None:
    """Rewrite a module as an edit made long enough ago for its new stat to be trusted."""
    with open(path, "w") as fh:
        fh.write(text)
    os.utime(path, ns=(PAST + tick * 10**9, PAST + tick * 10**9))


def test_a_later_run_reads_no_kept_module_known_not_to_rename(tmp_path, store, monkeypatch):
    pkg = _package(tmp_path, inserter=textwrap.dedent(INSERTER), passes=PASS)
    inserter = os.path.join(pkg, "inserter.py")
    assert _check(inserter, ("QL102",)) == [5]
    _new_process()
    opened = _reads(monkeypatch)
    assert _check(inserter, ("QL102",)) == [5]
    # The pass inserts (the scan keeps it) but renames nothing: known from the last run.
    assert "passes.py" not in opened
    # Without the saved answers (the memo's file gone), it is read for the question.
    _new_process()
    store.put_scan(str(tmp_path), {"questions": [], "files": {}, "dirs": {}})
    store.put_scan(pkg, {"questions": [], "files": {}, "dirs": {}})
    opened.clear()
    assert _check(inserter, ("QL102",)) == [5]
    assert "passes.py" in opened


def test_a_front_end_written_later_into_a_kept_module_quiets_the_matcher(tmp_path, store):
    pkg = _package(tmp_path, matcher=textwrap.dedent(MATCHER), passes=PASS)
    matcher = os.path.join(pkg, "matcher.py")
    assert _check(matcher, ("QL101",)) == [5]
    # The kept module becomes a renaming front end: its stat changes, its old answer is not used.
    _edit(os.path.join(pkg, "passes.py"), textwrap.dedent(FRONT_END), 10)
    _new_process()
    assert _check(matcher, ("QL101",)) == []
    # And back: the module renames nothing again, and the matcher is reported again.
    _edit(os.path.join(pkg, "passes.py"), PASS, 20)
    _new_process()
    assert _check(matcher, ("QL101",)) == [5]


def test_an_insertion_is_judged_by_the_front_end_through_the_cache(tmp_path, store):
    pkg = _package(tmp_path, inserter=textwrap.dedent(INSERTER), frontend=textwrap.dedent(FRONT_END))
    inserter = os.path.join(pkg, "inserter.py")
    assert _check(inserter, ("QL102",)) == []
    _new_process()
    assert _check(inserter, ("QL102",)) == []  # the front end's answer, from the saved memo
    _edit(os.path.join(pkg, "frontend.py"), PASS, 10)
    _new_process()
    assert _check(inserter, ("QL102",)) == [5]


def test_a_normaliser_is_found_again_after_the_memo_knew_its_module_did_not_normalise(tmp_path, store):
    pkg = _package(tmp_path, matcher=textwrap.dedent(MATCHER), runner=PASS)
    matcher = os.path.join(pkg, "matcher.py")
    assert _check(matcher, ("QL101",)) == [5]
    # The memo now says the kept module `runner` does not normalise; it is edited into one
    # that strips overloads before calling the matcher.
    _edit(os.path.join(pkg, "runner.py"), NORMALISER + PASS, 10)
    _new_process()
    assert _check(matcher, ("QL101",)) == []
    _edit(os.path.join(pkg, "runner.py"), PASS, 20)
    _new_process()
    assert _check(matcher, ("QL101",)) == [5]


def test_the_questions_name_the_probe_and_a_pattern_that_cannot_be_named_is_not_saved():
    import re

    from qlint.analysis.graphs.packet_renames import LOOKUP

    assert project_scan.probe_question(("a", "b"), None) == "project-facts:a,b:"
    assert project_scan.probe_question(("a",), re.compile("x+", re.I)) == f"project-facts:a:x+/{int(re.I | re.U)}"
    assert project_scan.probe_question(("getattr",), LOOKUP).startswith("project-facts:getattr:rename-text:")
    assert project_scan.probe_question(("a",), object()) is None


def test_a_big_project_is_answered_in_one_pass_as_module_by_module(tmp_path, store, monkeypatch):
    # 70 modules that neither insert nor normalise, two passes that insert and one normaliser:
    # past `_BATCH` modules the saved answers are read in one pass (`known_sets`).
    quiet = {f"m{i}": f"def f{i}(x):\n    return x + {i}\n" for i in range(70)}
    pkg = _package(tmp_path, inserter=textwrap.dedent(INSERTER), passes=PASS, runner=NORMALISER, **quiet)
    inserter = os.path.join(pkg, "inserter.py")
    first = _check(inserter, ("QL102",))
    kept = dict(project_scan._PROJECTS[pkg].files)
    assert sum(text is not None for _, text in kept.values()) == 3  # inserter, passes, runner

    def files_after_a_new_run(batch: int) -> dict:
        _new_process()
        monkeypatch.setattr(project_scan, "_BATCH", batch)
        asked: list[str] = []
        real = scan_memo.answers
        monkeypatch.setattr(scan_memo, "answers", lambda path, *a: asked.append(path) or real(path, *a))
        assert _check(inserter, ("QL102",)) == first
        monkeypatch.setattr(scan_memo, "answers", real)
        files = project_scan._PROJECTS[pkg].files
        return {p: (k, "read" if t is project_scan.UNREAD or t else None) for p, (k, t) in files.items()}, asked

    batched, asked_batched = files_after_a_new_run(64)
    one_by_one, asked_one_by_one = files_after_a_new_run(10**6)
    assert batched == one_by_one
    assert sum(v[1] == "read" for v in batched.values()) == 3
    quiet_paths = {os.path.join(pkg, f"{name}.py") for name in quiet}
    assert quiet_paths <= set(asked_one_by_one)
    assert not quiet_paths & set(asked_batched)


def test_a_front_end_written_into_a_kept_module_reaches_the_cached_cli_check(tmp_path):
    """Real processes sharing one `--cache-dir`, as pre-commit's `qlint check FILE` and an
    editor's `--stdin-filename` after a whole-tree run: the kept module's saved answer (it
    renames nothing) is not used once it changes, saved as an editor leaves it (stat not
    trusted yet) or as a checkout leaves it (an old stat)."""
    from tests.conftest import old_file, old_package
    from tests.test_edited_agrees import _buffer, _file, _qlint, _rows

    (tmp_path / ".git").mkdir()
    old_package(tmp_path, matcher=textwrap.dedent(MATCHER), passes=PASS)
    _qlint(tmp_path, "--cache-dir", "cache", "pkg")
    matcher = (tmp_path / "pkg" / "matcher.py").read_text()
    assert _rows(_file(tmp_path, "matcher", cached=True)) == [(5, "QL101")]
    assert _rows(_buffer(tmp_path, "matcher", matcher, cached=True)) == [(5, "QL101")]
    path = tmp_path / "pkg" / "passes.py"
    for write in (path.write_text, lambda t: old_file(path, t)):
        write(textwrap.dedent(FRONT_END))
        assert _rows(_file(tmp_path, "matcher", cached=False)) == []
        assert _rows(_file(tmp_path, "matcher", cached=True)) == []
        assert _rows(_buffer(tmp_path, "matcher", matcher, cached=True)) == []
        write(PASS)
        assert _rows(_file(tmp_path, "matcher", cached=True)) == [(5, "QL101")]
        assert _rows(_buffer(tmp_path, "matcher", matcher, cached=True)) == [(5, "QL101")]

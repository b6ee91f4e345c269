"""`project_texts.texts_spelling` within one check: a scan run to its end keeps which modules
spell each name, and a later scan of names all asked already reads only what it yields from
that (torch: QL102 asked a pass module's functions one by one and all together, QL101 thrice
whether one private function is named elsewhere, each a read of 2,285 modules). The answers
are a fresh scan's."""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import project_texts
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.optable import load_op_table
from qlint.source import LineIndex
from tests.conftest import write_package

_MODULES = {
    "checked": "def helper(gm):\n    return gm\n",
    "a": "from pkg.checked import helper\nhelper(None)\n",
    "b": "# names other_helper, not helper_x\nother = 1\n",
    "c": "def other():\n    return 'helper'\n",
    "d": "nothing = 0\n",
}


def _check(tmp_path) -> FileContext:
    pkg = write_package(tmp_path, "pkg", **_MODULES)
    path = str(pkg / "checked.py")
    text = _MODULES["checked"]
    return FileContext(
        path, text, ast.parse(text), LineIndex(text), load_op_table(), ProjectIndex(), module_name_for(path)
    )


def _found(ctx, names) -> list[tuple[str, str, list[str]]]:
    return [(p.rpartition("/")[2], text, spelled) for p, text, spelled in project_texts.texts_spelling(ctx, names)]


def test_a_name_scanned_again_reads_nothing(tmp_path, scan_reads):
    ctx = _check(tmp_path)
    first = _found(ctx, ("helper",))
    assert [f[0] for f in first] == ["a.py", "c.py"]
    scanned = len(scan_reads)
    assert scanned >= 4
    assert _found(ctx, ("helper",)) == first
    assert len(scan_reads) == scanned
    # A fresh check scans again, and finds the same.
    assert _found(_check(tmp_path), ("helper",)) == first
    assert len(scan_reads) == 2 * scanned


def test_names_asked_together_answer_each_alone_after(tmp_path, scan_reads):
    ctx = _check(tmp_path)
    together = _found(ctx, ("other", "helper"))
    assert [(f[0], f[2]) for f in together] == [
        ("a.py", ["helper"]),
        ("b.py", ["other"]),
        ("c.py", ["other", "helper"]),
    ]
    scanned = len(scan_reads)
    assert _found(ctx, ("helper", "other")) == [(p, t, s[::-1]) for p, t, s in together]
    assert _found(ctx, ("other",)) == [("b.py", _MODULES["b"], ["other"]), ("c.py", _MODULES["c"], ["other"])]
    assert len(scan_reads) == scanned
    # A name not asked yet is a scan of its own, with the others.
    assert [f[0] for f in _found(ctx, ("other", "nothing"))] == ["b.py", "c.py", "d.py"]
    assert len(scan_reads) > scanned


def test_a_scan_stopped_early_keeps_nothing(tmp_path, scan_reads):
    ctx = _check(tmp_path)
    assert next(project_texts.texts_naming(ctx, "helper"))[0].endswith("a.py")
    stopped = len(scan_reads)
    assert [f[0] for f in _found(ctx, ("helper",))] == ["a.py", "c.py"]
    assert len(scan_reads) > stopped


def test_a_scan_with_a_question_answers_a_plain_one_not_another_with_a_question(tmp_path, scan_reads):
    # The modules a scan with a question skips are known not to spell the name: its answers
    # are whole. A scan with a question scan_reads again, noting each module's answer for later runs.
    ctx = _check(tmp_path)
    asked = list(project_texts.texts_spelling(ctx, ("helper",), question="test-spelling:"))
    scanned = len(scan_reads)
    assert [p.rpartition("/")[2] for p, _, _ in asked] == ["a.py", "c.py"]
    assert _found(ctx, ("helper",)) == [(p.rpartition("/")[2], t, s) for p, t, s in asked]
    assert len(scan_reads) == scanned
    assert list(project_texts.texts_spelling(ctx, ("helper",), question="test-spelling:")) == asked
    assert len(scan_reads) > scanned


def test_other_modules_are_scanned_again(tmp_path, scan_reads, monkeypatch):
    # Answers are taken only for the modules and content keys they were found in.
    ctx = _check(tmp_path)
    _found(ctx, ("helper",))
    scanned = len(scan_reads)
    real = project_texts.project_modules
    monkeypatch.setattr(project_texts, "project_modules", lambda *a: [m for m in real(*a) if not m[0].endswith("c.py")])
    assert [f[0] for f in _found(ctx, ("helper",))] == ["a.py"]
    assert len(scan_reads) > scanned


def test_whether_a_name_is_spelled_elsewhere_is_asked_once_per_check(tmp_path, scan_reads):
    # QL101 and QL102 ask it of a pass's name (`stripped_later.named_elsewhere`): a scan up to
    # the first module spelling it, or of the whole project.
    from qlint.analysis.graphs.stripped_later import named_elsewhere

    ctx = _check(tmp_path)
    assert named_elsewhere(ctx, "helper")
    assert not named_elsewhere(ctx, "absent_name")
    scanned = len(scan_reads)
    assert named_elsewhere(ctx, "helper")
    assert not named_elsewhere(ctx, "absent_name")
    assert len(scan_reads) == scanned
    fresh = _check(tmp_path)
    assert named_elsewhere(fresh, "helper") and not named_elsewhere(fresh, "absent_name")
    assert len(scan_reads) == 2 * scanned

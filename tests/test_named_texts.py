"""Dead code's "another module names it" (`named_texts.spelled_elsewhere`): the module found
spelling the name answers alone while it keeps its content, in an editor's next check and in
a new process (`kept_answers`), without the project being read again; once it changes, the
project is searched again and the answer follows the text (a helper nobody names any more is
dead: its finding goes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qlint.analysis.graphs import kept_answers, named_texts, project_scan
from qlint.analysis.names import content_keys
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import check_file, kept_store, old_file, rows_of, settings_for
from tests.test_dead_code import CONVERT_ROW, _helper

CALLER = "from utils import dynamic_quant\n\n\ndef test_it():\n    dynamic_quant(1, 2, 3)\n"
# The same size as CALLER: only the name differs (a stat with the same size and another time).
NO_CALLER = "from utils import dynamic_fuzz\n\n\ndef test_it():\n    dynamic_fuzz(1, 2, 3)\n"
SELECT = ("QL204",)


def _repo(root: Path) -> Path:
    """A repository whose tests/utils.py holds a helper (QL204 at CONVERT_ROW) that
    tests/test_quant.py calls, among modules that do not name it."""
    (root / ".git").mkdir()
    (root / "tests").mkdir()
    for i in range(5):
        old_file(root / f"lib_{i}.py", f"VALUE_{i} = {i}\n")
    old_file(root / "tests" / "test_quant.py", CALLER)
    return old_file(root / "tests" / "utils.py", _helper("dynamic_quant"))


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    """The modules the project search reads for a name (`project_scan.text_holding`)."""
    seen: list[str] = []
    holding = project_scan.text_holding

    def counted(project, path, key, needles):
        seen.append(path)
        return holding(project, path, key, needles)

    monkeypatch.setattr(project_scan, "text_holding", counted)
    return seen


def _new_process() -> None:
    named_texts._SPELLED.clear()
    content_keys._DIGESTS.clear()
    kept_answers.forget()


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from kept_store(tmp_path, monkeypatch, _new_process)


def _rewrite(path: Path, text: str) -> None:
    before = os.stat(path).st_mtime_ns
    old_file(path, text)
    os.utime(path, ns=(before - 10**9, before - 10**9))  # another stat, still an old one


def test_an_editors_next_check_reads_no_module_for_the_name(tmp_path, reads):
    utils = _repo(tmp_path)
    project = ProjectIndex()
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == [CONVERT_ROW]
    assert reads
    reads.clear()
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == [CONVERT_ROW]
    assert reads == []


def test_the_name_gone_from_the_module_found_makes_the_helper_dead(tmp_path, reads):
    utils = _repo(tmp_path)
    project = ProjectIndex()
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == [CONVERT_ROW]
    reads.clear()
    _rewrite(tmp_path / "tests" / "test_quant.py", NO_CALLER)
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == []
    assert str(tmp_path / "tests" / "test_quant.py") in reads


def test_the_name_moved_to_another_module_is_found_there(tmp_path, reads):
    utils = _repo(tmp_path)
    project = ProjectIndex()
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == [CONVERT_ROW]
    _rewrite(tmp_path / "tests" / "test_quant.py", NO_CALLER)
    old_file(tmp_path / "lib_3.py", "from tests.utils import dynamic_quant\n")
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == [CONVERT_ROW]


def test_a_new_process_takes_the_module_an_earlier_run_found(tmp_path, store, reads):
    utils = _repo(tmp_path)
    assert rows_of(check_file(utils, SELECT).diagnostics) == [CONVERT_ROW]
    kept_answers.flush()
    _new_process()
    reads.clear()
    assert rows_of(check_file(utils, SELECT).diagnostics) == [CONVERT_ROW]
    assert reads == []


def test_a_new_process_searches_again_once_that_module_changed(tmp_path, store, reads):
    utils = _repo(tmp_path)
    assert rows_of(check_file(utils, SELECT).diagnostics) == [CONVERT_ROW]
    kept_answers.flush()
    _new_process()
    _rewrite(tmp_path / "tests" / "test_quant.py", NO_CALLER)
    assert rows_of(check_file(utils, SELECT).diagnostics) == []


def test_the_module_found_is_not_its_own_caller_when_checked(tmp_path, reads):
    """The name found in test_quant.py, whose buffer (the file unchanged on disk) then defines
    `dynamic_quant` uncalled: its own text is not searched, the other module that spells the
    name is (utils.py, while it does)."""
    utils = _repo(tmp_path)
    project = ProjectIndex()
    assert rows_of(check_file(utils, SELECT, project).diagnostics) == [CONVERT_ROW]
    caller = str(tmp_path / "tests" / "test_quant.py")
    buffer = _helper("dynamic_quant", "\n\ndef test_it():\n    assert True\n")
    result = check_source(buffer, caller, settings_for(SELECT), project)
    assert rows_of(result.diagnostics) == [CONVERT_ROW]
    _rewrite(utils, _helper("static_quant"))
    result = check_source(buffer, caller, settings_for(SELECT), project)
    assert rows_of(result.diagnostics) == []

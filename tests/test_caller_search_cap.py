"""The caller search reads the project's texts only until its answer is decided (issue 13): past
80 modules holding a helper's name its callers are unknown, so the modules after the 81st are
not read, and whether any module holds a name is decided by the first. The answers are the ones
a search that reads every module gives: at the edges of the limit (80 and 81 holders), with the
checked module holding the name (never counted), with an editor's buffer of another module, with
a module that does not parse, and between runs (`scan_memo`)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from qlint.analysis import scan_memo
from qlint.analysis.names import content_keys, project_words
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.project_files import python_files
from tests.test_project_words import _by_reading
from tests.test_ql201_project_callers import EVAL_CALLER, _check, _repo

pytestmark = pytest.mark.usefixtures("fresh_project_words")

LONGER = "def run(m):\n    return quantize_module_v2(m)\n"  # holds the helper's name, calls no helper


def _keys(root, overlay=None) -> dict:
    overlay = overlay or {}
    return {p: content_keys.content_key(overlay, p, True) for p in python_files(str(root), overlay)}


def _holders(root, count: int, **more: str):
    """The repository of `test_ql201_project_callers` with an eval-mode caller and `count`
    more modules holding the helper's name inside a longer one."""
    return _repo(root, a=EVAL_CALLER, **{f"u{i:03}": LONGER for i in range(count)}, **more)


# -- the limit in the words --------------------------------------------------------------------------
def test_a_limited_question_gives_the_first_holders_of_the_full_answer(tmp_path):
    rng = random.Random(45)
    alphabet = ["ab", "a", "b", "_", "1", " ", ".", "\n", "é", "ab_1", "«"]
    for i in range(60):
        (tmp_path / f"m{i:02}.py").write_text("".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30))))
    keys = _keys(tmp_path)
    besides = str(tmp_path / "m07.py")
    known = {str(tmp_path / "m03.py"): True, str(tmp_path / "m11.py"): False}
    for word in ["ab", "a", "b1", "ab_1", "é", "a.b", "absent"]:
        for ask in ({}, {"besides": besides}, {"known": known, "besides": besides}):
            full = project_words.holding({}, keys, word, **ask)
            for limit in (1, 2, 5, len(full), len(full) + 1, 80):
                project_words.forget()  # each limit asked of modules not read yet, and of read ones
                first = project_words.holding({}, keys, word, limit=limit, **ask)
                assert first == full[:limit] == project_words.holding({}, keys, word, limit=limit, **ask), word


def test_a_limited_question_of_the_shared_words_gives_the_first_holders(tmp_path):
    # A parallel run's shared words (`shared_words`) answer module by module too, unread here.
    from tests.test_shared_words import _shared

    rng = random.Random(46)
    alphabet = ["ab", "a", "b", "_", "1", " ", ".", "\n", "é", "ab_1"]
    for i in range(60):
        (tmp_path / f"m{i:02}.py").write_text("".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30))))
    _shared(tmp_path)
    keys = _keys(tmp_path)
    for word in ["ab", "a", "b1", "ab_1", "absent"]:
        full = _by_reading(keys, word)
        for limit in (1, 3, len(full), len(full) + 1):
            project_words.forget()  # asked module by module again, not from one scan of the words
            assert project_words.holding({}, keys, word, limit=limit) == full[:limit], word
    assert project_words.reads() == 0


def test_modules_past_the_holder_that_reaches_the_limit_are_not_read(tmp_path):
    for i in range(100):
        (tmp_path / f"m{i:03}.py").write_text(LONGER)
    keys = _keys(tmp_path)
    assert len(project_words.holding({}, keys, "quantize_module", limit=81)) == 81
    assert project_words.reads() == 81
    assert len(project_words.holding({}, keys, "quantize_module", limit=1)) == 1
    assert project_words.reads() == 81  # read already
    # A word held by none asks every module: the rest are read now, once.
    assert project_words.holding({}, keys, "absent", limit=81) == []
    assert project_words.reads() == 100
    assert len(project_words.holding({}, keys, "quantize_module")) == 100
    assert project_words.reads() == 100


# -- the limit in the caller search --------------------------------------------------------------------
def test_eighty_modules_holding_the_name_are_read_and_eighty_one_are_too_many(tmp_path):
    # 79 modules + the caller: 80 holders besides the checked module, which defines the
    # helper and is never counted. Their code is read: the one caller passes an eval model.
    assert _check(_holders(tmp_path / "80", 79)).diagnostics == []
    # One more holder: the callers are unknown, the finding stays.
    assert len(_check(_holders(tmp_path / "81", 80)).diagnostics) == 1


def test_a_search_past_the_limit_stops_reading_at_the_holder_that_decides(tmp_path):
    root = _holders(tmp_path, 150)
    assert len(_check(root).diagnostics) == 1
    # The scripts come after the package's modules: the caller `a.py`, then u000.. u079 decide.
    assert project_words.reads() < 100


def test_an_unsaved_buffer_counts_as_the_editor_holds_it(tmp_path):
    root = _holders(tmp_path, 79)
    extra = root / "scripts" / "z.py"
    extra.write_text("x = 1\n")
    helper = str(root / "pkg" / "utils" / "export_utils.py")
    # On disk z.py holds nothing: 80 holders, the callers are read.
    assert _check(root, ProjectIndex()).diagnostics == []
    # Its buffer names the helper: 81 holders.
    assert len(_check(root, ProjectIndex({str(extra): LONGER})).diagnostics) == 1
    # A buffer of a holder that no longer holds the name: 80 again, with z.py's on disk being 81.
    extra.write_text(LONGER)
    assert len(_check(root, ProjectIndex()).diagnostics) == 1
    overlay = {str(root / "scripts" / "u000.py"): "x = 1\n", helper: Path(helper).read_text()}
    assert _check(root, ProjectIndex(overlay)).diagnostics == []


def test_a_module_that_does_not_parse_counts_toward_the_limit_and_calls_nothing(tmp_path):
    broken = "def main(m)\n    quantize_module(m)\n"  # a syntax error: calls nothing the search can read
    assert _check(_holders(tmp_path / "80", 78, broken=broken)).diagnostics == []
    assert len(_check(_holders(tmp_path / "81", 79, broken=broken)).diagnostics) == 1


def test_what_a_limited_search_notes_for_the_next_run_is_what_reading_found(tmp_path, monkeypatch):
    # With a store (the CLI's cache), the answers of the modules asked are noted for later runs;
    # the modules past the decisive holder were not asked, and nothing is noted of them.
    from qlint.analysis.flow import project_search

    root = _holders(tmp_path, 150)
    noted: list[tuple[str, str, bool]] = []
    monkeypatch.setattr(scan_memo, "keeps", lambda root: True)
    monkeypatch.setattr(scan_memo, "note", lambda path, question, key, answer: noted.append((path, question, answer)))
    assert len(_check(root).diagnostics) == 1
    question = project_search._LACKS + "quantize_module"
    lacks = {(path, answer) for path, asked, answer in noted if asked == question}
    assert lacks, noted
    for path, answer in lacks:
        assert answer == (b"quantize_module" in Path(path).read_bytes()), path
    scripts = {p for p, _ in lacks if os.sep + "scripts" + os.sep in p}
    assert len(scripts) == 81  # a.py and u000.. u079: the 81st holder decides

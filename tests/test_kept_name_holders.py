"""Whether another module of the project names the one checked (`project_search.named_in_text`,
asked of a module whose methods QL201 follows to their callers): a module an earlier run found
to hold the name answers alone while it keeps its stat, without the project listed and every
module stat'ed (issue 13: ~20 ms of each edited check of ExecuTorch's qualcomm
test_qnn_delegate.py); once it changes, the project is searched again."""

from __future__ import annotations

import os
import time
from types import SimpleNamespace

import pytest

from qlint.analysis import project_files, scan_memo
from qlint.analysis.flow import project_search
from qlint.analysis.names import content_keys
from qlint.analysis.names.project import ProjectIndex
from qlint.summary_cache import SummaryStore
from tests.conftest import old_file

PAST = time.time_ns() - 3600 * 10**9


def _new_process() -> None:
    """Forget what this process learned, as a new `qlint` run starts without it."""
    scan_memo.forget()
    content_keys._DIGESTS.clear()
    project_files._DIRS.clear()
    project_search._SCANS.clear()
    project_search._NOTED.clear()


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setattr(ProjectIndex, "store", SummaryStore(tmp_path / "cache"))
    _new_process()
    yield
    _new_process()


def _repo(tmp_path, **modules: str):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg").mkdir()
    old_file(root / "pkg" / "__init__.py", "")
    old_file(root / "pkg" / "checked.py", "class Runner:\n    def run(self, model):\n        return model\n")
    for name, text in modules.items():
        old_file(root / "pkg" / f"{name}.py", text)
    for directory in (root / "pkg", root):
        os.utime(directory, ns=(PAST, PAST))
    return root


def _named(root, word: str = "checked") -> bool:
    path = str(root / "pkg" / "checked.py")
    ctx = SimpleNamespace(path=path, project=ProjectIndex(), cache={})
    found = project_search.named_in_text(ctx, word)
    scan_memo.flush()
    return found


@pytest.fixture
def listings(monkeypatch) -> list[str]:
    """The roots whose modules are listed and stat'ed from now on."""
    listed: list[str] = []
    real = project_files._listed_keys

    def counting(project, root, recursive):
        listed.append(root)
        return real(project, root, recursive)

    monkeypatch.setattr(project_files, "_listed_keys", counting)
    return listed


UNRELATED = {f"u{i}": "def f():\n    return 1\n" for i in range(4)}


def test_a_module_found_to_name_this_one_answers_alone_while_it_keeps_its_stat(tmp_path, store, listings):
    root = _repo(tmp_path, user="from pkg import checked\n", **UNRELATED)
    assert _named(root)  # the first run searches the project, and keeps what it found
    assert len(listings) == 1
    _new_process()
    assert _named(root)
    assert len(listings) == 1  # the holder it found answers: nothing listed
    # The holder edited since (another stat) to name it no more: searched again, and no other does.
    old_file(root / "pkg" / "user.py", "import os\n")
    os.utime(root / "pkg" / "user.py", ns=(PAST + 10**9, PAST + 10**9))
    _new_process()
    assert not _named(root)
    assert len(listings) == 2


def test_a_name_held_nowhere_is_still_a_search_of_every_module(tmp_path, store, listings):
    # What an earlier run found held nowhere is no holder to ask: the project is listed, and
    # a module created since that names it is found.
    root = _repo(tmp_path, **UNRELATED)
    assert not _named(root)
    _new_process()
    old_file(root / "pkg" / "late.py", "from pkg import checked\n")
    os.utime(root / "pkg", ns=(PAST + 10**9, PAST + 10**9))
    assert _named(root)
    assert len(listings) == 2


def test_a_holder_of_another_word_answers_nothing_for_this_one(tmp_path, store, listings):
    root = _repo(tmp_path, user="from pkg import checked\n", **UNRELATED)
    assert _named(root)
    _new_process()
    assert not _named(root, "Runner")  # `user.py` holds `checked`, not this: every module asked
    assert len(listings) == 2

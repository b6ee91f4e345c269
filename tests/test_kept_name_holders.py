"""Whether another module of the project names the one checked (`project_search.named_in_text`,
asked of a module whose methods QL201 follows to their callers): a module an earlier run found
to hold the name answers alone while it keeps its stat, without the project listed and every
module stat'ed (issue 13: ~20 ms of each edited check of ExecuTorch's qualcomm
test_qnn_delegate.py); once it changes, or leaves the project's listing with its stat kept (a
directory above it moved out and linked back: no listing walks a link), the project is searched
again. So does a module kept as loading a name elsewhere (`named_elsewhere`)."""

from __future__ import annotations

import os
import time
from types import SimpleNamespace

import pytest

from qlint.analysis import module_keys, project_files, scan_memo
from qlint.analysis.flow import project_search
from qlint.analysis.graphs import kept_answers, kept_shards
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
    real = module_keys._listed_keys

    def counting(project, root, recursive):
        listed.append(root)
        return real(project, root, recursive)

    monkeypatch.setattr(module_keys, "_listed_keys", counting)
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


def _linked_back(root, tmp_path, name: str = "sub") -> None:
    """`pkg/<name>` moved out of the project and linked back in its place: its modules keep
    their stats and paths, but the project's listing walks no symbolic link to a directory."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.rename(root / "pkg" / name, outside / name)
    os.symlink(outside / name, root / "pkg" / name)
    os.utime(root / "pkg", ns=(PAST + 10**9, PAST + 10**9))


def _sub_holder(root, text: str):
    sub = root / "pkg" / "sub"
    sub.mkdir()
    holder = old_file(sub / "user.py", text)
    os.utime(sub, ns=(PAST, PAST))
    return holder


def test_a_holder_that_left_the_listing_answers_no_more(tmp_path, store, listings):
    root = _repo(tmp_path, **UNRELATED)
    holder = _sub_holder(root, "from pkg import checked\n")
    assert _named(root)
    stat = holder.stat()
    _linked_back(root, tmp_path)
    assert (holder.stat().st_mtime_ns, holder.stat().st_size) == (stat.st_mtime_ns, stat.st_size)
    _new_process()
    # The search lists the project: the holder is no module of it now, and no other names it.
    assert not _named(root)
    assert len(listings) == 2


def test_a_holder_whose_directory_was_relisted_still_answers_alone(tmp_path, store, listings):
    # Its directory gains a module (a new stamp, listed again): the holder is still listed,
    # and still answers without the project listed and stat'ed.
    root = _repo(tmp_path, **UNRELATED)
    _sub_holder(root, "from pkg import checked\n")
    assert _named(root)
    old_file(root / "pkg" / "sub" / "late.py", "X = 1\n")
    os.utime(root / "pkg" / "sub", ns=(PAST + 10**9, PAST + 10**9))
    _new_process()
    assert _named(root)
    assert len(listings) == 1


CALLER = "from pkg.checked import helper\n\nhelper(1)\n"


def _named_elsewhere(root, kept) -> bool:
    """`named_elsewhere` as a check of `checked.py` asks it, with what earlier runs kept."""
    path = str(root / "pkg" / "checked.py")
    ctx = SimpleNamespace(path=path, project=ProjectIndex(), cache={})
    kept_answers.use(kept)
    kept_answers.checking(path)
    try:
        found = project_search.named_elsewhere(ctx, "helper", path)
        kept_shards.flush()
        scan_memo.flush()
    finally:
        kept_answers.use(None)
    return found


@pytest.mark.parametrize("moved", [False, True])
def test_a_kept_module_loading_the_name_answers_while_the_listing_names_it(tmp_path, store, listings, moved):
    root = _repo(tmp_path, **UNRELATED)
    _sub_holder(root, CALLER)
    kept = ProjectIndex.store
    assert _named_elsewhere(root, kept) is True
    assert len(listings) == 1
    if moved:
        _linked_back(root, tmp_path)
    _new_process()
    project_search._NAMED.clear()
    kept_answers.forget()
    # Kept (`kept_answers`), the loading module answers alone while it is listed; moved out of
    # the listing, the project is searched, and no listed module loads the name.
    assert _named_elsewhere(root, kept) is (not moved)
    assert len(listings) == 1 + moved


def test_listed_module_agrees_with_the_listing(tmp_path):
    # Every kind of path the listing leaves out (a skipped or hidden directory, a linked one,
    # a file not `.py`, one outside the root) and those it names: `listed_module` says what
    # `disk_files` lists, asking only the directories on the way.
    root = tmp_path / "repo"
    for rel in ("a/b/m.py", "a/n.py", "top.py", "build/x.py", ".hidden/y.py", "a/notes.txt", "real/z.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("X = 1\n")
    os.symlink(root / "real", root / "a" / "linked")
    (tmp_path / "outside.py").write_text("X = 1\n")
    project_files._DIRS.clear()
    listed = set(project_files.disk_files(str(root)))
    asked = [str(p) for p in root.rglob("*") if p.is_file()] + [str(root / "a" / "linked" / "z.py")]
    asked += [str(tmp_path / "outside.py"), str(root / "a" / "gone.py"), str(root) + "x/top.py"]
    for path in asked:
        assert project_search.listed_module(str(root), path) is (path in listed), path
    assert str(root / "a" / "b" / "m.py") in listed and str(root / "real" / "z.py") in listed

"""The objects the project index is composed of (`module_finder`, `module_keys`,
`editor_overlay`, `set_asides`), each asked alone: what it keeps, for how long, and that it
reads the run's settings when asked, not when it was made (a run sets them on the class
after the process's shared index exists)."""

from __future__ import annotations

import os

from qlint.analysis.names import set_asides
from qlint.analysis.names.editor_overlay import EditorOverlay
from qlint.analysis.names.module_finder import ModuleFinder
from qlint.analysis.names.module_keys import ModuleKeys
from qlint.analysis.names.project import ProjectIndex


class _Settings:
    """A run's settings as the index's class holds them."""

    fixed_layout = False
    fixed_content = False
    layouts = 0
    run_keys: dict = {}


def _package(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("")
    return str(tmp_path / "pkg" / "a.py")


def test_a_buffer_opened_or_closed_tells_the_index_lookups_may_differ(tmp_path):
    editor = EditorOverlay()
    editor.watch([str(tmp_path)]).found[("pkg.x", str(tmp_path))] = None
    path = str(tmp_path / "x.py")
    assert editor.set_buffer(path, "X = 1\n") is True  # a file where none was
    assert editor.watched.found == {}
    editor.watched.found[("pkg.x", str(tmp_path))] = path
    assert editor.set_buffer(path, "X = 2\n") is False  # an edit: the module is where it was
    assert editor.watched.found == {("pkg.x", str(tmp_path)): path}
    assert editor.set_buffer(path, None) is True and editor.buffers == {}


def test_an_index_shares_its_buffers_with_its_editor_overlay(tmp_path):
    path = str(tmp_path / "m.py")
    project = ProjectIndex({path: "A = 1\n"})
    project.set_overlay(path, "A = 2\n")
    assert project.overlay is project.editor.buffers
    assert project.text(path) == "A = 2\n"
    assert project.content_key(path) == ("overlay", hash("A = 2\n"))


def test_the_finder_reads_the_layout_setting_when_asked(tmp_path, monkeypatch):
    requester = _package(tmp_path)
    finder = ModuleFinder(EditorOverlay(), _Settings, keep_across_checks=False)
    asked: list[str] = []
    real = ModuleFinder.find
    monkeypatch.setattr(ModuleFinder, "find", lambda self, m, r, p=None: asked.append(m) or real(self, m, r, p))
    for _ in range(2):
        finder.begin_check()
        assert finder.in_check("pkg.b", requester) is None
    assert asked == ["pkg.b", "pkg.b"]  # looked up again at each check
    monkeypatch.setattr(_Settings, "fixed_layout", True)  # a run starts after the finder was made
    finder.forget()  # as `ProjectIndex.fix_layout` tells the shared index's finder
    asked.clear()
    for _ in range(3):
        finder.begin_check()
        assert finder.in_check("pkg.b", requester) is None
    assert asked == ["pkg.b"]  # once for the run


def test_module_keys_are_taken_once_only_while_contents_are_fixed(tmp_path, monkeypatch):
    path = str(tmp_path / "m.py")
    (tmp_path / "m.py").write_text("A = 1\n")
    keys = ModuleKeys(EditorOverlay(), _Settings)
    first = keys.content_key(path)
    os.utime(path, ns=(1, 1))
    assert keys.content_key(path) != first  # stat'ed at each ask
    monkeypatch.setattr(_Settings, "fixed_content", True)
    monkeypatch.setattr(_Settings, "run_keys", {})
    held = keys.content_key(path)
    os.utime(path, ns=(2, 2))
    assert keys.content_key(path) == held and _Settings.run_keys == {path: held}


class _Scope:
    def __init__(self):
        self.let_go_calls = 0

    def let_go(self):
        self.let_go_calls += 1


class _Loaded:
    def __init__(self, summary):
        self.summary = summary


def test_entries_are_set_aside_every_so_many_checks_keeping_their_summaries():
    scope = _Scope()
    entries: dict = {"/old.py": ((None, "d"), scope, _Loaded("old summary")), "/new.py": ((None, "e"), None, None)}
    aside = set_asides.SetAsides(entries)
    aside.last_use.update({"/old.py": 1, "/new.py": set_asides.UNUSED_CHECKS + 1})
    checks = set_asides.UNUSED_CHECKS + set_asides.EVERY
    aside.after(checks - 1)  # not a check it looks at
    assert "/old.py" in entries and aside.count == 0
    aside.after(checks)
    assert "/old.py" not in entries and "/new.py" in entries
    assert aside.summaries == {"/old.py": "old summary"} and scope.let_go_calls == 1
    assert aside.count == 1 and aside.last_use == {"/new.py": set_asides.UNUSED_CHECKS + 1}
    aside.after(checks + set_asides.EVERY)  # nothing unused long enough: not counted
    assert aside.count == 1


def test_a_command_line_index_notes_uses_where_its_set_asides_read_them(tmp_path):
    (tmp_path / "ops.py").write_text("X = 1\n")
    project = ProjectIndex(track_dependents=False)
    project.begin_check()
    project.module_scope("ops", str(tmp_path / "user.py"))
    assert project.set_aside.last_use == {str(tmp_path / "ops.py"): 1}
    assert ProjectIndex().set_aside is None and ProjectIndex().last_use is None

"""Where a module was found is kept from one check to the next while the directories deciding
it are unchanged (`kept_lookups`, issue 13): every change of what a lookup would find (a module
created ahead of the one found, removed, a package directory made, a symbolic link pointed
elsewhere, an editor buffer for a new file) gives the answer a new lookup gives.

Directories are aged (their mtime set an hour back): one modified within the last two seconds
vouches for nothing later (`RACY_NS`) and its answers are never kept.
"""

from __future__ import annotations

import os
import textwrap
import time

import pytest

from qlint.analysis.names.module_finder import ModuleFinder
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import settings_for


def _age(*dirs) -> None:
    past = time.time() - 3600
    for d in dirs:
        for root, _dirs, _files in os.walk(d):
            os.utime(root, (past, past), follow_symlinks=False)


@pytest.fixture
def lookups(monkeypatch):
    """The modules `find_module` really looked for, in order."""
    asked: list[str] = []
    find = ModuleFinder.find

    def counting(self, module, requester, probed=None):
        asked.append(module)
        return find(self, module, requester, probed)

    monkeypatch.setattr(ModuleFinder, "find", counting)
    return asked


def _find(project: ProjectIndex, module: str, requester: str):
    project.begin_check()
    found = project.find_module_in_check(module, requester)
    assert found == ProjectIndex().find_module(module, requester)  # what a fresh lookup finds
    return found


@pytest.fixture
def tree(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "helpers").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers" / "__init__.py").write_text("")
    (pkg / "user.py").write_text("")
    _age(tmp_path)
    return tmp_path


def test_an_unchanged_layout_is_looked_up_once(tree, lookups):
    project = ProjectIndex()
    requester = str(tree / "pkg" / "user.py")
    for _ in range(3):
        assert _find(project, "pkg.helpers", requester) == str(tree / "pkg" / "helpers" / "__init__.py")
        assert _find(project, "pkg.absent", requester) is None
    assert lookups.count("pkg.helpers") == 1 + 3 and lookups.count("pkg.absent") == 1 + 3  # + the fresh ones


def test_a_module_created_ahead_of_the_one_found_then_removed(tree):
    project = ProjectIndex()
    requester = str(tree / "pkg" / "user.py")
    assert _find(project, "pkg.helpers", requester).endswith("__init__.py")
    (tree / "pkg" / "helpers.py").write_text("")
    assert _find(project, "pkg.helpers", requester) == str(tree / "pkg" / "helpers.py")
    _age(tree)
    assert _find(project, "pkg.helpers", requester) == str(tree / "pkg" / "helpers.py")
    (tree / "pkg" / "helpers.py").unlink()
    assert _find(project, "pkg.helpers", requester).endswith("__init__.py")


def test_a_package_directory_made_where_none_was(tree):
    project = ProjectIndex()
    requester = str(tree / "pkg" / "user.py")
    assert _find(project, "pkg.sub.deep.mod", requester) is None
    (tree / "pkg" / "sub" / "deep").mkdir(parents=True)
    _age(tree)  # the directories exist, aged: only the new file below changes a listing
    assert _find(project, "pkg.sub.deep.mod", requester) is None
    (tree / "pkg" / "sub" / "deep" / "mod.py").write_text("")
    assert _find(project, "pkg.sub.deep.mod", requester) == str(tree / "pkg" / "sub" / "deep" / "mod.py")


def test_a_symbolic_link_pointed_elsewhere(tree):
    for name, holds in (("a", True), ("b", False)):
        (tree / name).mkdir()
        if holds:
            (tree / name / "mod.py").write_text("")
    link = tree / "pkg" / "link"
    link.symlink_to(tree / "a", target_is_directory=True)
    _age(tree)
    project = ProjectIndex()
    requester = str(tree / "pkg" / "user.py")
    assert _find(project, "pkg.link.mod", requester) is not None
    link.unlink()
    link.symlink_to(tree / "b", target_is_directory=True)
    os.utime(tree / "pkg", (time.time() - 3600,) * 2)  # as if long ago: the link itself must show
    assert _find(project, "pkg.link.mod", requester) is None


def test_a_recent_directory_is_not_trusted(tmp_path, lookups):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    project = ProjectIndex()
    requester = str(tmp_path / "pkg" / "user.py")
    for _ in range(2):
        project.begin_check()
        assert project.find_module_in_check("pkg.x", requester) is None
    assert lookups.count("pkg.x") == 2


def test_a_buffer_for_a_new_file(tree):
    project = ProjectIndex()
    requester = str(tree / "pkg" / "user.py")
    new = str(tree / "pkg" / "fresh.py")
    assert _find(project, "pkg.fresh", requester) is None
    project.set_overlay(new, "x = 1\n")
    project.begin_check()
    assert project.find_module_in_check("pkg.fresh", requester) == new
    project.set_overlay(new, "x = 2\n")  # an edit of an open buffer keeps what was found
    project.begin_check()
    assert project.find_module_in_check("pkg.fresh", requester) == new
    project.set_overlay(new, None)
    assert _find(project, "pkg.fresh", requester) is None


def test_a_command_line_index_keeps_nothing():
    assert ProjectIndex(track_dependents=False)._finder.kept is None


HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
"""


def test_findings_follow_a_helper_module_created_ahead(tree):
    """QL101's answers about other modules and QL204's summaries see the module created ahead
    of the one found, at the next check of an unchanged buffer and after a keystroke."""
    checked = tree / "pkg" / "checked.py"
    text = HEAD + textwrap.dedent(
        """
        from pkg.helpers import calibrate, is_dq


        def quantize(model, quantizer, x, data):
            prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
            calibrate(prepared, data)
            return convert_pt2e(prepared)


        def match(node):
            return is_dq(node.target)


        def other(x):
            return x
        """
    )
    runs = textwrap.dedent(
        """
        import torch


        def calibrate(model, data):
            for batch in data:
                model(batch)


        def is_dq(target):
            return target == torch.ops.quantized_decomposed.dequantize_per_tensor.default
        """
    )
    prints = runs.replace("model(batch)", "print(batch)")
    prints = prints.replace(".dequantize_per_tensor.default", ".dequantize_per_tensor")
    (tree / "pkg" / "helpers" / "__init__.py").write_text(runs)
    checked.write_text(text)
    _age(tree)
    project = ProjectIndex()

    def findings(buffer):
        path = str(checked)
        kept = check_source(buffer.encode(), path, settings_for(("QL",)), project)
        fresh = check_source(buffer.encode(), path, settings_for(("QL",)), ProjectIndex())
        seen = [(d.code, d.range.start.row) for d in kept.diagnostics]
        assert seen == [(d.code, d.range.start.row) for d in fresh.diagnostics]
        return seen

    before = findings(text)
    (tree / "pkg" / "helpers.py").write_text(prints)
    after = findings(text.replace("return x\n", "return x + 1\n"))
    assert before != after
    (tree / "pkg" / "helpers.py").unlink()
    _age(tree)
    assert findings(text) == before

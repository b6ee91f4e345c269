"""QL101/QL102 facts about other modules (helpers, what the project inserts) follow the
modules as they are now: edited on disk, opened in an editor, or created after a first
check in the same process; the modules read are recorded as dependencies."""

from __future__ import annotations

import os
import textwrap

from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import settings_for, write_package

USER = """
import torch
from .helpers import check

def test(self, m):
    check(self, m, {torch.ops.aten.relu: 1})
    self.checkGraphModuleNodes(m, expected_node_list=[])  # the file prefilter's trigger
"""
FORWARDS = """
def check(case, m, occurrence):
    case.checkGraphModuleNodes(m, expected_node_occurrence=occurrence)
"""
# Longer than FORWARDS, so the stat key changes even within one mtime tick.
DROPS = """
def check(case, m, occurrence):
    case.checkGraphModuleNodes(m, expected_node_occurrence={})  # the argument is not used
"""


def _check(path, project, select=("QL101",)):
    return check_source(path.read_bytes(), str(path), settings_for(select), project)


def _rows(result):
    return [(d.code, d.range.start.row) for d in result.diagnostics]


def test_helper_edited_on_disk_between_two_checks(tmp_path):
    pkg = write_package(tmp_path, "pkg", user=USER, helpers=FORWARDS)
    project = ProjectIndex()
    first = _check(pkg / "user.py", project)
    assert _rows(first) == [("QL101", 6)]
    assert str(pkg / "helpers.py") in first.dependencies
    assert str(pkg / "user.py") in project.dependents(str(pkg / "helpers.py"))
    (pkg / "helpers.py").write_text(DROPS)
    project.update(str(pkg / "helpers.py"), None)  # what a file watcher tells the server
    assert _rows(_check(pkg / "user.py", project)) == []
    # Back again, and in a fresh index of the same process (the shared facts are per content).
    (pkg / "helpers.py").write_text(FORWARDS + "\n")
    assert _rows(_check(pkg / "user.py", ProjectIndex())) == [("QL101", 6)]


def test_helper_edited_in_an_open_buffer(tmp_path):
    pkg = write_package(tmp_path, "pkg", user=USER, helpers=DROPS)
    project = ProjectIndex()
    assert _rows(_check(pkg / "user.py", project)) == []
    dependents = project.update(str(pkg / "helpers.py"), FORWARDS)
    assert str(pkg / "user.py") in dependents
    assert _rows(_check(pkg / "user.py", project)) == [("QL101", 6)]
    project.update(str(pkg / "helpers.py"), None)  # closed unsaved: the disk counts again
    assert _rows(_check(pkg / "user.py", project)) == []


def test_helper_module_created_after_a_first_check(tmp_path):
    pkg = write_package(tmp_path, "pkg", user=USER)
    project = ProjectIndex()
    first = _check(pkg / "user.py", project)
    assert _rows(first) == []
    # Its absence is a dependency: creating it must refresh the result.
    assert first.dependencies.get(str(pkg / "helpers.py")) == ""
    (pkg / "helpers.py").write_text(FORWARDS)
    assert _rows(_check(pkg / "user.py", project)) == [("QL101", 6)]


MATCHER = """
import torch

def count_relus(gm):
    return sum(n.target == torch.ops.aten.relu for n in gm.graph.nodes)
"""
LEGACY_INSERTER = """
import torch
from torch.fx import symbolic_trace

def add_relu(model, node):
    gm = symbolic_trace(model)
    gm.graph.call_function(torch.ops.aten.relu, (node,))
    return gm
"""


def test_project_inserting_the_packet_in_a_module_created_or_edited_later(tmp_path):
    pkg = write_package(tmp_path, "pkg", matcher=MATCHER, other="x = 1\n")
    project = ProjectIndex()
    first = _check(pkg / "matcher.py", project, ("QL1",))
    assert _rows(first) == [("QL101", 5)]
    # Every module the project scan read decides the answer.
    assert str(pkg / "other.py") in first.dependencies
    (pkg / "inserter.py").write_text(textwrap.dedent(LEGACY_INSERTER))
    assert _rows(_check(pkg / "matcher.py", project, ("QL1",))) == []
    # An existing module edited into an inserter (its buffer, unsaved), then back.
    os.remove(pkg / "inserter.py")
    assert _rows(_check(pkg / "matcher.py", project, ("QL1",))) == [("QL101", 5)]
    assert str(pkg / "matcher.py") in project.update(str(pkg / "other.py"), LEGACY_INSERTER)
    assert _rows(_check(pkg / "matcher.py", project, ("QL1",))) == []
    project.update(str(pkg / "other.py"), None)
    assert _rows(_check(pkg / "matcher.py", project, ("QL1",))) == [("QL101", 5)]


def test_helper_of_a_helper_in_a_third_module_edited_on_disk(tmp_path):
    # helpers.check forwards to inner.verify; only inner.py changes, helpers.py's parse stays.
    outer = (
        "from .inner import verify\n\ndef check(case, m, occurrence):\n    verify(case, m, occurrence)\n\n"
        "def no_nodes(case, m):\n    case.checkGraphModuleNodes(m, expected_node_list=[])\n"
    )
    inner = FORWARDS.replace("def check", "def verify")
    pkg = write_package(tmp_path, "pkg", user=USER, helpers=outer, inner=inner)
    project = ProjectIndex()
    first = _check(pkg / "user.py", project)
    assert _rows(first) == [("QL101", 6)]
    assert str(pkg / "inner.py") in first.dependencies
    (pkg / "inner.py").write_text(DROPS.replace("def check", "def verify"))
    project.update(str(pkg / "inner.py"), None)
    assert _rows(_check(pkg / "user.py", project)) == []


SUBCLASS = """
import torch
from .base import Base

class T(Base):
    def test(self, m):
        self.check(m, {torch.ops.aten.relu: 1})
        self.checkGraphModuleNodes(m, expected_node_list=[])  # the file prefilter's trigger
"""


def test_inherited_helper_edited_between_checks_of_two_subclassing_files(tmp_path):
    # The helper methods a base class of another module holds are looked up once per import
    # root, not per file: a second file subclassing it sees the base as it is then.
    forwards = "class Base:\n" + "".join("    " + row + "\n" for row in FORWARDS.replace("case", "self").splitlines())
    drops = forwards.replace("=occurrence)", "={})  # the argument is not used")
    pkg = write_package(tmp_path, "pkg", one=SUBCLASS, two=SUBCLASS, base=drops)
    project = ProjectIndex()
    assert _rows(_check(pkg / "one.py", project)) == []
    (pkg / "base.py").write_text(forwards)
    project.update(str(pkg / "base.py"), None)
    second = _check(pkg / "two.py", project)
    assert _rows(second) == [("QL101", 7)]
    assert str(pkg / "base.py") in second.dependencies
    third = _check(pkg / "one.py", project)
    assert _rows(third) == [("QL101", 7)]
    assert str(pkg / "base.py") in third.dependencies  # reused, still a dependency

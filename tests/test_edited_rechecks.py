"""An editor checks one buffer again and again: what the project scans read of the other
modules is reused while none of them changed, and read again as soon as one did (issue 13).

The reuse is counted, not timed: the scans ask `scan_memo.answers` once per module of the
project and `_read` a module whose content is new; a check reusing the last scan asks neither.
"""

from __future__ import annotations

import os

import pytest

from qlint.analysis import scan_memo
from qlint.analysis.graphs import project_scan
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from qlint.rules import op_spellings, packet_scan
from tests.conftest import settings_for, write_package
from tests.test_ql102_consumers import ADD, PIPELINE, REMOVE

# The consumer matches the op by its overload alone: the packet nodes it is paired with are missed.
OVERLOAD_ONLY = REMOVE.replace("target_op=torch.ops.aten.zeros_like)", "target_op=torch.ops.aten.zeros_like.default)")


@pytest.fixture
def counted(monkeypatch):
    """The modules the scans ask about (per-module questions, reads, digests), by path."""
    asked: list[str] = []
    answers, read = scan_memo.answers, project_scan._read

    def counting_answers(path, key, questions):
        asked.append(path)
        return answers(path, key, questions)

    def counting_read(project, path, key):
        asked.append(path)
        return read(project, path, key)

    digest = ProjectIndex.digest

    def counting_digest(self, path, key=None):  # the dependency each module read records
        asked.append(("digest", path))
        return digest(self, path, key)

    monkeypatch.setattr(scan_memo, "answers", counting_answers)
    monkeypatch.setattr(project_scan, "_read", counting_read)
    monkeypatch.setattr(ProjectIndex, "digest", counting_digest)
    return asked


def _codes(path, project: ProjectIndex, text: str | None = None) -> list[str]:
    with open(path) as fh:
        data = (text if text is not None else fh.read()).encode()
    result = check_source(data, os.path.abspath(path), settings_for(("QL102",)), project)
    assert not result.errors, result.errors
    return [d.code for d in result.diagnostics]


def _package(tmp_path, **modules):
    return write_package(tmp_path, "pkg", **{"add": ADD, "pipeline": PIPELINE.format(between="pass"), **modules})


def test_a_buffer_checked_again_asks_no_other_module_while_none_changed(tmp_path, counted):
    _checked_again_asks_nothing(tmp_path, counted)


def test_checks_of_other_files_do_not_push_out_what_this_check_kept(tmp_path, counted):
    # The memos are bounded. Filled to one below the bound by other files' checks, the
    # entries this buffer's check writes must all outlive it (a check writes more than one).
    from qlint.analysis import module_keys
    from qlint.analysis.flow import project_search
    from qlint.analysis.graphs import dynamo_graph_passes

    memos = (packet_scan._LAST_SCAN, module_keys._LAST_READS, project_search._SCANS, dynamo_graph_passes._LISTED)
    for memo in memos:
        memo.clear()
        for i in range(memo.max_entries - 1):
            memo["elsewhere", i] = None
    _checked_again_asks_nothing(tmp_path, counted)


def _checked_again_asks_nothing(tmp_path, counted):
    pkg = _package(tmp_path, remove=REMOVE)
    add = str(pkg / "add.py")
    project = ProjectIndex()
    assert _codes(add, project) == []
    assert str(pkg / "remove.py") in counted  # the first check reads the project
    counted.clear()
    for _ in range(2):
        assert _codes(add, project) == []
    assert counted == []
    # The buffer itself changed (an edit that keeps the insertion): still nothing else is asked.
    assert _codes(add, project, ADD + "\n\nX = 1\n") == []
    assert counted == []


def test_an_edit_of_the_consumer_on_disk_changes_the_next_check(tmp_path, counted):
    pkg = _package(tmp_path, remove=REMOVE)
    add = str(pkg / "add.py")
    project = ProjectIndex()
    assert _codes(add, project) == []
    counted.clear()
    (pkg / "remove.py").write_text(OVERLOAD_ONLY + "\n")
    assert _codes(add, project) == ["QL102"]
    # Only the module that changed is read again; the others are answered as they were.
    assert str(pkg / "remove.py") in counted and str(pkg / "pipeline.py") in counted
    counted.clear()
    (pkg / "remove.py").write_text(REMOVE)
    assert _codes(add, project) == []


def test_an_unsaved_buffer_of_the_consumer_changes_the_next_check(tmp_path):
    pkg = _package(tmp_path, remove=REMOVE)
    add = str(pkg / "add.py")
    project = ProjectIndex()
    assert _codes(add, project) == []
    project.update(str(pkg / "remove.py"), OVERLOAD_ONLY)
    assert _codes(add, project) == ["QL102"]
    project.update(str(pkg / "remove.py"), None)  # closed unsaved: the file on disk counts again
    assert _codes(add, project) == []


def test_a_new_consumer_module_changes_the_next_check(tmp_path):
    pkg = _package(tmp_path)
    add = str(pkg / "add.py")
    project = ProjectIndex()
    assert _codes(add, project) == ["QL102"]
    (pkg / "remove.py").write_text(REMOVE)
    assert _codes(add, project) == []
    (pkg / "remove.py").unlink()
    assert _codes(add, project) == ["QL102"]


def test_a_command_line_run_keeps_no_scan_for_a_next_check(tmp_path):
    # Each file of a tree is checked once: a list of the project's modules kept per file
    # would only grow the run's memory.
    pkg = _package(tmp_path, remove=REMOVE)
    packet_scan._LAST_SCAN.clear()
    from qlint.analysis import module_keys

    module_keys._LAST_READS.clear()
    project = ProjectIndex(track_dependents=False)
    assert _codes(str(pkg / "add.py"), project) == []
    assert packet_scan._LAST_SCAN == {} and module_keys._LAST_READS == {}
    assert _codes(str(pkg / "add.py"), ProjectIndex()) == []
    assert packet_scan._LAST_SCAN and module_keys._LAST_READS


def test_the_scan_reused_finds_the_same_consumer_modules(tmp_path):
    pkg = _package(tmp_path, remove=REMOVE)
    add = str(pkg / "add.py")
    project = ProjectIndex()
    assert _codes(add, project) == []
    key = (os.path.abspath(add), (op_spellings.PacketSpelling(_zeros_like()).pattern,))
    first = packet_scan._LAST_SCAN[key]
    assert [p for p, _ in next(iter(first[1].values()))] == [str(pkg / "remove.py")]
    assert _codes(add, project) == []
    assert packet_scan._LAST_SCAN[key] is first  # reused, not scanned again


def _zeros_like():
    from qlint.analysis.names.op_refs import OpRef

    return OpRef("aten", "zeros_like", None)


INHERITED = """\
import torch


class Base:
    def insert(self, gm, op):
        return gm.graph.call_function(op, ())

    def other(self, x):
        return x + 1


class Child(Base):
    def run(self, gm):
        self.insert(gm, torch.ops.aten.relu)


class GrandChild(Child):
    def match(self, n):
        return n.target == torch.ops.aten.relu
"""


def test_the_calls_of_an_inherited_method_are_walked_once_per_check(tmp_path, monkeypatch):
    # QL101 and QL102 both ask which methods of the classes a module's classes inherit from
    # forward to their sinks: each method's calls are listed once, for both.
    from qlint.analysis.graphs import own_calls

    walked: list[str] = []
    own_nodes = own_calls.own_nodes

    def counting(owner, **kwargs):
        if kwargs.get("rows") is None:  # a whole body
            walked.append(owner.name)
        return own_nodes(owner, **kwargs)

    monkeypatch.setattr(own_calls, "own_nodes", counting)
    path = tmp_path / "passes.py"
    path.write_text(INHERITED)
    result = check_source(INHERITED.encode(), str(path), settings_for(("QL101", "QL102")), ProjectIndex())
    assert sorted(d.code for d in result.diagnostics) == ["QL101", "QL102"]
    assert walked and len(walked) == len(set(walked))


def test_the_project_scan_asks_no_module_again_while_none_changed(tmp_path, counted):
    # QL101's matcher is right where another module inserts the packet into legacy FX graphs.
    import textwrap

    from tests.test_project_scan_facts import EXPORTED_INSERTER, LEGACY_INSERTER, MATCHER

    inserter = textwrap.dedent(LEGACY_INSERTER).replace("OP", "relu")
    pkg = write_package(tmp_path, "pkg", matcher=textwrap.dedent(MATCHER), inserter=inserter, other="X = 1\n")
    matcher = str(pkg / "matcher.py")
    project = ProjectIndex()

    def rows():
        with open(matcher, "rb") as fh:
            result = check_source(fh.read(), matcher, settings_for(("QL101",)), project)
        return [(d.code, d.range.start.row) for d in result.diagnostics]

    assert rows() == []
    assert str(pkg / "other.py") in counted
    counted.clear()
    assert rows() == []
    assert counted == []
    # An edit into an exported graph (which carries overloads): that module alone is read again.
    (pkg / "inserter.py").write_text(textwrap.dedent(EXPORTED_INSERTER).replace("OP", "relu") + "\n")
    assert rows() == [("QL101", 5)]
    assert str(pkg / "inserter.py") in counted and str(pkg / "other.py") not in counted  # digests aside


def test_a_check_of_a_file_that_parses_never_imports_the_parse_failure_describer():
    # `qlint check -` after an edit pays each module it imports; the describer of syntax
    # errors (nine patterns and a dataclass) is for files that do not parse.
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from qlint.engine import check_source\n"
        "from qlint.settings import Settings\n"
        "check_source(b'from m import prepare_pt2e\\nx = 1\\n', 'a.py', Settings(select=('QL',)))\n"
        "print('qlint.parse_failure' in sys.modules)\n"
        "result = check_source(b'from m import prepare_pt2e\\ndef f(:\\n', 'b.py', Settings(select=('QL',)))\n"
        "print([d.code for d in result.diagnostics], 'qlint.parse_failure' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["False", "['QL001'] True"]

"""A command-line run's project scan keeps no module texts (`project_scan.keeps_texts`): it
reads a module again when a probe not answered yet needs it, and answers as when it kept them.
An editor's index keeps them, for the next keystroke's probes."""

from __future__ import annotations

import textwrap

from qlint.analysis.graphs import project_scan
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import settings_for, write_package
from tests.test_project_scan_facts import EXPORTED_INSERTER, LEGACY_INSERTER, MATCHER

BACKEND = """
from torch._functorch.compile_utils import strip_overloads
from pkg import matcher

def my_backend(gm, example_inputs):
    strip_overloads(gm)
    matcher.count_relus(gm)
    return gm.forward
"""


def _rows(pkg, project, name="matcher"):
    path = pkg / f"{name}.py"
    result = check_source(path.read_bytes(), str(path), settings_for(("QL1",)), project)
    return [(d.code, d.range.start.row) for d in result.diagnostics]


def _texts(tmp_path) -> dict[str, object]:
    """What the scan holds for each module under `tmp_path` that inserts or normalises."""
    return {
        path: text
        for project in project_scan._PROJECTS.values()
        for path, (_, text) in project.files.items()
        if path.startswith(str(tmp_path)) and text is not None
    }


def test_a_command_line_run_keeps_no_texts_an_editor_keeps_them(tmp_path):
    inserter = textwrap.dedent(LEGACY_INSERTER).replace("OP", "relu")
    pkg = write_package(tmp_path, "pkg", matcher=MATCHER, inserter=inserter)
    project = ProjectIndex(track_dependents=False)
    assert _rows(pkg, project) == []  # legacy FX graphs carry the packet the matcher compares with
    held = _texts(tmp_path)
    assert list(held) == [str(pkg / "inserter.py")]
    assert not any(isinstance(t, str) for t in held.values())
    # A probe of another op reads the module again, and finds no insertion of that one.
    (pkg / "matcher.py").write_text(MATCHER.replace("relu", "sigmoid"))
    assert _rows(pkg, project) == [("QL101", 5)]
    assert not any(isinstance(t, str) for t in _texts(tmp_path).values())
    # An editor's index keeps them, for the next keystroke's probes.
    (pkg / "matcher.py").write_text(MATCHER)
    assert _rows(pkg, ProjectIndex()) == []
    assert _texts(tmp_path) == {str(pkg / "inserter.py"): inserter}


def test_a_command_line_run_reports_an_insertion_into_exported_graphs(tmp_path):
    inserter = textwrap.dedent(EXPORTED_INSERTER).replace("OP", "relu")
    pkg = write_package(tmp_path, "pkg", matcher=MATCHER, inserter=inserter)
    assert _rows(pkg, ProjectIndex(track_dependents=False)) == [("QL101", 5)]
    assert not any(isinstance(t, str) for t in _texts(tmp_path).values())


def test_a_command_line_run_reads_a_normaliser_again_for_each_check(tmp_path):
    pkg = write_package(tmp_path, "pkg", matcher=MATCHER, backend=BACKEND)
    project = ProjectIndex(track_dependents=False)
    assert _rows(pkg, project) == []  # the backend strips the graph before the matcher sees it
    assert _rows(pkg, project) == []
    assert not any(isinstance(t, str) for t in _texts(tmp_path).values())
    # Without the strip the matcher sees overloads: reported.
    (pkg / "backend.py").write_text(BACKEND.replace("    strip_overloads(gm)\n", "    overloadpacket = None\n"))
    assert _rows(pkg, project) == [("QL101", 5)]

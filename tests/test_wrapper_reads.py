"""The pass over a project's modules the wrapper index is made from (`wrapper_reads`): on a
large project, cut in two, the first files read by a child forked beside the index's child.
Joined, the two parts are what one pass finds, list for list and in the same order, and so is
the index; what that child could not read, the index's child reads."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from qlint.analysis import forked_call
from qlint.analysis.graphs import wrapper_index, wrapper_reads
from tests.conftest import old_file
from tests.test_ql102_imported_wrappers import GRAPH_UTILS

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="forks its child on Linux only")

# A module naming QL101's sink in a helper (a sink helper), and one calling it (a chain link).
CHECKS = "def check(gm, occ):\n    checkGraphModuleNodes(gm, expected_node_occurrence=occ)\n"
CALLS_CHECK = "from pkg.checks import check as verify\n\n\ndef run(gm):\n    verify(gm, {})\n"
LINK = "from pkg import graph_utils as gu\n\n\ndef add(graph, op):\n    return gu.insert_op(graph, op, ())\n"


def _project(tmp_path: Path) -> tuple[list[str], dict]:
    """Forty modules, and a listing of them (sorted: each kind of module the pass tells apart
    in both halves), as the run's file discovery hands it over."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    old_file(tmp_path / "pyproject.toml", "")
    texts = {"__init__": "from .graph_utils import insert_op as put\n"}
    for half in ("a", "z"):
        texts[f"{half}_graph_utils"] = GRAPH_UTILS
        texts[f"{half}_checks"] = CHECKS
        texts[f"{half}_calls_check"] = CALLS_CHECK
        texts[f"{half}_link"] = LINK
        texts[f"{half}_latin"] = "# -*- coding: ascii -*-\nx = 'é'\ncall_function\n"  # not decoded
    texts["graph_utils"] = GRAPH_UTILS
    texts["checks"] = CHECKS
    texts.update(
        {f"m{i:02}": f"import os as o{i}\n\n\ndef f{i}(x):\n    return o{i}.path.join(x)\n" for i in range(27)}
    )
    for name, text in texts.items():
        old_file(pkg / f"{name}.py", text)
    files = sorted(str(pkg / f"{name}.py") for name in texts)
    return files, {str(tmp_path): ((str(pkg),), (), ()), str(pkg): ((), tuple(files), ())}


def _logged(monkeypatch, log: Path) -> None:
    """Each `Reads.read` writes down which process read which files (the other child's too)."""
    real = wrapper_reads.Reads.read

    def read(self, paths):
        with open(log, "a") as fh:
            fh.write(json.dumps([os.getpid(), list(paths)]) + "\n")
        return real(self, paths)

    monkeypatch.setattr(wrapper_reads.Reads, "read", read)


def _readers(log: Path) -> list[tuple[bool, list[str]]]:
    """(read here, the files) of each `Reads.read` logged, and the log emptied."""
    rows = [json.loads(row) for row in log.read_text().splitlines()]
    log.unlink()
    return sorted((pid == os.getpid(), paths) for pid, paths in rows)


def test_a_large_project_is_read_by_two_processes_as_one_pass_reads_it(tmp_path, monkeypatch):
    files, listed = _project(tmp_path)
    assert len(files) == 40
    monkeypatch.setattr(wrapper_reads, "_APART_FILES", 40)
    log = tmp_path / "reads.log"
    _logged(monkeypatch, log)
    part = wrapper_reads.FirstPart()
    try:
        part.start(str(tmp_path), listed)  # as the run's process: forks the reader
        apart = wrapper_reads.read(files, part)  # as the index's child
    finally:
        part.stop()
    # The other child read the first half, this process the rest.
    assert _readers(log) == [(False, files[:20]), (True, files[20:])]
    one = wrapper_reads.read(files)  # as a project under the threshold, or read in-process
    assert _readers(log) == [(True, files)]
    assert list(apart.stats.items()) == list(one.stats.items())
    assert [m.state() for m in apart.sinks] == [m.state() for m in one.sinks]
    assert [m.state() for m in apart.ql101] == [m.state() for m in one.ql101]
    assert apart.renames == one.renames
    assert (apart.chains.paths, apart.chains.rows) == (one.chains.paths, one.chains.rows)
    assert (apart.ql101_chains.paths, apart.ql101_chains.rows) == (one.ql101_chains.paths, one.ql101_chains.rows)
    # A module's import words are one set in both chains, as one pass keeps them.
    rows = dict(zip(apart.chains.paths, apart.chains.rows, strict=True))
    pairs = zip(apart.ql101_chains.paths, apart.ql101_chains.rows, strict=True)
    assert all(rows[p] is row for p, row in pairs if p in rows)
    # What each half found is in it: the inserting and the sink modules of both halves.
    assert os.path.basename(files[19]) == "m11.py"
    assert [os.path.basename(m.path) for m in apart.sinks] == ["a_graph_utils.py", "graph_utils.py", "z_graph_utils.py"]
    assert [os.path.basename(m.path) for m in apart.ql101] == ["a_checks.py", "checks.py", "z_checks.py"]
    assert ("check", "verify") in apart.renames


@pytest.mark.parametrize("reader", ["failed", "other files", "none", "one core"])
def test_what_the_other_child_could_not_read_is_read_by_the_index_child(tmp_path, monkeypatch, reader):
    files, listed = _project(tmp_path)
    monkeypatch.setattr(wrapper_reads, "_APART_FILES", 40)
    log = tmp_path / "reads.log"
    _logged(monkeypatch, log)
    if reader == "failed":
        monkeypatch.setattr(wrapper_reads.Reads, "fields", lambda self: os._exit(1))
    elif reader == "other files":  # the listing changed between the two processes' listings
        listed[str(tmp_path / "pkg")] = ((), tuple(files[1:]), ())
    elif reader == "none":
        monkeypatch.setattr(forked_call, "spawn", lambda *args: None)  # no fork
    else:  # nothing to gain: no fork
        monkeypatch.setattr(wrapper_reads, "_cores", lambda: 1)
        monkeypatch.setattr(forked_call, "spawn", lambda *args: pytest.fail("forked on one core"))
    part = wrapper_reads.FirstPart()
    try:
        part.start(str(tmp_path), listed)
        apart = wrapper_reads.read(files, part)
    finally:
        part.stop()
    here = [paths for is_here, paths in _readers(log) if is_here]
    assert here == [files[:20], files[20:]]
    one = wrapper_reads.read(files)
    assert list(apart.stats.items()) == list(one.stats.items()) and apart.renames == one.renames
    assert [m.state() for m in apart.sinks] == [m.state() for m in one.sinks]
    assert (apart.chains.paths, apart.chains.rows) == (one.chains.paths, one.chains.rows)


def test_the_index_made_from_two_processes_reads_is_the_index_of_one(tmp_path, monkeypatch):
    """A run's index (`_built_apart`): the two children are forked, and both reaped."""
    _project(tmp_path)
    one = wrapper_index.build(str(tmp_path))
    monkeypatch.setattr(wrapper_reads, "_APART_FILES", 2)
    log = tmp_path / "reads.log"
    _logged(monkeypatch, log)
    forked: list[int] = []
    real_spawn = forked_call.spawn
    monkeypatch.setattr(forked_call, "spawn", lambda *args: forked.append(real_spawn(*args)) or forked[-1])
    apart = wrapper_index._built_apart(str(tmp_path))
    assert [is_here for is_here, _ in _readers(log)] == [False, False]  # both elsewhere
    assert {"insert_op", "put", "add"} <= one.functions and {"check", "verify", "run"} <= one.sink_functions
    assert (apart.functions, apart.classes, apart.digest) == (one.functions, one.classes, one.digest)
    assert (apart.sink_functions, apart.sink_classes) == (one.sink_functions, one.sink_classes)
    with pytest.raises(ChildProcessError):
        os.waitpid(forked[0], os.WNOHANG)  # reaped already


def test_a_module_text_revived_from_its_state_answers_as_the_one_read():
    from qlint.analysis.graphs.module_text import ModuleText
    from qlint.analysis.graphs.sink_index import sink_module_text
    from qlint.analysis.graphs.wrapper_candidates import candidates

    read = [ModuleText(GRAPH_UTILS, "pkg/graph_utils.py"), sink_module_text(CHECKS, "pkg/checks.py")]
    revived = [ModuleText.revived(m.state()) for m in read]
    assert [m.state() for m in revived] == [m.state() for m in read]
    for renames in ([], [("insert_op", "ins"), ("check", "verify")]):
        assert candidates(revived, renames) == candidates(read, renames)

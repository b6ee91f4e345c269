"""A check's model-flow objects are freed when the check ends, not by the cyclic collector:
the interpreter owns its call semantics (which own the builds, callback and result trackers),
and the checked module's analysis owns the memo that holds the other modules' analyses. Parts
refer back to their owner weakly, so no cycle keeps a check's trees and flows alive."""

from __future__ import annotations

import gc

from qlint.analysis.names.project import ProjectIndex
from tests.test_shared_flows import HEAD, SCRIPT, _library, _rows


def _cyclic_garbage_of(check) -> int:
    gc.collect()
    gc.disable()
    try:
        check()
        return gc.collect()
    finally:
        gc.enable()


def test_a_check_that_follows_helpers_across_modules_leaves_no_cycles(tmp_path):
    # scripts/a.py -> lib.helpers (build) -> lib.nets (Net): two other modules' analyses.
    root = _library(tmp_path, a=SCRIPT, c=HEAD)
    project = ProjectIndex()
    # Once per repository (not per check): its package map, built by a recursive closure.
    assert _rows(root, "scripts/c.py", project) == []
    rows: list[list[int]] = []
    assert _cyclic_garbage_of(lambda: rows.append(_rows(root, "scripts/a.py", project))) == 0
    assert rows == [[9]]  # the helper was followed: the finding still comes through it


def test_a_second_check_reusing_kept_helper_flows_leaves_no_cycles(tmp_path):
    root = _library(tmp_path, a=SCRIPT, b=SCRIPT)
    project = ProjectIndex()
    assert _rows(root, "scripts/a.py", project) == [9]
    rows: list[list[int]] = []
    assert _cyclic_garbage_of(lambda: rows.append(_rows(root, "scripts/b.py", project))) == 0
    assert rows == [[9]]
